"""The run: engine, the worker split, the cache, workspaces, launch context and suppressions."""

"""Writing to the user's files: fixes and ``--add-noqa``."""

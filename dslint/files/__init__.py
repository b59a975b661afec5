"""Which files a run reads: discovery, .gitignore, repository roots."""

"""Rules that need the whole launch: the script, its environment, and the files it names (DS301-DS312)."""

"""Launch commands found in shell scripts: which launcher, its options, the program and its arguments."""

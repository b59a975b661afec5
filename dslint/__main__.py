import os
import sys

# `python -m dslint` puts the working directory first on sys.path. The repository being linted
# must not shadow dslint's dependencies or register plugins (a *.dist-info directory there would
# be read as an installed distribution), so it is dropped; dslint itself is already imported.
if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from dslint.cli import main

main(prog_name="dslint")

from dslint.cli import main

main(prog_name="dslint")

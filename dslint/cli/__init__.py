"""Command line: ``dslint check``, ``dslint rules``, ``dslint rule``; ``dslint PATHS`` means check.

Parsed with argparse (the standard library's): click cost 14 ms of a 90 ms pre-commit run to
import. Every command builds only its own parser.
"""

from __future__ import annotations

import os
import sys

from dslint import __version__
from dslint.cli.check import check_options, check
from dslint.cli.common import EXIT_CLEAN, EXIT_FINDINGS, echo
from dslint.cli.info import explain_options, rule_options, rules_options, schema_options, explain, list_rules, show_rule, show_schema


DESCRIPTION = "A static linter for LLM training launches: DeepSpeed configs, training YAML, launch scripts."


def main(argv: list[str] | None = None, prog_name: str = "dslint") -> None:
    """Run one command and exit with its status. ``dslint [OPTIONS] PATHS`` is ``dslint check [OPTIONS] PATHS``, as in ruff.

    Without ``argv`` (the process's own command line: the console script, ``python -m dslint``)
    the process ends as soon as the command is done and its output flushed, without the
    interpreter's teardown, which frees every object of the run one by one: 0.9 s of a 3.6 s
    run on 1,000 launch scripts. Callers in a process that goes on pass ``argv``.
    """
    if argv is not None:
        _main(list(argv), prog_name)
        return
    try:
        _main(sys.argv[1:], prog_name)
        code = EXIT_CLEAN
    except SystemExit as exc:
        code = exc.code
    if code is not None and not isinstance(code, int):
        sys.stderr.write(f"{code}\n")
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        code = code or EXIT_FINDINGS
    except OSError:
        pass
    os._exit(code or 0)


def _main(args: list[str], prog_name: str) -> None:
    if args and args[0] in ("-h", "--help"):
        echo(_overview(prog_name))
        sys.exit(EXIT_CLEAN)
    if args and args[0] == "--version":
        echo(f"{prog_name} {__version__}")
        sys.exit(EXIT_CLEAN)
    if not args or args[0] not in COMMANDS:
        args = ["check", *args]
    import argparse  # 1 ms; click took 14

    build, run = COMMANDS[args[0]]
    parser = argparse.ArgumentParser(prog=f"{prog_name} {args[0]}", description=_first_paragraph(run), allow_abbrev=False)
    usage = build(parser)
    if usage:
        parser.usage = f"%(prog)s {usage}"
    options = _parse(parser, args[1:])
    _prepare()
    try:
        run(**vars(options))
    except BrokenPipeError:  # `dslint rules | head`: the reader has gone; say nothing more
        sys.stdout = open(os.devnull, "w")
        sys.exit(EXIT_FINDINGS)
    sys.exit(EXIT_CLEAN)


def _parse(parser, args: list[str]):
    """Options may follow the paths, and after ``--`` every word is a path (``-x.json`` too, as
    the pre-commit hook passes it). argparse's intermixed parsing rejects words after ``--``
    (Python 3.11), so they are added to the paths here."""
    after: list[str] = []
    if "--" in args:
        cut = args.index("--")
        args, after = args[:cut], args[cut + 1 :]
    options = parser.parse_intermixed_args(args)
    if after:
        if not hasattr(options, "paths"):
            parser.error(f"unrecognized arguments: {' '.join(after)}")
        options.paths = [*(options.paths or []), *after]
    return options


def _prepare() -> None:
    import gc

    # A run builds many small objects and keeps most of them to the end: the cyclic collector's
    # passes over them cost a sixth of a large run (benchmarks/run.py). Collect rarely instead.
    gc.freeze()
    gc.set_threshold(50_000, 50, 100)
    for stream in (sys.stdout, sys.stderr):
        # A terminal or pipe whose encoding cannot show a file's characters must not crash the run.
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError, OSError):
            pass


def _overview(prog_name: str) -> str:
    width = max(len(name) for name in COMMANDS)
    lines = [f"usage: {prog_name} [--version] [-h] COMMAND [ARGS]...", f"       {prog_name} [OPTIONS] PATHS... (the same as `{prog_name} check`)", "",
             DESCRIPTION, "", "options:", "  --version   show the version and exit", "  -h, --help  show this message and exit", "", "commands:"]
    lines += [f"  {name:<{width}}  {_first_paragraph(run).splitlines()[0]}" for name, (_, run) in COMMANDS.items()]
    lines += ["", f"`{prog_name} COMMAND --help` describes a command's options."]
    return "\n".join(lines)


def _first_paragraph(function) -> str:
    return (function.__doc__ or "").strip().split("\n\n")[0]


COMMANDS = {
    "check": (check_options, check),
    "explain": (explain_options, explain),
    "rule": (rule_options, show_rule),
    "rules": (rules_options, list_rules),
    "schema": (schema_options, show_schema),
}


if __name__ == "__main__":  # pragma: no cover
    main()

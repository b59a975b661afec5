"""Command line: ``dslint check``, ``dslint rules``, ``dslint rule``; ``dslint PATHS`` means check.

Parsed with argparse (the standard library's): click cost 14 ms of a 90 ms pre-commit run to
import. Every command builds only its own parser.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from dslint import __version__
from dslint.run.progress import Progress as _Progress

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

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
        _echo(_overview(prog_name))
        sys.exit(EXIT_CLEAN)
    if args and args[0] == "--version":
        _echo(f"{prog_name} {__version__}")
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


def _echo(text: str = "", err: bool = False) -> None:
    stream = sys.stderr if err else sys.stdout
    stream.write(text + "\n")
    stream.flush()


def _positive_int(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a valid integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not in the range x>=1")
    return value


def _file_path(text: str) -> str:
    """A file that may not exist yet, but is not a directory."""
    import argparse

    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a directory")
    return text


def _flag_pair(parser, name: str, help: str) -> None:
    """``--name/--no-name``, None when neither is given."""
    dest = name.replace("-", "_")
    parser.add_argument(f"--{name}", dest=dest, action="store_true", default=None, help=help)
    parser.add_argument(f"--no-{name}", dest=dest, action="store_false", default=None, help=f"the opposite of --{name}")


# Formats read by programs are UTF-8 whatever the locale (JSON, SARIF and JUnit say so; a diff
# carries the files' own bytes); the others follow the output stream's encoding.
_UTF8_FORMATS = ("json", "sarif", "junit", "github", "diff")


def _emit(text: str, fmt: str) -> None:
    buffer = getattr(sys.stdout, "buffer", None)
    if fmt in _UTF8_FORMATS and buffer is not None:
        sys.stdout.flush()
        buffer.write(text.encode("utf-8", "surrogateescape"))
        buffer.flush()
    else:
        sys.stdout.write(text)


def _split(values: tuple[str, ...]) -> list[str]:
    out = []
    for value in values:
        out.extend(part.strip() for part in value.split(",") if part.strip())
    return out


def _fail(message: str) -> None:
    _echo(f"dslint: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def _settings(config: str | None, no_config: bool):
    from dslint.config import ConfigError, Settings, load_settings

    try:
        if no_config:
            return Settings()
        if config:
            if not Path(config).is_file():
                _fail(f"{config}: no such configuration file")
            return load_settings(Path(config))
        return load_settings(None, search_from=Path.cwd())
    except ConfigError as exc:
        _fail(str(exc))


def _scopes(config: str | None, no_config: bool, adjust):
    """Settings per folder: the nearest configuration file of each, unless --config or --no-config fix one for all."""
    from dslint.config import Scopes

    settings = _settings(config, no_config)
    adjust(settings)
    if config or no_config:
        return Scopes.fixed(settings)
    return Scopes(settings, adjust=adjust)


def _check_options(parser) -> None:
    add = parser.add_argument
    add("paths", nargs="*", metavar="PATHS")
    add("--format", "--output-format", dest="fmt", choices=["text", "concise", "json", "sarif", "github", "junit"], default=None,
        help="Output format (default: text; github when GITHUB_ACTIONS=true).")
    add("-o", "--output-file", type=_file_path, metavar="FILE", default=None, help="Write the report to this file instead of standard output.")
    add("--statistics", action="store_true", help="Print the number of findings per rule instead of the findings.")
    add("--select", action="append", default=[], metavar="RULES", help="Rules to enable (codes, code prefixes or names; comma-separated).")
    add("--extend-select", action="append", default=[], metavar="RULES", help="Rules to enable in addition to those selected.")
    add("--ignore", action="append", default=[], metavar="RULES", help="Rules to disable (codes, prefixes or names; comma-separated).")
    add("--exit-zero", action="store_true", help="Exit 0 even when problems are found.")
    add("--fail-on", choices=["error", "warning", "info"], default=None, help="Lowest severity that fails the run (default: warning).")
    add("--world-size", type=_positive_int, metavar="N", default=None, help="Data-parallel world size for DeepSpeed configs no launch script reaches.")
    add("--target", choices=["gpu", "npu"], default=None, help="The accelerator the launches run on (default: detected from each script; DS5xx rules run on Ascend NPU launches).")
    add("--config", dest="config_file", type=_file_path, metavar="FILE", default=None, help="Use this configuration file for every file.")
    add("--no-config", action="store_true", help="Ignore configuration files.")
    add("--exclude", action="append", default=[], metavar="GLOBS", help="Globs of files and folders not to walk, instead of the `exclude` setting (comma-separated).")
    add("--extend-exclude", action="append", default=[], metavar="GLOBS", help="Globs to exclude in addition to the `exclude` setting (comma-separated).")
    _flag_pair(parser, "force-exclude", "Apply the exclusions to files named on the command line too (for pre-commit).")
    _flag_pair(parser, "respect-gitignore", "Skip what .gitignore, .git/info/exclude and git's global excludes file ignore (default: on).")
    add("--stdin-filename", metavar="NAME", default=None, help="The file name to report (and classify by) when reading '-'.")
    add("--fix", action="store_true", help="Apply safe fixes (on '-': print the fixed text, and the report on standard error).")
    add("--unsafe-fixes", action="store_true", help="With --fix or --diff, also apply unsafe fixes.")
    add("--diff", action="store_true", help="Print the changes --fix would make and write nothing (exit 1 if any).")
    add("--fix-only", action="store_true", help="Apply fixes and report only what was fixed, not the remaining problems (exit 0).")
    add("--show-fixes", action="store_true", help="List the fixes that were applied.")
    add("--exit-non-zero-on-fix", action="store_true", help="Exit 1 when a fix was applied, even if no problem remains.")
    add("--add-noqa", action="store_true", help="Add a '# dslint: disable=CODE' comment for every finding where the file allows comments.")
    add("-v", "--verbose", action="store_true", help="Also list the files and folders that were skipped, with the reason.")
    add("-q", "--quiet", action="store_true", help="Print the findings and nothing else (no summary, no notes).")
    add("--color", choices=["auto", "always", "never"], default="auto", help="Colour the text output (auto: on a terminal, unless NO_COLOR is set; FORCE_COLOR forces it).")
    add("--device-memory", metavar="SIZE", default=None, help="Memory of one device (e.g. 80GB) for memory-fit; default: from the hardware setting.")
    add("--no-cache", action="store_true", help="Neither read nor write .dslint_cache/ (also DSLINT_NO_CACHE=1).")
    add("--cache-dir", metavar="DIR", default=None, help="Keep the cache in DIR instead of .dslint_cache/ (also DSLINT_CACHE_DIR).")
    add("--show-settings", action="store_true", help="Print the settings that apply to the first path (default: .) and exit.")
    return "[OPTIONS] [PATHS]..."


def check(paths, fmt, output_file, statistics, select, extend_select, ignore, exit_zero, fail_on, world_size, target, config_file, no_config,
          exclude, extend_exclude, force_exclude, respect_gitignore, stdin_filename, fix, unsafe_fixes, diff, fix_only, show_fixes, add_noqa,
          verbose, quiet, color, device_memory=None, no_cache=False, exit_non_zero_on_fix=False, cache_dir=None, show_settings=False):
    """Lint PATHS (files or directories; default: the current directory; '-' reads stdin)."""
    from dslint.config import Setting
    from dslint.diagnostics import Severity
    from dslint.rule import load_rules

    memory = _memory_size(device_memory) if device_memory is not None else None

    def adjust(settings) -> None:
        """The command line, over every configuration file's settings."""
        if select:
            settings.select = _split(select)
        if extend_select:
            settings.extend_select = settings.extend_select + _split(extend_select)
        if ignore:
            settings.ignore = settings.ignore + _split(ignore)
        if fail_on:
            settings.fail_on = Severity.parse(fail_on)
        if world_size is not None:
            settings.world_size = Setting(world_size, "--world-size on the command line")
        if target is not None:
            settings.target = Setting(target, "--target on the command line")
        if memory is not None:
            settings.device_memory = Setting(memory, f"--device-memory {device_memory} on the command line")
        if exclude:
            settings.command_line_exclude = _split(exclude)
        if extend_exclude:
            settings.command_line_extend_exclude = _split(extend_exclude)
        if force_exclude is not None:
            settings.force_exclude = force_exclude
        if respect_gitignore is not None:
            settings.respect_gitignore = respect_gitignore

    rules, plugin_errors = load_rules()
    for error in plugin_errors:
        _echo(f"dslint: warning: plugin '{error.entry_point}' failed to load: {error.message}", err=True)

    paths = list(paths) or ["."]
    if show_settings:
        _show_settings(paths[0], config_file, no_config, adjust)
        return
    ending = _Ending(exit_zero, exit_non_zero_on_fix)
    # A plain check of unchanged files reuses the report of the last identical run (dslint/run/cache.py).
    cached, recording, run_cache = None, None, None
    if not (no_cache or fix or fix_only or diff or add_noqa or fmt == "junit" or "-" in paths):
        from dslint.run.cache import Recorder, RunCache, cache_root

        key = [repr((paths, select, extend_select, ignore, fail_on, world_size, target, config_file, no_config, exclude, extend_exclude,
                     force_exclude, respect_gitignore, stdin_filename, device_memory)),
               ";".join(f"{r.code}:{r.origin}:{r.severity.label}" for r in rules)]
        root = cache_root(configured=cache_dir)
        run_cache = RunCache(root, key)
        cached = run_cache.load()
        if cached is None:
            recording = Recorder(root).__enter__()
    if cached is not None:
        _finish(cached, paths, fmt, output_file, statistics, ending, verbose, quiet, color, show_fixes, None, diff, fix_only)
        return
    try:
        run, outcome = _check(paths, fmt, fix, fix_only, diff, add_noqa, unsafe_fixes, stdin_filename, quiet, rules, plugin_errors,
                              config_file, no_config, adjust, recorded=recording is not None, cache=not no_cache, cache_dir=cache_dir)
    finally:
        if recording is not None:
            recording.__exit__(None, None, None)
    if recording is not None and not run.result.internal_errors:
        run_cache.store(recording, _CachedRun.of(run))
    _finish(run, paths, fmt, output_file, statistics, ending, verbose, quiet, color, show_fixes, outcome, diff, fix_only)


class _CachedRun:
    """What a report needs of a run, kept in the cache: the findings, the counts and the verdict."""

    def __init__(self, result, failing: bool):
        self.result = result
        self._failing = failing

    @classmethod
    def of(cls, run) -> "_CachedRun":
        from dslint.run.engine import RunResult

        result = run.result
        lean = RunResult(diagnostics=result.diagnostics, skipped=result.skipped, plugin_errors=result.plugin_errors, files=result.files)
        return cls(lean, run.failing())

    def failing(self) -> bool:
        return self._failing


def _check(paths, fmt, fix, fix_only, diff, add_noqa, unsafe_fixes, stdin_filename, quiet, rules, plugin_errors, config_file, no_config, adjust,
           recorded=False, cache=True, cache_dir=None):
    """Read the settings, find and lint the files (fixing them when asked): (run, fix outcome)."""
    from dslint.run import workspace

    scopes = _scopes(config_file, no_config, adjust)
    reading_stdin = paths == ["-"]
    fix = fix or fix_only
    _refuse_combinations(paths, reading_stdin, fix, diff, add_noqa)
    found = ([], []) if reading_stdin else _find(paths, scopes)
    _refuse_settings(scopes, rules)

    def lint(overrides=None, *, split=False):
        return workspace.lint(found, scopes, rules, plugin_errors, overrides, split=split, progress=progress, cache=cache, cache_dir=cache_dir)

    progress = _Progress(len(found[0]))
    if add_noqa:
        _add_noqa(lambda overrides: lint(overrides).result, rules)

    progress = _Progress.start(len(found[0]), quiet=quiet)
    try:
        if reading_stdin:
            return _lint_stdin(scopes, stdin_filename, rules, plugin_errors, fix or diff, unsafe_fixes)
        if fix or diff:
            return _lint_fixing(lint, unsafe_fixes, write=fix and not diff)
        # JUnit lists every file read, which a split run does not bring back from its worker; a
        # run recorded for the cache reads everything here, where the recorder sees it
        return lint(split=fmt != "junit" and not recorded), None
    finally:
        progress.stop()


def _show_settings(path: str, config_file, no_config, adjust) -> None:
    """--show-settings: the settings a file at ``path`` is linted with, each with where it came from."""
    from dslint.config import describe

    scopes = _scopes(config_file, no_config, adjust)
    target = Path(path)
    settings = scopes.at(target if target.is_dir() else target.parent)
    _echo(f"Settings for {path}:")
    for line in describe(settings):
        _echo(f"  {line}")


def _refuse_combinations(paths, reading_stdin, fix, diff, add_noqa) -> None:
    if "-" in paths and not reading_stdin:
        _fail("'-' (stdin) cannot be combined with other paths")
    if add_noqa and (reading_stdin or fix or diff):
        _fail("--add-noqa needs files and cannot be combined with --fix or --diff")


def _find(paths, scopes):
    """The files to lint under ``paths`` (workspace.find), or a usage error."""
    from dslint.config import ConfigError
    from dslint.files.discovery import PathError
    from dslint.run import workspace

    try:
        return workspace.find(paths, scopes)
    except (PathError, ConfigError) as exc:
        _fail(str(exc))


def _refuse_settings(scopes, rules) -> None:
    from dslint.run.engine import settings_problems

    problems = [problem for settings in scopes.loaded for problem in settings_problems(settings, rules)]
    if problems:
        _fail("; ".join(dict.fromkeys(problems)))


def _lint_stdin(scopes, stdin_filename, rules, plugin_errors, fixing=False, unsafe_fixes=False):
    """Lint standard input: (run, None); or, fixing, fix it in memory: (run, the fix outcome, whose
    ``stdin_text`` is the text to print, fixed or as it came, as ruff prints it for editors)."""
    from dslint.run import workspace
    from dslint.run.engine import Engine

    settings = scopes.at(Path(stdin_filename).absolute().parent if stdin_filename else Path.cwd())
    engine = Engine(settings, rules=rules, plugin_errors=plugin_errors)
    name, data = stdin_filename or "-", sys.stdin.buffer.read()
    if not fixing:
        result = engine.lint_bytes(name, data)
        return workspace.WorkspaceRun(result, [(settings, result)]), None
    from dslint.fix.apply import fix_paths

    outcome = fix_paths(lambda overrides: engine.lint_bytes(name, overrides.get(name, data)), unsafe_fixes, write=False)
    outcome.stdin_text = outcome.fixed.get(name, data)
    return workspace.WorkspaceRun(outcome.result, [(settings, outcome.result)]), outcome


def _lint_fixing(lint, unsafe_fixes, write):
    """Fix until nothing changes (or only compute the diffs): (the last run, the fix outcome)."""
    from dslint.fix.apply import fix_paths
    from dslint.run import workspace

    runs = []

    def fixing_pass(overrides):
        runs.append(lint(overrides))
        return runs[-1].result

    outcome = fix_paths(fixing_pass, unsafe_fixes, write=write)
    result = outcome.result
    return next((r for r in reversed(runs) if r.result is result), workspace.WorkspaceRun(result, [])), outcome


class _Ending:
    """How the exit status is decided: --exit-zero, --exit-non-zero-on-fix."""

    def __init__(self, exit_zero: bool = False, non_zero_on_fix: bool = False):
        self.exit_zero, self.non_zero_on_fix = exit_zero, non_zero_on_fix

    def status(self, failing: bool, outcome) -> int:
        if self.non_zero_on_fix and outcome is not None and outcome.applied:
            return EXIT_FINDINGS
        if self.exit_zero:
            return EXIT_CLEAN
        return EXIT_FINDINGS if failing else EXIT_CLEAN


def _finish(run, paths, fmt, output_file, statistics, ending, verbose, quiet, color, show_fixes, outcome, diff, fix_only):
    """Report a run and exit with its status."""
    result = run.result
    if diff:
        _finish_diff(result, outcome)
    stdin_text = outcome.stdin_text if outcome is not None else None
    if stdin_text is not None:  # the fixed text is the output; the report goes to standard error
        sys.stdout.flush()
        sys.stdout.buffer.write(stdin_text)
        sys.stdout.flush()
    if fix_only:
        _finish_fix_only(result, outcome, show_fixes, quiet, ending)
    if fmt is None and os.environ.get("GITHUB_ACTIONS") == "true":
        fmt = "github"
    _print_report(result, fmt or "text", output_file, statistics, color, quiet, outcome, show_fixes, to_stderr=stdin_text is not None)
    # A named file that was skipped is worth a note when nothing was checked ("0 files checked"
    # needs a why); in a run that checked files, as pre-commit's runs naming every staged file
    # are, notes about a workflow YAML or package.json would be noise (-v lists them all).
    if verbose or (not quiet and result.files == 0 and _explicit_skips(result, paths)):
        for path, reason in result.skipped:
            if verbose or path in paths:
                _echo(f"dslint: skipped {path}: {reason}", err=True)
    _report_internal(result, outcome)
    if result.internal_errors:
        sys.exit(EXIT_ERROR)
    sys.exit(ending.status(run.failing(), outcome))


def _finish_diff(result, outcome) -> None:
    _emit("".join(outcome.diffs), "diff")
    _report_internal(result, outcome)
    sys.exit(EXIT_ERROR if result.internal_errors else (EXIT_FINDINGS if outcome.diffs else EXIT_CLEAN))


def _finish_fix_only(result, outcome, show_fixes, quiet, ending) -> None:
    if show_fixes:
        _list_fixes(outcome)
    count = len(outcome.applied)
    if not quiet:
        _echo(f"Fixed {count} problem{'s' if count != 1 else ''}." if count else "No fixes applied.",
              err=outcome.stdin_text is not None)
    _report_internal(result, outcome)
    sys.exit(EXIT_ERROR if result.internal_errors else ending.status(False, outcome))


def _list_fixes(outcome) -> None:
    for path, code, title in outcome.applied:
        _echo(f"fixed {path}: {code} {title}", err=outcome.stdin_text is not None)


def _print_report(result, fmt, output_file, statistics, color, quiet, outcome, show_fixes, to_stderr=False) -> None:
    from dslint.report import ReportOptions, render

    options = ReportOptions(color=fmt in ("text", "concise") and _use_color(color, output_file), fixed=len(outcome.applied) if outcome else 0,
                            summary=not quiet)
    if outcome and show_fixes and fmt == "text":
        _list_fixes(outcome)
    report = render(fmt, result, options, statistics=statistics)
    if output_file:
        _write_report(output_file, report, fmt)
    elif to_stderr:
        sys.stderr.write(report)
        sys.stderr.flush()
    else:
        _emit(report, fmt)


def _use_color(choice: str, output_file: str | None) -> bool:
    """--color always/never win; auto colours a terminal, unless NO_COLOR is set; FORCE_COLOR colours anything."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    force = os.environ.get("FORCE_COLOR")
    if force and force.lower() not in ("0", "false", "no"):
        return True
    return output_file is None and sys.stdout.isatty()


def _write_report(output_file: str, report: str, fmt: str) -> None:
    path = Path(output_file)
    try:
        if path.parent and not path.parent.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
        encoding = "utf-8" if fmt in _UTF8_FORMATS else (sys.stdout.encoding or "utf-8")
        path.write_bytes(report.encode(encoding, "surrogateescape" if encoding.lower().replace("-", "") == "utf8" else "backslashreplace"))
    except OSError as exc:
        _fail(f"{output_file}: cannot write the report: {exc.strerror or exc}")


def _add_noqa(lint, rules) -> None:
    """``check --add-noqa``: write suppression comments, report what could not be suppressed."""
    from dslint.fix.noqa import add_noqa

    judges = frozenset(r.code for r in rules if r.target == "suppressions")
    outcome = add_noqa(lint, judges)
    for diagnostic, reason in outcome.skipped:
        line, column = diagnostic.span.source.position(diagnostic.span.start)
        _echo(f"dslint: not suppressed: {diagnostic.path}:{line}:{column}: {diagnostic.code}: {reason}", err=True)
    files = len(outcome.files)
    _echo(f"Added {outcome.added} suppression{'s' if outcome.added != 1 else ''} to {files} file{'s' if files != 1 else ''}.")
    _report_internal(outcome.result, None)
    if outcome.result.internal_errors:
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_FINDINGS if outcome.skipped else EXIT_CLEAN)


def _explicit_skips(result, paths):
    named = set(paths)
    return [path for path, _ in result.skipped if path in named]


def _report_internal(result, outcome) -> None:
    for error in result.internal_errors:
        _echo(f"dslint: internal error in {error.where}: {error.message}", err=True)
    if outcome is not None and not outcome.converged:
        _echo("dslint: internal error: fixes did not converge after 10 passes (a rule's fix keeps changing the file); nothing was written", err=True)
        result.internal_errors.append(object())


def _rules_options(parser) -> None:
    parser.add_argument("--format", dest="fmt", choices=["text", "json", "markdown"], default="text", help="markdown: every rule's full page, as in docs/rules.md.")


RULES_WIDTH = 100  # a line of `dslint rules`; --format json has the whole summaries


def list_rules(fmt):
    """List every rule: code, name, default severity, fixable, summary (cut to 100 columns)."""
    from dslint.rule import load_rules

    rules, errors = load_rules()
    for error in errors:
        _echo(f"dslint: warning: plugin '{error.entry_point}' failed to load: {error.message}", err=True)
    if fmt == "markdown":
        from dslint.docs import render

        sys.stdout.write(render(rules))
        return
    if fmt == "json":
        import json

        rows = [
            {"code": r.code, "name": r.name, "severity": r.severity.label, "fixable": r.fixable, "summary": r.summary, "origin": r.origin}
            for r in rules
        ]
        _echo(json.dumps(rows, indent=2))
        return
    width = max((len(r.name) for r in rules), default=10)
    for r in rules:
        line = f"{r.code:<7} {r.name:<{width}}  {r.severity.label:<7}  {'fix' if r.fixable else '   '}  {r.summary}"
        _echo(line if len(line) <= RULES_WIDTH else line[: RULES_WIDTH - 1] + "…")


def _rule_options(parser) -> None:
    parser.add_argument("code_or_name", metavar="CODE_OR_NAME")


def show_rule(code_or_name):
    """Print the documentation page of one rule."""
    from dslint.rule import load_rules

    rules, _ = load_rules()
    for r in rules:
        if code_or_name.upper() == r.code or code_or_name == r.name:
            _echo(f"# {r.code} {r.name}\n")
            _echo(f"Default severity: {r.severity.label}. Fixable: {'yes' if r.fixable else 'no'}. Registered by: {r.origin}.\n")
            _echo(r.doc)
            return
    _fail(f"no rule named {code_or_name!r} (see `dslint rules`)")


def _memory_size(text: str) -> int:
    from dslint.explain.memory import parse_size

    try:
        return parse_size(text)
    except ValueError as exc:
        _fail(str(exc))


def _explain_options(parser) -> None:
    add = parser.add_argument
    add("paths", nargs="*", metavar="PATHS")
    add("--format", dest="fmt", choices=["text", "json"], default="text", help="text for people, json for programs (docs/explain.md).")
    add("--world-size", type=_positive_int, metavar="N", default=None, help="World size for DeepSpeed configs and training YAML no launch script reaches.")
    add("--samples", type=_positive_int, metavar="N", default=None, help="Training samples, for steps per epoch and in total.")
    add("--params", default=None, help="Parameter count of the model (e.g. 7B, 1.5B, 350M) when its name is not recognised.")
    add("--device-memory", metavar="SIZE", default=None, help="Memory of one device (e.g. 80GB); default: from the hardware setting.")
    add("--config", dest="config_file", type=_file_path, metavar="FILE", default=None, help="Use this configuration file.")
    add("--no-config", action="store_true", help="Ignore configuration files.")
    return "[OPTIONS] [PATHS]..."


def explain(paths, fmt, world_size, samples, params, device_memory, config_file, no_config):
    """Show each launch in PATHS as it will run: batch, steps, precision, ZeRO and memory per device."""
    from dslint.files.discovery import PathError
    from dslint.run.engine import Engine
    from dslint.explain import explain_result, options_from_settings, to_json
    from dslint.evidence.models import parse_count

    settings = _settings(config_file, no_config)
    settings.select = ["DS001"]  # explain reads and links files; it does not lint them
    settings.extend_select, settings.ignore = [], []
    overrides = {"samples": samples}
    if world_size is not None:
        overrides.update(world_size=world_size, world_size_origin="--world-size on the command line")
    if params is not None:
        try:
            overrides["params"] = parse_count(params)
        except ValueError as exc:
            _fail(str(exc))
    if device_memory is not None:
        overrides.update(device_memory=_memory_size(device_memory), device_memory_origin=f"--device-memory {device_memory} on the command line")
    options = options_from_settings(settings, cwd=Path.cwd(), versions=True, **overrides)
    try:
        result = Engine(settings).lint_paths(list(paths) or ["."])
    except PathError as exc:
        _fail(str(exc))
    explanations = explain_result(result, options)
    if fmt == "json":
        import json

        _emit(json.dumps(to_json(explanations), indent=2, ensure_ascii=False) + "\n", "json")
    else:
        from dslint.explain.text import render

        _emit(render(explanations), "text")
    _report_internal(result, None)
    sys.exit(EXIT_ERROR if result.internal_errors else EXIT_CLEAN)


def _schema_options(parser) -> None:
    parser.add_argument("name", nargs="?", metavar="NAME")


def show_schema(name):
    """Print a JSON Schema dslint ships (e.g. `dslint schema deepspeed`); without NAME, list them."""
    from dslint import schemas

    if not name:
        for available in schemas.available():
            _echo(f"{available}  {schemas.schema_path(available)}")
        return
    name = name.removesuffix(".json").removesuffix(".schema")
    path = schemas.schema_path(name)
    if path is None:
        _fail(f"no schema named {name!r} (available: {', '.join(schemas.available()) or 'none'})")
    sys.stdout.flush()
    sys.stdout.buffer.write(path.read_bytes())
    sys.stdout.buffer.flush()


COMMANDS = {
    "check": (_check_options, check),
    "explain": (_explain_options, explain),
    "rule": (_rule_options, show_rule),
    "rules": (_rules_options, list_rules),
    "schema": (_schema_options, show_schema),
}


if __name__ == "__main__":  # pragma: no cover
    main()

"""``dslint check``: find the files, lint (or fix) them, report, and exit with the run's status."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from dslint.cli.common import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, UTF8_FORMATS, echo, emit, fail, file_path, flag_pair, memory_size, positive_int, scopes_for, split_values
from dslint.run.progress import Progress


def check_options(parser) -> None:
    add = parser.add_argument
    add("paths", nargs="*", metavar="PATHS")
    add("--format", "--output-format", dest="fmt", choices=["text", "concise", "json", "sarif", "github", "junit"], default=None,
        help="Output format (default: text; github when GITHUB_ACTIONS=true).")
    add("-o", "--output-file", type=file_path, metavar="FILE", default=None, help="Write the report to this file instead of standard output.")
    add("--statistics", action="store_true", help="Print the number of findings per rule instead of the findings.")
    add("--select", action="append", default=[], metavar="RULES", help="Rules to enable (codes, code prefixes or names; comma-separated).")
    add("--extend-select", action="append", default=[], metavar="RULES", help="Rules to enable in addition to those selected.")
    add("--ignore", action="append", default=[], metavar="RULES", help="Rules to disable (codes, prefixes or names; comma-separated).")
    add("--exit-zero", action="store_true", help="Exit 0 even when problems are found.")
    add("--fail-on", choices=["error", "warning", "info"], default=None, help="Lowest severity that fails the run (default: warning).")
    add("--world-size", type=positive_int, metavar="N", default=None, help="Data-parallel world size for DeepSpeed configs no launch script reaches.")
    add("--target", choices=["gpu", "npu"], default=None, help="The accelerator the launches run on (default: detected from each script; DS5xx rules run on Ascend NPU launches).")
    add("--config", dest="config_file", type=file_path, metavar="FILE", default=None, help="Use this configuration file for every file.")
    add("--no-config", action="store_true", help="Ignore configuration files.")
    add("--exclude", action="append", default=[], metavar="GLOBS", help="Globs of files and folders not to walk, instead of the `exclude` setting (comma-separated).")
    add("--extend-exclude", action="append", default=[], metavar="GLOBS", help="Globs to exclude in addition to the `exclude` setting (comma-separated).")
    flag_pair(parser, "force-exclude", "Apply the exclusions to files named on the command line too (for pre-commit).")
    flag_pair(parser, "respect-gitignore", "Skip what .gitignore, .git/info/exclude and git's global excludes file ignore (default: on).")
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
    from dslint.rule import load_rules

    memory = memory_size(device_memory) if device_memory is not None else None

    def adjust(settings) -> None:
        """The command line, over every configuration file's settings."""
        from dslint.config import Setting  # here: a run replayed from the cache reads no settings
        from dslint.diagnostics import Severity

        if select:
            settings.select = split_values(select)
        if extend_select:
            settings.extend_select = settings.extend_select + split_values(extend_select)
        if ignore:
            settings.ignore = settings.ignore + split_values(ignore)
        if fail_on:
            settings.fail_on = Severity.parse(fail_on)
        if world_size is not None:
            settings.world_size = Setting(world_size, "--world-size on the command line")
        if target is not None:
            settings.target = Setting(target, "--target on the command line")
        if memory is not None:
            settings.device_memory = Setting(memory, f"--device-memory {device_memory} on the command line")
        if exclude:
            settings.command_line_exclude = split_values(exclude)
        if extend_exclude:
            settings.command_line_extend_exclude = split_values(extend_exclude)
        if force_exclude is not None:
            settings.force_exclude = force_exclude
        if respect_gitignore is not None:
            settings.respect_gitignore = respect_gitignore

    rules, plugin_errors = load_rules()
    for error in plugin_errors:
        echo(f"dslint: warning: plugin '{error.entry_point}' failed to load: {error.message}", err=True)

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
        from dslint.run.result import RunResult

        result = run.result
        lean = RunResult(diagnostics=result.diagnostics, skipped=result.skipped, plugin_errors=result.plugin_errors, files=result.files)
        return cls(lean, run.failing())

    def failing(self) -> bool:
        return self._failing


def _check(paths, fmt, fix, fix_only, diff, add_noqa, unsafe_fixes, stdin_filename, quiet, rules, plugin_errors, config_file, no_config, adjust,
           recorded=False, cache=True, cache_dir=None):
    """Read the settings, find and lint the files (fixing them when asked): (run, fix outcome)."""
    from dslint.run import workspace

    scopes = scopes_for(config_file, no_config, adjust)
    reading_stdin = paths == ["-"]
    fix = fix or fix_only
    _refuse_combinations(paths, reading_stdin, fix, diff, add_noqa)
    if reading_stdin and not stdin_filename:
        fail("reading '-' needs --stdin-filename NAME: the name says how the text is read (ds_config.json, train.yaml, run.sh)")
    found = ([], []) if reading_stdin else _find(paths, scopes)
    _refuse_settings(scopes, rules)

    def lint(overrides=None, *, split=False, units=False):
        return workspace.lint(found, scopes, rules, plugin_errors, overrides, split=split, progress=progress, cache=cache, cache_dir=cache_dir,
                              units=units)

    progress = Progress(len(found[0]))
    if add_noqa:
        _add_noqa(lambda overrides: lint(overrides).result, rules)

    progress = Progress.start(len(found[0]), quiet=quiet)
    try:
        if reading_stdin:
            return _lint_stdin(scopes, stdin_filename, rules, plugin_errors, fix or diff, unsafe_fixes)
        if fix or diff:
            return _lint_fixing(lint, unsafe_fixes, write=fix and not diff)
        # JUnit lists every file read, which a split run does not bring back from its worker; a
        # run recorded for the cache reads everything here, where the recorder sees it
        # (recorded: a plain check with the cache on, which replays the units whose inputs are unchanged)
        return lint(split=fmt != "junit" and not recorded, units=recorded), None
    finally:
        progress.stop()


def _show_settings(path: str, config_file, no_config, adjust) -> None:
    """--show-settings: the settings a file at ``path`` is linted with, each with where it came from."""
    from dslint.config import describe

    scopes = scopes_for(config_file, no_config, adjust)
    target = Path(path)
    settings = scopes.at(target if target.is_dir() else target.parent)
    echo(f"Settings for {path}:")
    for line in describe(settings):
        echo(f"  {line}")


def _refuse_combinations(paths, reading_stdin, fix, diff, add_noqa) -> None:
    if "-" in paths and not reading_stdin:
        fail("'-' (stdin) cannot be combined with other paths")
    if add_noqa and (reading_stdin or fix or diff):
        fail("--add-noqa needs files and cannot be combined with --fix or --diff")


def _find(paths, scopes):
    """The files to lint under ``paths`` (workspace.find), or a usage error."""
    from dslint.config import ConfigError
    from dslint.files.discovery import PathError
    from dslint.run import workspace

    try:
        return workspace.find(paths, scopes)
    except (PathError, ConfigError) as exc:
        fail(str(exc))


def _refuse_settings(scopes, rules) -> None:
    from dslint.run.engine import settings_problems

    problems = [problem for settings in scopes.loaded for problem in settings_problems(settings, rules)]
    if problems:
        fail("; ".join(dict.fromkeys(problems)))


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
                echo(f"dslint: skipped {path}: {reason}", err=True)
    report_internal(result, outcome)
    if result.internal_errors:
        sys.exit(EXIT_ERROR)
    sys.exit(ending.status(run.failing(), outcome))


def _finish_diff(result, outcome) -> None:
    emit("".join(outcome.diffs), "diff")
    report_internal(result, outcome)
    sys.exit(EXIT_ERROR if result.internal_errors else (EXIT_FINDINGS if outcome.diffs else EXIT_CLEAN))


def _finish_fix_only(result, outcome, show_fixes, quiet, ending) -> None:
    if show_fixes:
        _list_fixes(outcome)
    count = len(outcome.applied)
    if not quiet:
        echo(f"Fixed {count} problem{'s' if count != 1 else ''}." if count else "No fixes applied.",
              err=outcome.stdin_text is not None)
    report_internal(result, outcome)
    sys.exit(EXIT_ERROR if result.internal_errors else ending.status(False, outcome))


def _list_fixes(outcome) -> None:
    for path, code, title in outcome.applied:
        echo(f"fixed {path}: {code} {title}", err=outcome.stdin_text is not None)


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
        emit(report, fmt)


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
        encoding = "utf-8" if fmt in UTF8_FORMATS else (sys.stdout.encoding or "utf-8")
        path.write_bytes(report.encode(encoding, "surrogateescape" if encoding.lower().replace("-", "") == "utf8" else "backslashreplace"))
    except OSError as exc:
        fail(f"{output_file}: cannot write the report: {exc.strerror or exc}")


def _add_noqa(lint, rules) -> None:
    """``check --add-noqa``: write suppression comments, report what could not be suppressed."""
    from dslint.fix.noqa import add_noqa

    judges = frozenset(r.code for r in rules if r.target == "suppressions")
    outcome = add_noqa(lint, judges)
    for diagnostic, reason in outcome.skipped:
        line, column = diagnostic.span.source.position(diagnostic.span.start)
        echo(f"dslint: not suppressed: {diagnostic.path}:{line}:{column}: {diagnostic.code}: {reason}", err=True)
    files = len(outcome.files)
    echo(f"Added {outcome.added} suppression{'s' if outcome.added != 1 else ''} to {files} file{'s' if files != 1 else ''}.")
    report_internal(outcome.result, None)
    if outcome.result.internal_errors:
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_FINDINGS if outcome.skipped else EXIT_CLEAN)


def _explicit_skips(result, paths):
    named = set(paths)
    return [path for path, _ in result.skipped if path in named]


def report_internal(result, outcome) -> None:
    for error in result.internal_errors:
        echo(f"dslint: internal error in {error.where}: {error.message}", err=True)
    if outcome is not None and not outcome.converged:
        echo("dslint: internal error: fixes did not converge after 10 passes (a rule's fix keeps changing the file); nothing was written", err=True)
        result.internal_errors.append(object())
    for path, why in outcome.not_written if outcome is not None else ():
        echo(f"dslint: {'error' if why.startswith('cannot') else 'warning'}: {path}: {why}", err=True)
    if outcome is not None and outcome.unwritable:
        result.internal_errors.append(object())  # exit 2: a file that had to be written was not

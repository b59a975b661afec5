"""``dslint rules``, ``dslint rule``, ``dslint explain`` and ``dslint schema``: what dslint knows, and launches as they will run."""

from __future__ import annotations

import sys
from pathlib import Path

from dslint.cli.common import EXIT_CLEAN, EXIT_ERROR, echo, emit, fail, file_path, memory_size, positive_int, settings_for
from dslint.cli.check import report_internal


def rules_options(parser) -> None:
    parser.add_argument("--format", dest="fmt", choices=["text", "json", "markdown"], default="text", help="markdown: every rule's full page, as in docs/rules.md.")


RULES_WIDTH = 100  # a line of `dslint rules`; --format json has the whole summaries


def list_rules(fmt):
    """List every rule: code, name, default severity, fix (safe, unsafe, safe/unsafe or -), summary (cut to 100 columns)."""
    from dslint.rule import load_rules

    rules, errors = load_rules()
    for error in errors:
        echo(f"dslint: warning: plugin '{error.entry_point}' failed to load: {error.message}", err=True)
    if fmt == "markdown":
        from dslint.docs import render

        sys.stdout.write(render(rules))
        return
    if fmt == "json":
        import json

        rows = [
            {"code": r.code, "name": r.name, "severity": r.severity.label, "fixable": r.fixable, "fix": r.fix, "summary": r.summary,
             "origin": r.origin}
            for r in rules
        ]
        echo(json.dumps(rows, indent=2))
        return
    width = max((len(r.name) for r in rules), default=10)
    fix_width = len("safe/unsafe")
    echo(_cut(f"{'code':<7} {'name':<{width}}  {'severity':<8}  {'fix':<{fix_width}}  summary"))
    for r in rules:
        fix = "/".join(r.fix_applicabilities) or "-"
        echo(_cut(f"{r.code:<7} {r.name:<{width}}  {r.severity.label:<8}  {fix:<{fix_width}}  {r.summary}"))


def _cut(line: str) -> str:
    return line if len(line) <= RULES_WIDTH else line[: RULES_WIDTH - 1] + "…"


def rule_options(parser) -> None:
    parser.add_argument("code_or_name", metavar="CODE_OR_NAME")


def show_rule(code_or_name):
    """Print the documentation page of one rule."""
    from dslint.rule import load_rules

    rules, _ = load_rules()
    for r in rules:
        if code_or_name.upper() == r.code or code_or_name == r.name:
            echo(f"# {r.code} {r.name}\n")
            echo(f"Default severity: {r.severity.label}. Fix: {r.fix or 'none'}. Registered by: {r.origin}.\n")
            echo(r.doc)
            return
    fail(f"no rule named {code_or_name!r} (see `dslint rules`)")


def explain_options(parser) -> None:
    add = parser.add_argument
    add("paths", nargs="*", metavar="PATHS")
    add("--format", dest="fmt", choices=["text", "json"], default="text", help="text for people, json for programs (docs/explain.md).")
    add("--world-size", type=positive_int, metavar="N", default=None, help="World size for DeepSpeed configs and training YAML no launch script reaches.")
    add("--samples", type=positive_int, metavar="N", default=None, help="Training samples, for steps per epoch and in total.")
    add("--params", default=None, help="Parameter count of the model (e.g. 7B, 1.5B, 350M) when its name is not recognised.")
    add("--device-memory", metavar="SIZE", default=None, help="Memory of one device (e.g. 80GB); default: from the hardware setting.")
    add("--config", dest="config_file", type=file_path, metavar="FILE", default=None, help="Use this configuration file.")
    add("--no-config", action="store_true", help="Ignore configuration files.")
    return "[OPTIONS] [PATHS]..."


def explain(paths, fmt, world_size, samples, params, device_memory, config_file, no_config):
    """Show each launch in PATHS as it will run: batch, steps, precision, ZeRO and memory per device."""
    from dslint.files.discovery import PathError
    from dslint.run.workspace import explained
    from dslint.explain import explain_result, options_from_settings, to_json
    from dslint.evidence.models import parse_count

    settings = settings_for(config_file, no_config)
    settings.select = ["DS001"]  # explain reads and links files; it does not lint them
    settings.extend_select, settings.ignore = [], []
    overrides = {"samples": samples}
    if world_size is not None:
        overrides.update(world_size=world_size, world_size_origin="--world-size on the command line")
    if params is not None:
        try:
            overrides["params"] = parse_count(params)
        except ValueError as exc:
            fail(str(exc))
    if device_memory is not None:
        overrides.update(device_memory=memory_size(device_memory), device_memory_origin=f"--device-memory {device_memory} on the command line")
    options = options_from_settings(settings, cwd=Path.cwd(), versions=True, **overrides)
    try:
        result = explained(list(paths) or ["."], settings)
    except PathError as exc:
        fail(str(exc))
    explanations = explain_result(result, options)
    if fmt == "json":
        import json

        emit(json.dumps(to_json(explanations), indent=2, ensure_ascii=False) + "\n", "json")
    else:
        from dslint.explain.text import render

        emit(render(explanations), "text")
    report_internal(result, None)
    sys.exit(EXIT_ERROR if result.internal_errors else EXIT_CLEAN)


def schema_options(parser) -> None:
    parser.add_argument("name", nargs="?", metavar="NAME")


def show_schema(name):
    """Print a JSON Schema dslint ships (e.g. `dslint schema deepspeed`); without NAME, list them."""
    from dslint import schemas

    if not name:
        for available in schemas.available():
            echo(f"{available}  {schemas.schema_path(available)}")
        return
    name = name.removesuffix(".json").removesuffix(".schema")
    path = schemas.schema_path(name)
    if path is None:
        fail(f"no schema named {name!r} (available: {', '.join(schemas.available()) or 'none'})")
    sys.stdout.flush()
    sys.stdout.buffer.write(path.read_bytes())
    sys.stdout.buffer.flush()

"""What the commands share: exit codes, output to the streams, option types, settings."""

from __future__ import annotations

import os
import sys
from pathlib import Path



EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def echo(text: str = "", err: bool = False) -> None:
    stream = sys.stderr if err else sys.stdout
    stream.write(text + "\n")
    stream.flush()


def positive_int(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a valid integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not in the range x>=1")
    return value


def file_path(text: str) -> str:
    """A file that may not exist yet, but is not a directory."""
    import argparse

    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a directory")
    return text


def flag_pair(parser, name: str, help: str) -> None:
    """``--name/--no-name``, None when neither is given."""
    dest = name.replace("-", "_")
    parser.add_argument(f"--{name}", dest=dest, action="store_true", default=None, help=help)
    parser.add_argument(f"--no-{name}", dest=dest, action="store_false", default=None, help=f"the opposite of --{name}")


# Formats read by programs are UTF-8 whatever the locale (JSON, SARIF and JUnit say so; a diff
# carries the files' own bytes); the others follow the output stream's encoding.
UTF8_FORMATS = ("json", "sarif", "junit", "github", "diff")


def emit(text: str, fmt: str) -> None:
    buffer = getattr(sys.stdout, "buffer", None)
    if fmt in UTF8_FORMATS and buffer is not None:
        sys.stdout.flush()
        buffer.write(text.encode("utf-8", "surrogateescape"))
        buffer.flush()
    else:
        sys.stdout.write(text)


def split_values(values: tuple[str, ...]) -> list[str]:
    out = []
    for value in values:
        out.extend(part.strip() for part in value.split(",") if part.strip())
    return out


def fail(message: str) -> None:
    echo(f"dslint: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def settings_for(config: str | None, no_config: bool):
    from dslint.config import ConfigError, Settings, load_settings

    try:
        if no_config:
            return Settings()
        if config:
            if not Path(config).is_file():
                fail(f"{config}: no such configuration file")
            return load_settings(Path(config))
        return load_settings(None, search_from=Path.cwd())
    except ConfigError as exc:
        fail(str(exc))


def scopes_for(config: str | None, no_config: bool, adjust):
    """Settings per folder: the nearest configuration file of each, unless --config or --no-config fix one for all."""
    from dslint.config import Scopes

    settings = settings_for(config, no_config)
    adjust(settings)
    if config or no_config:
        return Scopes.fixed(settings)
    return Scopes(settings, adjust=adjust)


def memory_size(text: str) -> int:
    from dslint.explain.memory import parse_size

    try:
        return parse_size(text)
    except ValueError as exc:
        fail(str(exc))

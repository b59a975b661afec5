"""Run a ``dslint`` command in this process, as the tests' cheaper stand-in for a subprocess."""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass


@dataclass
class Invoked:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        """Standard output, then standard error."""
        return self.stdout + self.stderr


def invoke(args) -> Invoked:
    """``dslint ARGS`` through ``dslint.cli.main``, with both streams captured (as UTF-8 bytes underneath)."""
    from dslint.cli import main

    streams = [io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="") for _ in range(2)]
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = streams
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.stdout, sys.stderr = saved
    texts = []
    for stream in streams:
        stream.flush()
        texts.append(stream.buffer.getvalue().decode("utf-8"))
    return Invoked(code, *texts)

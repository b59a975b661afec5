"""The progress line of a long run on a terminal."""

from __future__ import annotations

import os
import sys


class Progress:
    """'dslint: reading files 512/1705' on a terminal's stderr, once a run has taken 2 s.

    A daemon thread wakes every 0.2 s and reads the engines' counters; nothing is printed for
    short runs, pipes, files, CI logs or with --quiet, and the line is erased at the end.
    """

    DELAY = 2.0

    def __init__(self, total: int):
        self.total = total
        self.engines: list = []
        self._stop = None
        self._thread = None
        self._shown = False

    @classmethod
    def start(cls, total: int, quiet: bool = False) -> "Progress":
        progress = cls(total)
        stream = sys.stderr
        if quiet or total == 0 or not (hasattr(stream, "isatty") and stream.isatty()) or os.environ.get("DSLINT_NO_PROGRESS"):
            return progress
        import threading

        progress._stop = threading.Event()
        progress._thread = threading.Thread(target=progress._loop, name="dslint-progress", daemon=True)
        progress._thread.start()
        return progress

    def _loop(self) -> None:
        if self._stop.wait(self.DELAY):
            return
        while not self._stop.is_set():
            read = min(self.total, sum(getattr(engine, "files_read", 0) for engine in self.engines))
            text = f"dslint: reading files {read}/{self.total}" if read < self.total else f"dslint: {self.total} files read; checking launches and rules"
            try:
                sys.stderr.write("\r\x1b[K" + text)
                sys.stderr.flush()
            except (OSError, ValueError):
                return
            self._shown = True
            self._stop.wait(0.2)

    def stop(self) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        if self._shown:
            try:
                sys.stderr.write("\r\x1b[K")
                sys.stderr.flush()
            except (OSError, ValueError):
                pass

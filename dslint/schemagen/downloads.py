"""Release files from the package index: a wheel or sdist fetched by name and checked against its sha256."""

from __future__ import annotations

import sys
from functools import lru_cache
from pathlib import Path

#: The index whose JSON simple API (PEP 691) lists each release's files and their sha256.
SIMPLE_INDEX = "https://pypi.org/simple/"


@lru_cache(maxsize=None)
def _index_files(project: str) -> tuple[dict, ...]:
    """The files the index lists for ``project`` (one request per project and run)."""
    import json
    import urllib.request

    request = urllib.request.Request(f"{SIMPLE_INDEX}{project}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return tuple(json.load(response)["files"])


def _release_link(project: str, filename: str) -> tuple[str, str] | None:
    """(url, sha256) of the file ``filename`` of ``project`` on the index, or None when it has none."""
    for entry in _index_files(project):
        if entry["filename"] == filename:
            return entry["url"], entry["hashes"]["sha256"]
    return None


def wheel_name(project: str, version: str) -> str:
    """The pure-Python wheel's file name (``ms_swift-3.4.0-py3-none-any.whl``)."""
    return f"{project.replace('-', '_')}-{version}-py3-none-any.whl"


def download_release_file(project: str, filename: str, folder: Path, attempts: int = 3) -> bool:
    """Fetch one release file of ``project`` into ``folder``, checked against the index's sha256.

    False when the index has no such file or every attempt failed (each failure is printed).
    Nothing is installed or built: the generators read the archive as it is.
    """
    import hashlib
    import time
    import urllib.request

    target = folder / filename
    for attempt in range(attempts):
        try:
            link = _release_link(project, filename)
            if link is None:
                return False
            url, sha256 = link
            with urllib.request.urlopen(url, timeout=300) as response:
                data = response.read()
            if hashlib.sha256(data).hexdigest() != sha256:
                raise OSError(f"sha256 mismatch for {url}")
            partial = target.with_name(target.name + ".part")
            partial.write_bytes(data)
            partial.replace(target)
            return True
        except OSError as error:  # URLError and timeouts are OSErrors
            print(f"{filename}, attempt {attempt + 1}: {error}", file=sys.stderr)
            _index_files.cache_clear()
            time.sleep(2 * (attempt + 1))
    return False

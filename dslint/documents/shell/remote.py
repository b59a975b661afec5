"""Commands that run a command string on other hosts: ``ssh HOST CMD...``, ``pdsh -w HOSTS CMD...``.

Both join the words after their options (and ssh's destination) with spaces and hand the string
to the remote user's shell, which runs it as a script (OpenSSH ssh.c builds the command from
``av`` joined by " "; pdsh(1): "pdsh [options]... command", run by the rcmd module, ssh by
default, on each target host). The string starts in the remote user's home folder, in an
environment of its own: nothing the calling shell exports reaches it. The calling shell has
already expanded what the words say (``ssh n "deepspeed --num_gpus $N"``); a ``$N`` the quotes
keep is the remote shell's.

The options that take a value come from the tools' getopt strings: OpenSSH ssh.c
``"1246ab:c:e:fgi:kl:m:no:p:qstvxAB:CD:E:F:GI:J:KL:MNO:P:Q:R:S:TVw:W:XYy"`` (after the destination
ssh reads options again, ``goto again``); pdsh src/pdsh/opt.c ``GEN_ARGS
"hLNKR:M:t:cqf:w:x:l:u:bI:dVT:Q"`` and the host-selection modules' ``g: X: F: j: P: C:`` (pdsh sets
POSIXLY_CORRECT, so its options end at the first word that is not one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .model import Word

_SSH_VALUES = frozenset("bceilmopBDEFIJLOPQRSwW")
_PDSH_VALUES = frozenset("RMtfwxluITgXFjPC")
REMOTE_SHELLS = frozenset({"ssh", "pdsh"})


def _options(args: list[Word], k: int, values: frozenset[str], found: list[tuple[str, Word | None]]) -> int | None:
    """Past the getopt options from ``k``; (letter, value) pairs into ``found``; None when an
    option's text is not known (its letters may take the next word)."""
    while k < len(args):
        text = args[k].prefix
        if text == "--":
            return k + 1
        if not text.startswith("-") or text == "-":
            return k
        if args[k].value is None:
            return None
        k += 1
        for index, letter in enumerate(text[1:], start=1):
            if letter in values:
                if index + 1 < len(text):
                    found.append((letter, Word(args[k - 1].span, text[index + 1:], text[index + 1:])))
                else:
                    found.append((letter, args[k] if k < len(args) else None))
                    k += 1
                break
            found.append((letter, None))
    return k


@dataclass
class RemoteCall:
    """One ``ssh``/``pdsh`` command: where it runs the string, and the string's words."""

    tool: str
    hosts: list[Word] = field(default_factory=list)  # ssh's destination; pdsh's -w lists
    options: list[tuple[str, Word | None]] = field(default_factory=list)
    command: list[Word] = field(default_factory=list)

    def host_count(self) -> int | None:
        """How many hosts run the string: 1 for ssh; for pdsh, the hosts its ``-w`` lists name
        (``node[1-4]``, ``a,b``), None when it names them otherwise (a file, ``-a``, ``-g``, ``-x``)."""
        if self.tool == "ssh":
            return 1
        if not self.hosts or any(letter in "xagXjPFC" for letter, _ in self.options):
            return None
        total = 0
        for word in self.hosts:
            count = hostlist_size(word.value) if word.value is not None else None
            if count is None:
                return None
            total += count
        return total


def remote_call(tool: str, args: list[Word]) -> RemoteCall | None:
    """The ``ssh``/``pdsh`` command with these arguments, when it runs a command string."""
    call = RemoteCall(tool)
    if tool == "ssh":
        k = _options(args, 0, _SSH_VALUES, call.options)
        if k is None or k >= len(args):
            return None
        call.hosts = [args[k]]
        k = _options(args, k + 1, _SSH_VALUES, call.options)
        if k is None or any(letter in ("N", "W") for letter, _ in call.options):
            return None  # -N: no command; -W: forwards stdio
    else:
        k = _options(args, 0, _PDSH_VALUES, call.options)
        if k is None:
            return None
        call.hosts = [value for letter, value in call.options if letter == "w" and value is not None]
    call.command = args[k:]
    return call if call.command else None


_RANGE = re.compile(r"(\d+)(?:-(\d+))?\Z")


def hostlist_size(text: str) -> int | None:
    """How many hosts a pdsh/SLURM hostlist names: ``node[1-4,7],login`` is 6; None for a file
    (``^file``), a user (``user@``) or a pattern it cannot count."""
    if not text or text.startswith("^") or "@" in text or "/" in text:
        return None
    total, depth, piece = 0, 0, ""
    for char in text + ",":
        if char == "," and depth == 0:
            count = _one_host(piece)
            if count is None:
                return None
            total, piece = total + count, ""
            continue
        depth += {"[": 1, "]": -1}.get(char, 0)
        piece += char
    return total or None


def _one_host(piece: str) -> int | None:
    if not piece:
        return None
    if "[" not in piece:
        return 1 if re.fullmatch(r"[\w.-]+", piece) else None
    match = re.fullmatch(r"[\w.-]*\[([\d,-]+)\][\w.-]*", piece)
    if match is None:
        return None
    count = 0
    for part in match.group(1).split(","):
        bounds = _RANGE.match(part)
        if bounds is None:
            return None
        low, high = int(bounds.group(1)), int(bounds.group(2) or bounds.group(1))
        if high < low:
            return None
        count += high - low + 1
    return count

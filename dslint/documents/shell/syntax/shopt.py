"""What a simple command does to ``extglob``, the one shell option that changes how bash parses.

bash reads a script one complete command at a time and runs it before it reads the next
(reader_loop: parse_command, then execute_command). ``shopt -s extglob`` therefore changes how
the commands after it are parsed, never the rest of its own command: ``shopt -s extglob; ls
!(x)`` on one line, or both inside one ``if``, is a syntax error when it runs, while the same two
commands on two lines at the top level run (checked with bash 5.2). ``bash -n`` runs nothing, so
it rejects both: it is not the judge here. Non-interactive bash starts with extglob off
(``bash -c 'shopt extglob'``); only ``[[ == ]]`` patterns are parsed as if it were on.
"""

from __future__ import annotations

import re

_BLANKS = re.compile(r"(?:[ \t]|\\\n)+")


def words_of(run: str) -> list[str]:
    """The words of a run of plain arguments (no quotes hold blanks in the ones that matter)."""
    return [w for w in _BLANKS.split(run) if w]


def unquote(word: str) -> str:
    """A word without its quotes and backslashes: enough for command and option names."""
    if "'" not in word and '"' not in word and "\\" not in word:
        return word
    return re.sub(r"""\\(.)|['"]""", lambda m: m.group(1) or "", word)


def extglob_setting(words: list[str], functions: dict[str, list[bool]]) -> list[bool]:
    """The extglob settings, in order, that running the simple command ``words`` makes in its shell.

    ``shopt -s ... extglob`` turns it on and ``shopt -u ... extglob`` off (``builtin`` and
    ``command`` before it change nothing; ``-o`` names ``set -o`` options instead); a call of a
    function makes the settings its body makes.
    """
    k = 0
    while k < len(words) and unquote(words[k]) in ("builtin", "command"):
        k += 1
    name = unquote(words[k]) if k < len(words) else ""
    if name in functions:
        return list(functions[name])
    if name != "shopt":
        return []
    flags = ""
    args = [unquote(w) for w in words[k + 1:]]
    while args and args[0].startswith("-") and args[0] != "-":
        if args[0] == "--":
            args = args[1:]
            break
        flags += args[0][1:]
        args = args[1:]
    if "o" in flags or "extglob" not in args or ("s" in flags) == ("u" in flags):
        return []  # set -o options, another option, or only a query (both -s and -u is an error)
    return ["s" in flags]

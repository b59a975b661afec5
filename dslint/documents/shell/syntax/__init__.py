"""bash's own verdict on a script's syntax, without running bash.

``check(text)`` answers as ``bash -n`` (bash 5.2) does: None when bash accepts the script, else
the first complaint bash prints and the line it names. bash stops at its first syntax error, so
there is at most one. The lexer and grammar mirror parse.y; see lexer.py and grammar.py.

One difference, where ``bash -n`` is not the judge: ``shopt -s extglob`` changes how the commands
read after it parse, and ``bash -n`` runs nothing. bash running the script runs each top-level
command before it reads the next, so an extglob pattern parses after a command that turned the
option on (shopt.py); ``check`` answers as that run does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..quoting import ansi_c

from .conditional import CondError
from .grammar import Grammar
from .lexer import Lexer
from .tokens import EOF, REDIR_WORD, TOKEN_TEXT, LexError, UnexpectedToken

BASH_VERSION = "5.2"


@dataclass(frozen=True)
class Complaint:
    """What bash prints for the first syntax error: ``line N: <message>``."""

    line: int
    message: str
    token: str | None = None  # the unexpected token, as bash names it


def check(text: str, units: list | None = None, unended: list | None = None) -> Complaint | None:
    """bash's first complaint about ``text``, or None. ``units``, when given, receives the
    (start, end) character range of each complete top-level command bash reads; ``unended``,
    for a text bash accepts, (line, delimiter, at the end of the file) of each here-document bash
    warns about ("here-document at line N delimited by end-of-file"): the end of the file ends it,
    or, inside ``$( )``, a line that starts with its delimiter and goes on (``EOF)``)."""
    lexer = Lexer(text)
    grammar = Grammar(lexer, units)
    try:
        grammar.program()
    except UnexpectedToken as exc:
        return _unexpected(lexer, exc)
    except (LexError, CondError) as exc:
        if exc.message is None:
            return None  # bash gives up silently here (and `bash -n` exits 0)
        return Complaint(exc.line, exc.message)
    except RecursionError:
        return None  # nesting deeper than dslint follows: no verdict rather than a guess
    if unended is not None:
        unended.extend(lexer.unended)
    return None


def _unexpected(lexer: Lexer, exc: UnexpectedToken) -> Complaint:
    if exc.token == EOF:
        if lexer.eof_token is not None:
            return Complaint(exc.line, f"unexpected EOF while looking for matching `{lexer.eof_token}'")
        return Complaint(exc.line, "syntax error: unexpected end of file")
    name = TOKEN_TEXT.get(exc.token)
    if name is None and exc.token == REDIR_WORD:
        return Complaint(exc.line, f"syntax error near `{_text_near(lexer)}'")
    if name is None:
        name = _as_bash_keeps(exc.value)
    name = _ansi_c_quote(name)
    return Complaint(exc.line, f"syntax error near unexpected token `{name}'", name)


def _text_near(lexer: Lexer) -> str:
    """bash's error_token_from_text: the word of the input line just before where reading stopped."""
    text, pos = lexer.text, min(lexer.pos, lexer.n - 1)
    start = text.rfind("\n", 0, pos) + 1
    line, i = text[start : text.find("\n", pos) + 1], pos - start
    if i and i >= len(line):
        i -= 1
    while i and line[i] in " \t\n":
        i -= 1
    end = i + 1 if i else 0
    while i and line[i] not in " \n\t;|&":
        i -= 1
    while i != end and line[i] in " \t\n":
        i += 1
    return line[i:end] if end else line[i : i + 1]


_ANSI_C = re.compile(r"""\$'((?:[^'\\]|\\.)*)'""", re.S)


def _as_bash_keeps(word: str) -> str:
    """A word as bash stores it: ``$'...'`` expanded and single-quoted, ``$"..."`` as ``"..."``.

    Only where the ``$`` is unquoted and not escaped: inside '...' or "..." and after a
    backslash, ``$'`` is two plain characters (and a backslash-newline in '...' stays).
    """
    if "$'" not in word and '$"' not in word:
        return word
    out: list[str] = []
    quote = None
    i, n = 0, len(word)
    while i < n:
        ch = word[i]
        if quote == "'":
            quote = None if ch == "'" else quote
            out.append(ch)
            i += 1
        elif ch == "\\":
            out.append(word[i:i + 2])
            i += 2
        elif quote == '"':
            quote = None if ch == '"' else quote
            out.append(ch)
            i += 1
        elif word.startswith("$'", i) and (m := _ANSI_C.match(word, i)) is not None:
            out.append("'" + ansi_c(m.group(1)).replace("'", "'\\''") + "'")
            i = m.end()
        elif word.startswith('$"', i):
            i += 1  # the quote that follows opens an ordinary "..."
        else:
            quote = ch if ch in "'\"" else None
            out.append(ch)
            i += 1
    return "".join(out)


_ESCAPES = {"\a": "\\a", "\b": "\\b", "\x1b": "\\E", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
            "\\": "\\\\", "'": "\\'"}  # fmt: skip


def _ansi_c_quote(text: str) -> str:
    """bash quotes a token with control characters as $'...' in its messages (ansic_quote)."""
    if not any(ch < " " or ch == "\x7f" for ch in text):
        return text
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch < " " or ch == "\x7f":
            out.append(f"\\{ord(ch):03o}")
        else:
            out.append(ch)
    return "$'" + "".join(out) + "'"

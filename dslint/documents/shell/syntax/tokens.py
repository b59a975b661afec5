"""bash 5.2's tokens and the lexer's character classes (parse.y), and what the lexer, the word
reader and the nested reads share: the errors they raise, assignment words, quote removal."""

from __future__ import annotations

import re

EOF = "EOF"
WORD = "WORD"
ASSIGNMENT_WORD = "ASSIGNMENT_WORD"
NUMBER = "NUMBER"
REDIR_WORD = "REDIR_WORD"
ARITH_CMD = "ARITH_CMD"
ARITH_FOR_EXPRS = "ARITH_FOR_EXPRS"
COND_CMD = "COND_CMD"
LEX_ERROR = "LEX_ERROR"  # the lexer printed its own message (bash's YYerror)
DOLPAREN = "DOLPAREN"

RESERVED = {
    "if": "IF", "then": "THEN", "else": "ELSE", "elif": "ELIF", "fi": "FI", "case": "CASE", "esac": "ESAC",
    "for": "FOR", "select": "SELECT", "while": "WHILE", "until": "UNTIL", "do": "DO", "done": "DONE",
    "in": "IN", "function": "FUNCTION", "time": "TIME", "{": "{", "}": "}", "!": "BANG",
    "[[": "COND_START", "]]": "COND_END", "coproc": "COPROC",
}  # fmt: skip
TOKEN_TEXT = {v: k for k, v in RESERVED.items()} | {
    "TIMEIGN": "--", "TIMEOPT": "-p", "AND_AND": "&&", "OR_OR": "||", "GREATER_GREATER": ">>", "LESS_LESS": "<<",
    "LESS_AND": "<&", "GREATER_AND": ">&", "SEMI_SEMI": ";;", "SEMI_AND": ";&", "SEMI_SEMI_AND": ";;&",
    "LESS_LESS_MINUS": "<<-", "LESS_LESS_LESS": "<<<", "AND_GREATER": "&>", "AND_GREATER_GREATER": "&>>",
    "LESS_GREATER": "<>", "GREATER_BAR": ">|", "BAR_AND": "|&", EOF: "EOF", "\n": "newline",
    ">": ">", "<": "<", "-": "-", ";": ";", "(": "(", ")": ")", "|": "|", "&": "&",
}  # fmt: skip

# reserved_word_acceptable(): tokens after which a reserved word (and so a command) may come
_RESWORD_OK = frozenset({
    "\n", ";", "(", ")", "|", "&", "{", "}", "AND_AND", ARITH_CMD, "BANG", "BAR_AND", "COND_END", "DO", "DONE",
    "ELIF", "ELSE", "ESAC", "FI", "IF", "OR_OR", "SEMI_SEMI", "SEMI_AND", "SEMI_SEMI_AND", "THEN", "TIME",
    "TIMEOPT", "TIMEIGN", "COPROC", "UNTIL", "WHILE", None, DOLPAREN,
})  # fmt: skip
_TIME_OK = frozenset({
    "AND_AND", "OR_OR", "&", "WHILE", "DO", "UNTIL", "IF", "THEN", "ELIF", "ELSE", "{", "(", ")", "BANG", "TIME",
    "TIMEOPT", "TIMEIGN",
})  # fmt: skip
_REDIRECTING = frozenset({"<", ">", "GREATER_GREATER", "GREATER_BAR", "LESS_GREATER", "LESS_LESS_MINUS", "LESS_LESS",
                          "LESS_LESS_LESS", "LESS_AND", "GREATER_AND", "AND_GREATER"})  # fmt: skip
_CASE_ENDS = frozenset({"SEMI_SEMI", "SEMI_AND", "SEMI_SEMI_AND"})
ASSIGNMENT_BUILTINS = frozenset({"alias", "declare", "export", "local", "readonly", "typeset", "eval", "let"})

_META = frozenset("()<>;&|")
_BREAK = frozenset("()<>;&| \t\n")
_BLANKS = re.compile(r"(?:[ \t]|\\\n)*")
_PLAIN = re.compile(r"[^ \t\n\\'\"`$<>()|&;]+")
_PLAIN_ASSIGN = re.compile(r"[^ \t\n\\'\"`$<>()|&;=\[]+")
_PLAIN_EXTGLOB = re.compile(r"[^ \t\n\\'\"`$<>()|&;*?+@!]+")
_PLAIN_ASSIGN_EXTGLOB = re.compile(r"[^ \t\n\\'\"`$<>()|&;=\[*?+@!]+")
_DIGITS = frozenset("0123456789")
_FAST_WORD = re.compile(r"[^ \t\n\\'\"`$<>()|&;]+(?=[ \t\n;|&)])")
_SPECIAL_WORDS = frozenset({"in", "do", "esac", "{", "}", "-p", "--", "]]"})
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_NUMBER = re.compile(r"[0-9]+\Z")
_ASSIGN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class LexError(Exception):
    """bash printed a message and gave up on the input (line, message)."""

    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line = line
        self.message = message


class UnexpectedToken(Exception):
    """The grammar (or a compound assignment) met a token it cannot take: bash's yyerror."""

    def __init__(self, token: str, value: str, line: int):
        super().__init__(token)
        self.token = token
        self.value = value
        self.line = line


def _is_assignment_name(head: str) -> bool:
    m = _ASSIGN_NAME.match(head)
    if m is None:
        return False
    if m.end() == len(head):
        return True
    if head[m.end()] != "[" or not head.endswith("]"):
        return False
    return _subscript_end(head, m.end()) == len(head) - 1


def _subscript_end(text: str, start: int) -> int:
    """Index of the `]` closing the `[` at ``start`` (bash's skipsubscript, roughly), or -1."""
    depth = 0
    i, n = start, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "'":
            end = text.find("'", i + 1)
            if end == -1:
                return -1
            i = end + 1
            continue
        if ch == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            continue
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _is_assignment(word: str) -> bool:
    """bash's assignment(): NAME=, NAME+=, NAME[subscript]= at the start of the word."""
    m = _ASSIGN_NAME.match(word)
    if m is None:
        return False
    i = m.end()
    if i < len(word) and word[i] == "[":
        i = _subscript_end(word, i)
        if i == -1:
            return False
        i += 1
    if word.startswith("+=", i):
        return True
    return word.startswith("=", i)


def _quote_removal(word: str) -> str:
    out = []
    i, n = 0, len(word)
    while i < n:
        ch = word[i]
        if ch == "\\" and i + 1 < n:
            out.append(word[i + 1])
            i += 2
        elif ch == "'":
            end = word.find("'", i + 1)
            end = n if end == -1 else end
            out.append(word[i + 1 : end])
            i = end + 1
        elif ch == '"':
            i += 1
            while i < n and word[i] != '"':
                if word[i] == "\\" and i + 1 < n and word[i + 1] in '$`"\\\n':
                    i += 1
                out.append(word[i])
                i += 1
            i += 1
        elif ch == "$" and i + 1 < n and word[i + 1] in "'\"":
            i += 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def without_continuations(raw: str) -> str:
    """A word's text as bash keeps it: each backslash-newline removed (shell_getc), except inside
    single quotes, '...' and $'...', which parse_matched_pair reads without removing them. A
    command substitution opens fresh quoting, inside double quotes too."""
    out: list[str] = []
    saved: list[list] = []  # per open $( : [the double-quote state outside it, its open parentheses]
    in_double = dollar = False
    i, n = 0, len(raw)
    while i < n:
        ch = raw[i]
        if ch == "\\":
            if raw.startswith("\n", i + 1):
                i += 2
            else:
                out.append(raw[i:i + 2])
                i += 2
            dollar = False
            continue
        if ch == "'" and not in_double:
            ansi, j = dollar, i + 1
            while j < n and raw[j] != "'":
                j += 2 if ansi and raw[j] == "\\" else 1
            out.append(raw[i:j + 1])
            i, dollar = j + 1, False
            continue
        if ch == '"':
            in_double = not in_double
        elif ch == "(" and dollar:
            saved.append([in_double, 0])
            in_double = False
        elif ch == "(" and saved:
            saved[-1][1] += 1
        elif ch == ")" and saved:
            if saved[-1][1]:
                saved[-1][1] -= 1
            else:
                in_double = saved.pop()[0]
        dollar = ch == "$"
        out.append(ch)
        i += 1
    return "".join(out)


def token_text(tok: str, value: str | None) -> str | None:
    """bash's error_token_from_token: reserved words and operators by name, words by their text."""
    text = TOKEN_TEXT.get(tok)
    if text is not None:
        return text
    return value

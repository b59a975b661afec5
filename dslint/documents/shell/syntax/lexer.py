"""bash 5.2's tokenizer (parse.y: shell_getc, read_token, read_token_word, parse_matched_pair).

The lexer keeps the state bash keeps: the last two tokens read (reserved words are words unless
they come where a command may start), the case-pattern and conditional-command modes, pending
here-documents, and the line number bash would print. Runs of ordinary characters are consumed
with compiled regular expressions; the character loop runs only where bash makes a decision.

Positions: ``pos`` is the next character to read. bash's line number is the line of the furthest
character it has read (``far``); each read past the end of the input counts one more line.
"""

from __future__ import annotations

from .tokens import (
    ARITH_CMD,
    ARITH_FOR_EXPRS,
    ASSIGNMENT_WORD,
    _BLANKS,
    _CASE_ENDS,
    COND_CMD,
    EOF,
    LEX_ERROR,
    LexError,
    _META,
    _REDIRECTING,
    _RESWORD_OK,
    WORD,
)
from .pairs import gather_heredocs, matched_pair
from .words import read_word


class Lexer:
    def __init__(self, text: str):
        if "\x00" in text:
            text = text.replace("\x00", "")  # bash drops NUL bytes as it reads
        if text and not text.endswith("\n"):
            text += "\n"  # bash ends the last line with a newline of its own
        self.text = text
        self.n = len(text)
        self.pos = 0
        self.far = -1
        self.eof_reads = 0
        self.eof_bonus = 0  # lines bash adds at the end of the input after a failed `((` (dparen)
        self.holes: dict[int, int] = {}  # line start -> where reading resumes (here-documents read early)
        self.pushback: tuple | None = None
        # token state (yylex): what was read last, and before that
        self.current = None
        self.last = None
        self.before = None
        self.value = ""  # the text of the last WORD-like token
        self.token_start = 0  # where the last token read began
        self.quoted = False  # whether it had quotes or backslashes (a here-document delimiter's quoting)
        # parser_state flags
        self.casepat = self.casestmt = self.condcmd = self.condexpr = self.regexp = self.extpat = False
        self.assignok = self.redirlist = self.allowopnbrc = self.compassign = False
        self.eof_token = None  # ')' while reading a $( ) command substitution
        self.esacs_needed = self.expecting_in = self.open_braces = 0
        # here-documents bash warns about: (line of the `<<`, delimiter, True when the end of the file ends it)
        self.unended: list[tuple[int, str, bool]] = []
        self.heredocs: list[tuple[str, bool, bool]] = []  # (word, strip tabs, quoted) waiting for a newline
        self.extglob = False
        self.cond = None  # set by the grammar: reads a [[ ]] expression when the lexer reaches one
        self.comsub_parser = None  # set by the grammar: reads the command list of a $( )

    # ---- characters ------------------------------------------------------------------

    def line(self) -> int:
        return self.line_at(self.mark())

    def mark(self) -> tuple[int, int]:
        """Where bash's line number stands now (computed into a line only when a message needs it)."""
        return (max(self.far, self.pos - 1), self.eof_reads + self.eof_bonus if self.eof_reads else 0)

    def line_at(self, mark: tuple[int, int]) -> int:
        far, eof_reads = mark
        if eof_reads:
            return self.text.count("\n") + eof_reads
        return 1 + self.text.count("\n", 0, max(far, 0))

    def getc(self, remove_continuation: bool = True) -> str:
        while True:
            p = self.pos
            if self.holes and p in self.holes:
                p = self.pos = self.holes.pop(p)
            if p >= self.n:
                self.pos = self.n + 1
                self.eof_reads += 1
                return ""
            ch = self.text[p]
            if ch == "\\" and remove_continuation and self.text.startswith("\n", p + 1):
                self.pos = p + 2
                continue
            self.pos = p + 1
            return ch

    def ungetc(self, ch: str) -> None:
        if ch == "":
            self.eof_reads -= 1  # a read at the end is not undone in bash, but it is not repeated either
            self.pos = self.n
            return
        if self.pos - 1 > self.far:
            self.far = self.pos - 1
        self.pos -= 1

    def peekc(self, remove_continuation: bool = True) -> str:
        ch = self.getc(remove_continuation)
        self.ungetc(ch)
        return ch

    def error(self, mark: tuple[int, int] | None, message: str):
        raise LexError(self.line_at(self.mark() if mark is None else mark), message)

    # ---- tokens ------------------------------------------------------------------------

    def push(self, token: str) -> None:
        """bash's token_to_read: the parser hands a token back to be read again."""
        self.pushback = (token, self.value)

    def next(self) -> str:
        """yylex(): the next token, with the record of the last ones updated."""
        self.before = self.last
        self.last = self.current
        tok = self.read_token()
        self.current = tok
        return tok

    def reserved_ok(self, tok=None) -> bool:
        tok = self.last if tok is None else tok
        if tok in _RESWORD_OK:
            return True
        return self.last == WORD and self.before in ("COPROC", "FUNCTION")

    def command_position(self, tok) -> bool:
        return (
            tok == ASSIGNMENT_WORD
            or (self.redirlist and tok not in _REDIRECTING)
            or (tok not in _CASE_ENDS and self.reserved_ok(tok))
        )

    def assignment_ok(self, tok) -> bool:
        return self.command_position(tok) and not self.casepat

    def read_token(self) -> str:
        if self.pushback is not None:
            tok, self.value = self.pushback
            self.pushback = None
            return tok
        if self.condcmd and not self.condexpr:
            self.condexpr = True
            self.cond()  # the grammar's [[ ]] reader; raises on errors
            self.push("COND_END")
            self.condexpr = self.condcmd = False
            return COND_CMD
        text = self.text
        if not self.holes:
            self.pos = _BLANKS.match(text, self.pos).end()
        while True:
            ch = self.getc()
            if ch not in (" ", "\t"):
                break
        self.token_start = self.pos - 1
        if ch == "":
            return EOF
        if ch == "#":
            end = text.find("\n", self.pos)
            self.pos = self.n if end == -1 else end
            ch = self.getc(False)
            if ch == "":
                self.getc(False)
            ch = "\n"
        if ch == "\n":
            if self.heredocs:
                gather_heredocs(self)
            self.assignok = False
            return "\n"
        if self.regexp:
            return read_word(self, ch)
        if ch in _META:
            return self.operator(ch)
        if ch == "-" and self.last in ("LESS_AND", "GREATER_AND"):
            return "-"
        return read_word(self, ch)

    def operator(self, ch: str) -> str:
        self.assignok = False
        if self.eof_token is not None and ch == self.eof_token:
            peek = self.getc(False)
        else:
            peek = self.getc()
        if ch == peek:
            if ch == "<":
                peek = self.getc()
                if peek == "-":
                    return "LESS_LESS_MINUS"
                if peek == "<":
                    return "LESS_LESS_LESS"
                self.ungetc(peek)
                return "LESS_LESS"
            if ch == ">":
                return "GREATER_GREATER"
            if ch == ";":
                self.casepat = True
                peek = self.getc()
                if peek == "&":
                    return "SEMI_SEMI_AND"
                self.ungetc(peek)
                return "SEMI_SEMI"
            if ch == "&":
                return "AND_AND"
            if ch == "|":
                return "OR_OR"
            if ch == "(":
                result = self.dparen()
                if result is not None:
                    return result
        elif ch == "<" and peek == "&":
            return "LESS_AND"
        elif ch == ">" and peek == "&":
            return "GREATER_AND"
        elif ch == "<" and peek == ">":
            return "LESS_GREATER"
        elif ch == ">" and peek == "|":
            return "GREATER_BAR"
        elif ch == "&" and peek == ">":
            peek = self.getc()
            if peek == ">":
                return "AND_GREATER_GREATER"
            self.ungetc(peek)
            return "AND_GREATER"
        elif ch == "|" and peek == "&":
            return "BAR_AND"
        elif ch == ";" and peek == "&":
            self.casepat = True
            return "SEMI_AND"
        self.ungetc(peek)
        if ch == ")" and self.last == "(" and self.before == WORD:
            self.allowopnbrc = True
        if ch == ")" and self.casepat:
            self.casepat = False
        if ch in "<>" and peek == "(":
            return read_word(self, ch)  # <( ) and >( ): process substitution, a word
        return ch

    def dparen(self) -> str | None:
        """``((``: an arithmetic command, the head of ``for ((;;))``, or two subshells."""
        if self.last == "FOR":
            ok, text = self.arith_cmd()
            if ok:
                self.value = text
                return ARITH_FOR_EXPRS
            return LEX_ERROR
        if self.reserved_ok():
            start = self.pos - 1  # the second `(`
            ok, text = self.arith_cmd()
            if ok:
                self.value = text
                return ARITH_CMD
            if self.far >= self.n - 1:
                # the attempt read the input's last newline: at the end of the input bash then
                # names one line more (`((a || b)` alone in a file: "line 3" where a plain
                # `(a || b` gives "line 2"), as bash 5.2's oracle runs show
                self.eof_bonus = 1
            self.pos = start  # bash pushes the text back and reads it as a nested subshell
            return "("
        return None

    def arith_cmd(self) -> tuple[bool, str]:
        start = self.pos
        matched_pair(self, "", "(", ")", arith=True)
        inner = self.text[start : self.pos - 1]
        c = self.getc(False)
        if c == ")":
            return True, inner
        self.ungetc(c)
        return False, inner

    # ---- saving state around nested reads ----------------------------------------------

    _STATE = ("current", "last", "before", "casepat", "casestmt", "condcmd", "condexpr", "regexp", "extpat",
              "assignok", "redirlist", "allowopnbrc", "compassign", "eof_token", "esacs_needed", "expecting_in",
              "heredocs", "extglob", "pushback")  # fmt: skip

    def save(self) -> tuple:
        return tuple(getattr(self, name) for name in self._STATE)

    def restore(self, saved: tuple) -> None:
        for name, value in zip(self._STATE, saved):
            setattr(self, name, value)

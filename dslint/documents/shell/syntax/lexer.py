"""bash 5.2's tokenizer (parse.y: shell_getc, read_token, read_token_word, parse_matched_pair).

The lexer keeps the state bash keeps: the last two tokens read (reserved words are words unless
they come where a command may start), the case-pattern and conditional-command modes, pending
here-documents, and the line number bash would print. Runs of ordinary characters are consumed
with compiled regular expressions; the character loop runs only where bash makes a decision.

Positions: ``pos`` is the next character to read. bash's line number is the line of the furthest
character it has read (``far``); each read past the end of the input counts one more line.
"""

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
_PAIR_RUNS: dict = {}


class LexError(Exception):
    """bash printed a message and gave up on the input (line, message)."""

    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line = line
        self.message = message


def _pair_run(chars: str) -> re.Pattern:
    run = _PAIR_RUNS.get(chars)
    if run is None:
        run = _PAIR_RUNS[chars] = re.compile("[^" + re.escape(chars) + "]+")
    return run


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
                self.gather_heredocs()
            self.assignok = False
            return "\n"
        if self.regexp:
            return self.read_word(ch)
        if ch in _META:
            return self.operator(ch)
        if ch == "-" and self.last in ("LESS_AND", "GREATER_AND"):
            return "-"
        return self.read_word(ch)

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
            return self.read_word(ch)  # <( ) and >( ): process substitution, a word
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
        self.matched_pair("", "(", ")", arith=True)
        inner = self.text[start : self.pos - 1]
        c = self.getc(False)
        if c == ")":
            return True, inner
        self.ungetc(c)
        return False, inner

    # ---- words -------------------------------------------------------------------------

    def read_word(self, ch: str) -> str:
        text = self.text
        start = self.pos - 1
        if not self.holes and not self.extglob and not self.regexp and not self.compassign:
            # the common case: ordinary characters up to a blank, a newline or an operator
            m = _FAST_WORD.match(text, start)
            if m is not None:
                self.pos = m.end()
                word = m.group()
                if "=" not in word and "[" not in word:
                    return self.finish_word(start, False, False, word.isdigit() and word.isascii(), False)
        quoted = False
        dollar = False
        all_digits = ch in _DIGITS if ch else False
        compound = False
        assign_ok = self.assignment_ok(self.last)
        special_eq = assign_ok or self.assignok
        if self.extglob:
            plain = _PLAIN_ASSIGN_EXTGLOB if special_eq else _PLAIN_EXTGLOB
        else:
            plain = _PLAIN_ASSIGN if special_eq else _PLAIN
        while True:
            if ch == "":
                break
            if ch == "\\":
                quoted = True
                nxt = self.getc(False)
                if nxt == "":
                    break
                all_digits = False
                ch = self.getc()
                continue
            if ch in "'\"`":
                if ch == "'":
                    line = self.mark()
                    end = text.find("'", self.pos)
                    if end == -1:
                        self.pos = self.n
                        self.getc()
                        self.error(line, "unexpected EOF while looking for matching `''")
                    self.pos = end + 1
                else:
                    self.matched_pair(ch, ch, ch)
                all_digits = False
                if ch != "`":
                    quoted = True
                ch = self.getc()
                continue
            if self.regexp and ch in "(|":
                if ch == "(":
                    self.matched_pair("", "(", ")")
                all_digits = dollar = False
                ch = self.getc()
                continue
            if self.extglob and ch in "*?+@!":
                peek = self.getc()
                if peek == "(":
                    self.matched_pair("", "(", ")")
                    all_digits = dollar = False
                    ch = self.getc()
                    continue
                self.ungetc(peek)
            if ch in "$<>":
                peek = self.getc()
                if peek == "(" or (ch == "$" and peek in "{["):
                    if peek == "{":
                        self.matched_pair("", "{", "}", firstclose=True, dolbrace=True)
                    elif peek == "(":
                        self.comsub()
                    else:
                        self.matched_pair("", "[", "]", arith=True)
                    dollar = True
                    all_digits = False
                    ch = self.getc()
                    continue
                if ch == "$" and peek in ("'", '"'):
                    self.matched_pair(peek, peek, peek, allowesc=peek == "'")
                    quoted = True
                    all_digits = False
                    ch = self.getc()
                    continue
                if ch == "$" and peek == "$":
                    dollar = True
                    all_digits = False
                    ch = self.getc()
                    continue
                self.ungetc(peek)
            elif ch == "[" and (
                (self.pos - 1 > start and assign_ok and self._ident(start))
                or (self.pos - 1 == start and self.compassign)
            ):
                self.matched_pair("", "[", "]", arraysub=True)
                all_digits = False
                ch = self.getc()
                continue
            elif ch == "=" and self.pos - 1 > start and special_eq and self._assignment_head(start):
                peek = self.getc()
                if peek == "(":
                    self.compound_assignment()
                    all_digits = False
                    compound = True
                    ch = self.getc()
                    continue
                self.ungetc(peek)
            if ch in _BREAK:
                self.ungetc(ch)
                break
            # an ordinary character, and the run of ordinary characters after it
            if ch == "$":
                dollar = True
            if all_digits and ch not in _DIGITS:
                all_digits = False
            m = plain.match(text, self.pos)
            if m is not None and not self.holes:
                run = m.group()
                if all_digits and not run.isdigit():
                    all_digits = False
                self.pos = m.end()
            ch = self.getc()
        return self.finish_word(start, quoted, dollar, all_digits, compound)

    def word_text(self, start: int) -> str:
        raw = self.text[start : min(self.pos, self.n)]
        return without_continuations(raw) if "\\\n" in raw else raw

    def _ident(self, start: int) -> bool:
        return bool(_IDENT.match(self.text[start : self.pos - 1].replace("\\\n", "")))

    def _assignment_head(self, start: int) -> bool:
        """token_is_assignment: the word so far is NAME, NAME[sub] or NAME+ (before `=`)."""
        head = self.text[start : self.pos - 1].replace("\\\n", "")
        if head.endswith("+"):
            head = head[:-1]
        return _is_assignment_name(head)

    def finish_word(self, start: int, quoted: bool, dollar: bool, all_digits: bool, compound: bool) -> str:
        word = self.word_text(start)
        self.value = word
        self.quoted = quoted
        nxt = self.text[self.pos : self.pos + 1] if self.pos < self.n else ""
        if all_digits and (nxt in ("<", ">") or self.last in ("LESS_AND", "GREATER_AND")) and _NUMBER.match(word):
            return NUMBER
        if self.allowopnbrc or word in _SPECIAL_WORDS:
            special = self.special_case(word)
            if special is not None:
                return special
        if not dollar and not quoted and word in RESERVED and self.reserved_ok():
            reserved = RESERVED[word]
            if self._reserved(reserved):
                return reserved
        command_position = self.command_position(self.last)
        if command_position and word in ASSIGNMENT_BUILTINS:
            self.assignok = True
        if word[:1] == "{" and word.endswith("}") and nxt in ("<", ">") and _IDENT.match(word[1:-1]):
            return REDIR_WORD
        result = WORD
        if "=" in word and ((command_position and not self.casepat) or self.compassign) and _is_assignment(word):
            result = ASSIGNMENT_WORD
        if self.last == "FUNCTION":
            self.allowopnbrc = True
        elif self.last in ("CASE", "SELECT", "FOR"):
            self.expecting_in += 1
        return result

    def _reserved(self, tok: str) -> bool:
        if self.casepat and tok != "ESAC":
            return False
        if tok == "TIME" and not self.time_ok():
            return False
        if self.casepat and self.last in ("|", "("):
            return False
        if tok == "ESAC":
            self.casepat = self.casestmt = False
            self.esacs_needed -= 1
        elif tok == "CASE":
            self.casestmt = True
        elif tok == "COND_END":
            self.condcmd = self.condexpr = False
        elif tok == "COND_START":
            self.condcmd = True
        elif tok == "{":
            self.open_braces += 1
        elif tok == "}" and self.open_braces:
            self.open_braces -= 1
        return True

    def time_ok(self) -> bool:
        if self.last in (None, ";", "\n"):
            return self.before != "|"
        return self.last in _TIME_OK

    def special_case(self, word: str) -> str | None:
        last, before = self.last, self.before
        if last == WORD and before in ("FOR", "CASE", "SELECT") and word == "in":
            if before == "CASE":
                self.casepat = True
                self.esacs_needed += 1
            if self.expecting_in:
                self.expecting_in -= 1
            return "IN"
        if self.expecting_in and last in (WORD, "\n") and word == "in":
            if self.casestmt:
                self.casepat = True
                self.esacs_needed += 1
            self.expecting_in -= 1
            return "IN"
        if self.expecting_in and last in ("\n", ";") and word == "do":
            self.expecting_in -= 1
            return "DO"
        if last == WORD and before in ("FOR", "SELECT") and word == "do":
            if self.expecting_in:
                self.expecting_in -= 1
            return "DO"
        if self.esacs_needed and last == "IN" and word == "esac":
            self.esacs_needed -= 1
            self.casepat = False
            return "ESAC"
        if self.allowopnbrc:
            self.allowopnbrc = False
            if word == "{":
                self.open_braces += 1
                return "{"
        if last == ARITH_FOR_EXPRS and word == "do":
            return "DO"
        if last == ARITH_FOR_EXPRS and word == "{":
            self.open_braces += 1
            return "{"
        if self.open_braces and self.reserved_ok() and word == "}":
            self.open_braces -= 1
            return "}"
        if last == "TIME" and word == "-p":
            return "TIMEOPT"
        if last in ("TIME", "TIMEOPT") and word == "--":
            return "TIMEIGN"
        if self.condexpr and word == "]]":
            return "COND_END"
        return None

    # ---- matched pairs: quotes, ${ }, $(( )), [ ] ------------------------------------

    def matched_pair(self, qc: str, open_: str, close: str, *, allowesc=False, firstclose=False, dolbrace=False,
                     arith=False, arraysub=False) -> None:  # fmt: skip
        """Read to the matching ``close`` (the opening character is already read), as bash does."""
        start_line = self.mark()
        text = self.text
        count = 1
        passnext = wasdol = gtlt = False
        grouping = open_ != close
        interesting = close + open_ + "\\$"
        if grouping:
            interesting += "'\"`"
            if dolbrace or arraysub:
                interesting += "<>"
        elif open_ == '"':
            interesting += "`"
        run = _pair_run(interesting)
        while True:
            if not passnext and not wasdol and not gtlt and not self.holes:
                m = run.match(text, self.pos)
                if m is not None:
                    self.pos = m.end()
            ch = self.getc(qc != "'" and not passnext)
            if ch == "":
                self.error(start_line, f"unexpected EOF while looking for matching `{close}'")
            if passnext:
                passnext = False
                continue
            if ch == close:
                count -= 1
            elif grouping and wasdol and open_ == "{" and ch == open_:
                count += 1
            elif not firstclose and ch == open_:
                count += 1
            if count == 0:
                return
            if open_ == "'":
                if allowesc and ch == "\\":
                    passnext = True
                continue
            if ch == "\\":
                passnext = True
            if grouping:
                if ch in "'\"`":
                    self.matched_pair(ch, ch, ch, allowesc=wasdol and ch == "'")
                elif (dolbrace or arraysub) and wasdol and ch in "({[":
                    self.dollar_word(ch, open_)
                    if open_ == ch:
                        count -= 1
                elif arith and wasdol and ch == "(":
                    self.dollar_word(ch, open_)
                    if open_ == ch:
                        count -= 1
                elif (dolbrace or arraysub) and gtlt and ch == "(":
                    self.dollar_word(ch, open_)
                    if open_ == ch:
                        count -= 1
            elif open_ == '"' and ch == "`":
                self.matched_pair("", "`", "`")
            elif open_ != "`" and wasdol and ch in "({[":
                if open_ == ch:
                    count -= 1
                self.dollar_word(ch, open_)
            gtlt = ch in "<>" and not gtlt
            wasdol = ch == "$" and not wasdol

    def dollar_word(self, ch: str, open_: str) -> None:
        if ch == "(":
            self.comsub()
        elif ch == "{":
            self.matched_pair("", "{", "}", firstclose=True, dolbrace=True)
        else:
            self.matched_pair("", "[", "]", arith=True)

    def comsub(self) -> None:
        """``$(`` (or ``<(``, ``>(``) is read: parse the command list inside, to its ``)``."""
        if self.peekc() == "(":
            self.matched_pair("", "(", ")", arith=True)
            return
        self.comsub_parser(self)

    def compound_assignment(self) -> None:
        """``NAME=(`` is read: words up to ``)``, newlines allowed; anything else is an error."""
        start_line = self.mark()
        saved = self.save()
        self.last = WORD
        self.condcmd = self.condexpr = self.regexp = self.extpat = False
        self.compassign = True
        self.esacs_needed = self.expecting_in = 0
        while True:
            tok = self.read_token()
            if tok == ")":
                break
            if tok == "\n":
                continue
            if tok in (WORD, ASSIGNMENT_WORD):
                continue
            self.current = tok
            if tok == EOF:
                self.error(start_line, "unexpected EOF while looking for matching `)'")
            raise UnexpectedToken(tok, self.value, self.line())
        assignok = self.assignok
        self.restore(saved)
        self.assignok = self.assignok or assignok

    # ---- here-documents ---------------------------------------------------------------

    def gather_heredocs(self) -> None:
        """Read the bodies of the pending here-documents from the next line on."""
        docs, self.heredocs = self.heredocs, []
        nl = self.text.find("\n", self.pos - 1) if self.pos <= self.n else -1
        line_end = self.pos if self.text[self.pos - 1 : self.pos] == "\n" else (self.n if nl == -1 else nl + 1)
        at = self.holes.pop(line_end, line_end)
        for word, strip, quoted in docs:
            at = self._heredoc_body(at, word, strip, quoted)
        if line_end == self.pos:
            self.pos = at
        else:
            self.holes[line_end] = at
        if at > 0 and at - 1 > self.far:
            self.far = at - 1

    def _heredoc_body(self, at: int, word: str, strip: bool, quoted: bool) -> int:
        delim = _quote_removal(word) if quoted else word
        text, n = self.text, self.n
        while at < n:
            end = text.find("\n", at)
            end = n if end == -1 else end + 1
            line = text[at:end]
            nxt = end
            if not quoted:
                while line.endswith("\\\n") and (len(line) - len(line[:-1].rstrip("\\")) - 1) % 2 == 1:
                    if nxt >= n:  # joined with the end of the input: bash counts one more line
                        self.eof_reads += 1
                        line = line[:-2] + "\n"
                        break
                    e2 = text.find("\n", nxt)
                    e2 = n if e2 == -1 else e2 + 1
                    line = line[:-2] + text[nxt:e2]
                    nxt = e2
            if not line.endswith("\n"):
                line += "\n"
            if strip and line[:-1] == delim:
                return nxt
            body = line.lstrip("\t") if strip else line
            if body[:-1] == delim:
                return nxt
            if self.eof_token and body.startswith(delim) and self.eof_token in body[len(delim) :]:
                # inside $( ): `EOF)` ends the document and the substitution (bash's compatibility case)
                return at + (len(line) - len(body)) + len(delim)
            at = nxt
        return n

    # ---- saving state around nested reads ----------------------------------------------

    _STATE = ("current", "last", "before", "casepat", "casestmt", "condcmd", "condexpr", "regexp", "extpat",
              "assignok", "redirlist", "allowopnbrc", "compassign", "eof_token", "esacs_needed", "expecting_in",
              "heredocs", "extglob", "pushback")  # fmt: skip

    def save(self) -> tuple:
        return tuple(getattr(self, name) for name in self._STATE)

    def restore(self, saved: tuple) -> None:
        for name, value in zip(self._STATE, saved):
            setattr(self, name, value)


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


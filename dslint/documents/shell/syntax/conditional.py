"""bash's conditional command, ``[[ ... ]]`` (parse.y: parse_cond_command, cond_expr, cond_or,
cond_and, cond_term): read with the lexer's own tokens, its errors worded as bash words them."""

from __future__ import annotations

from .tokens import ARITH_CMD, ARITH_FOR_EXPRS, ASSIGNMENT_WORD, EOF, NUMBER, REDIR_WORD, WORD, token_text

_UNARY = frozenset("-" + c for c in "abcdefghknoprstuvwxzGLOSNR")
_BINARY = frozenset({"=", "==", "!=", "<", ">", "-nt", "-ot", "-lt", "-gt", "-eq", "-ef", "-ne", "-ge", "-le"})
# bison's numbers for the word-like tokens (y.tab.h of bash 5.2), which bash prints for them in [[ ]]
_TOKEN_NUMBERS = {ASSIGNMENT_WORD: 282, REDIR_WORD: 283, NUMBER: 284, ARITH_CMD: 285, ARITH_FOR_EXPRS: 286}


class CondError(Exception):
    """A [[ ]] expression bash rejects (it prints the message; ``message`` None when it prints none)."""

    def __init__(self, line: int, message: str | None):
        super().__init__(message)
        self.line = line
        self.message = message


class Conditional:
    """One ``[[ ]]`` being read, from after ``[[`` through its ``]]``."""

    def __init__(self, lexer):
        self.lx = lexer
        self.line = 0  # where the expression began
        self.tok: str | None = None  # the token the expression's reading stopped at

    def command(self) -> None:
        lx = self.lx
        self.line = lx.line()
        self.tok = None
        self.or_()
        if self.tok != "COND_END":
            tok = self.tok
            if tok == "COND_ERROR":
                raise CondError(self.line, None)
            if tok == EOF:
                raise CondError(self.line, "unexpected EOF while looking for `]]'")
            text = token_text(tok, None)
            if text is None:
                raise CondError(self.line, "syntax error in conditional expression")
            raise CondError(self.line, f"syntax error in conditional expression: unexpected token `{text}'")

    def read(self) -> str:
        return self.lx.read_token()

    def skip_newlines(self) -> str:
        while True:
            tok = self.read()
            if tok != "\n":
                self.tok = tok
                return tok

    def or_(self) -> None:
        self.and_()
        if self.tok == "OR_OR":
            self.or_()

    def and_(self) -> None:
        self.term()
        if self.tok == "AND_AND":
            self.and_()

    def fail(self, message: str | None, line: int | None = None):
        self.tok = "COND_ERROR"
        raise CondError(self.lx.line() if line is None else line, message)

    def fail_naming(self, tok: str, named: str, unnamed: str, line: int | None = None):
        """bash's message naming the token where it has a name (``named`` holds ``{}`` for it)."""
        text = token_text(tok, None)
        self.fail(named.format(text) if text else unnamed, line)

    def term(self) -> None:
        lx = self.lx
        tok = self.skip_newlines()
        line = lx.line()
        if tok == "COND_END":
            self.fail(None)
        elif tok == "(":
            self.or_()
            if self.tok != ")":
                self.fail_naming(self.tok, "unexpected token `{}', expected `)'", "expected `)'", line)
            self.skip_newlines()
        elif tok == "BANG" or (tok == WORD and lx.value == "!"):
            self.term()
        elif tok == WORD and lx.value in _UNARY:
            tok = self.read()
            if tok != WORD:
                self.fail_naming(tok, "unexpected argument `{}' to conditional unary operator",
                                 "unexpected argument to conditional unary operator")
            self.skip_newlines()
        elif tok == WORD:
            tok = self.read()
            if tok == WORD and lx.value in _BINARY:
                if lx.value in ("=", "==", "!="):
                    lx.extpat = True
            elif tok == WORD and lx.value == "=~":
                lx.regexp = True
            elif tok in ("<", ">"):
                pass
            elif tok in ("COND_END", "AND_AND", "OR_OR", ")"):
                self.tok = tok
                return
            else:
                self.fail_naming(tok, "unexpected token `{}', conditional binary operator expected",
                                 "conditional binary operator expected")
            saved = lx.extglob
            if lx.extpat:
                lx.extglob = True
            tok = lx.read_token()
            lx.extglob = saved
            lx.regexp = lx.extpat = False
            if tok != WORD:
                self.fail_naming(tok, "unexpected argument `{}' to conditional binary operator",
                                 "unexpected argument to conditional binary operator")
            self.skip_newlines()
        else:
            text = token_text(tok, None)
            if len(tok) == 1:
                self.fail(f"unexpected token `{tok}' in conditional command")
            if text is None:  # bash prints the token's number in its grammar
                self.fail(f"unexpected token {_TOKEN_NUMBERS.get(tok, 0)} in conditional command")
            self.fail(f"unexpected token `{text}' in conditional command")

"""bash 5.2's grammar (parse.y), as a recursive-descent recognizer over the lexer's tokens.

An LR parser reports a syntax error at the first token that cannot continue a valid prefix; so
does this one, at the same token, because it asks the lexer for each token in the same order and
at the same moments as bash's parser (the lexer's decisions depend on the tokens before).
Nothing is built: the recognizer only says where bash stops.
"""

from __future__ import annotations

import re

from .conditional import CondError, Conditional
from .lexer import Lexer
from .pairs import gather_heredocs
from .shopt import extglob_setting, unquote, words_of
from .tokens import (
    ARITH_CMD,
    ARITH_FOR_EXPRS,
    ASSIGNMENT_WORD,
    COND_CMD,
    EOF,
    LEX_ERROR,
    NUMBER,
    REDIR_WORD,
    WORD,
    LexError,
    UnexpectedToken,
)

_REDIR_OPS = frozenset({">", "<", "GREATER_GREATER", "GREATER_BAR", "LESS_GREATER", "LESS_LESS", "LESS_LESS_MINUS",
                        "LESS_LESS_LESS", "LESS_AND", "GREATER_AND", "AND_GREATER", "AND_GREATER_GREATER"})  # fmt: skip
_FD_REDIR_OPS = _REDIR_OPS - {"AND_GREATER", "AND_GREATER_GREATER"}
_SHELL_COMMAND = frozenset({"FOR", "CASE", "WHILE", "UNTIL", "SELECT", "IF", "(", "{", ARITH_CMD, "COND_START"})
_COMMAND_START = (
    _SHELL_COMMAND | _REDIR_OPS | {WORD, ASSIGNMENT_WORD, NUMBER, REDIR_WORD, "FUNCTION", "COPROC", "BANG", "TIME"}
)
_TERMINATORS = frozenset({"\n", ";", EOF})
# Arguments of a simple command that are plain words to bash whatever comes before them: ordinary
# characters, simple quotes and simple parameter references, each followed by a blank.
_PLAIN_ARGS = re.compile(
    r"""(?:(?:[ \t]|\\\n)+(?!\#)(?:[^ \t\n\\'"`$<>()|&;]|'[^']*'|"[^"\\$`]*"|\$[A-Za-z_][A-Za-z0-9_]*"""
    r"""|\$\{[A-Za-z_][A-Za-z0-9_]*\})+(?=[ \t\n]|\\\n))+"""
)



class Grammar:
    def __init__(self, lexer: Lexer, units: list | None = None):
        self.lx = lexer
        self.tok: str | None = None  # the lookahead token, once read
        self.units = units  # when a list: (start, end) of each complete command read at the top level
        # extglob settings the commands of the top-level command being read make in the shell that
        # reads the script, in order: they change how bash parses the commands after it (shopt.py)
        self.effects: list[bool] = []
        self.functions: dict[str, list[bool]] = {}  # the settings a call of each function makes
        lexer.cond = lambda: Conditional(lexer).command()
        lexer.comsub_parser = self.comsub

    # ---- tokens -------------------------------------------------------------------------

    def peek(self) -> str:
        if self.tok is None:
            self.tok = self.lx.next()
            if self.tok == LEX_ERROR:
                raise CondError(self.lx.line(), None)
        return self.tok

    def take(self) -> str:
        tok = self.peek()
        self.tok = None
        return tok

    def expect(self, *tokens: str) -> str:
        if self.peek() not in tokens:
            self.unexpected()
        return self.take()

    def unexpected(self):
        raise UnexpectedToken(self.tok, self.lx.value, self.lx.line())

    def newlines(self) -> bool:
        seen = False
        while self.peek() == "\n":
            self.take()
            seen = True
        return seen

    # ---- lists ----------------------------------------------------------------------------

    def program(self) -> None:
        """inputunit, repeated to the end of the input (bash stops at the first error)."""
        while True:
            # where the unit starts, taken before its first token is read: reading a word such as
            # `A=(...)` or `$( ... )` reads tokens inside it, and token_start ends at the last of them
            before = _unit_start(self.lx.text, self.lx.pos) if self.tok is None else self.lx.token_start
            tok = self.peek()
            if tok == EOF:
                return
            if tok == "\n":
                self.take()
                continue
            start = before
            self.simple_list()
            if self.peek() not in ("\n", EOF) and self.lx.heredocs:
                # bash reduces to simple_list, whose action reads pending here-documents, before
                # it finds that the token cannot follow: the error comes after their bodies
                gather_heredocs(self.lx)
            self.expect("\n", EOF)
            if self.units is not None:
                self.units.append((start, min(self.lx.pos, self.lx.n)))
            for setting in self.effects:  # bash runs the command before it reads the next one
                self.lx.extglob = setting
            self.effects.clear()

    def simple_list(self) -> None:
        """A top-level list: `;` and `&` separate commands, a newline ends the list."""
        self.sequence((";", "&"), skip_newlines=False)

    def compound_list(self) -> None:
        self.newlines()
        if self.peek() not in _COMMAND_START:
            self.unexpected()
        self.list1()

    def list1(self) -> None:
        """A list inside a compound command: newlines separate commands too."""
        self.sequence((";", "&", "\n"), skip_newlines=True)

    def sequence(self, separators: tuple[str, ...], skip_newlines: bool) -> None:
        mark = len(self.effects)  # where the and-or list began
        while True:
            self.pipeline_command()
            tok = self.peek()
            if tok in ("AND_AND", "OR_OR"):
                self.take()
                self.newlines()
                continue
            if tok == "&":
                del self.effects[mark:]  # an asynchronous list runs in a subshell
            if tok in separators:
                self.take()
                if skip_newlines:
                    self.newlines()
                if self.peek() in _COMMAND_START:
                    mark = len(self.effects)
                    continue
            return

    def pipeline_command(self) -> None:
        tok = self.peek()
        if tok == "BANG":
            self.take()
            self.after_prefix()
            return
        if tok == "TIME":
            self.take()
            if self.peek() == "TIMEOPT":
                self.take()
            if self.peek() == "TIMEIGN":
                self.take()
            self.after_prefix()
            return
        self.pipeline()

    def after_prefix(self) -> None:
        """After `!` or `time`: a pipeline, or a terminator that bash reads twice."""
        tok = self.peek()
        if tok in _TERMINATORS:
            self.take()
            if tok != EOF:
                self.lx.push(tok)
            return
        self.pipeline_command()

    def pipeline(self) -> None:
        mark = len(self.effects)
        self.command()
        while self.peek() in ("|", "BAR_AND"):
            self.take()
            self.newlines()
            self.command()
            del self.effects[mark:]  # every command of a pipeline runs in a subshell (lastpipe is off)

    # ---- commands ---------------------------------------------------------------------------

    def command(self) -> None:
        tok = self.peek()
        if tok in _SHELL_COMMAND:
            self.shell_command()
            self.redirections()
        elif tok == "FUNCTION":
            self.function_keyword()
        elif tok == "COPROC":
            self.coproc()
        elif tok == WORD:
            self.take()
            name = self.lx.value
            if self.peek() == "(":
                self.take()
                self.expect(")")
                self.newlines()
                self.defining(name, self.function_body)
            else:
                self.simple_command(words=1, first=name)
        else:
            self.simple_command(words=0)

    def simple_command(self, words: int, first: str | None = None) -> None:
        lx = self.lx
        elements = words
        command = [first] if first is not None else []  # its words, without prefix assignments
        while True:
            if words and self.tok is None:
                run = self.plain_arguments()
                if run and (not command or unquote(command[0]) in ("shopt", "builtin", "command")):  # whose words matter
                    command += words_of(run)
            tok = self.peek()
            if tok in (WORD, ASSIGNMENT_WORD):
                self.take()
                if tok == WORD or command:
                    command.append(lx.value)
                lx.redirlist = False
                words += 1
            elif tok in _REDIR_OPS or tok in (NUMBER, REDIR_WORD):
                self.redirection()
                if not words:
                    lx.redirlist = True
            else:
                break
            elements += 1
        if not elements:
            self.unexpected()
        lx.redirlist = False
        self.effects += extglob_setting(command, self.functions)

    def defining(self, name: str, body) -> None:
        """Read a function's body: what it sets is made where the function is called, not here."""
        outer, self.effects = self.effects, []
        body()
        self.functions[name], self.effects = self.effects, outer

    def plain_arguments(self) -> str | None:
        """Take a run of arguments that can only be words in one regular expression (speed)."""
        lx = self.lx
        if (
            lx.assignok
            or lx.redirlist
            or lx.holes
            or lx.extglob
            or lx.regexp
            or lx.expecting_in
            or lx.pushback is not None
            or lx.current != WORD
            or lx.last in ("COPROC", "FUNCTION")
        ):
            return None
        m = _PLAIN_ARGS.match(lx.text, lx.pos)
        if m is None:
            return None
        lx.pos = m.end()
        lx.before = lx.last = WORD
        return m.group()

    def redirection(self) -> None:
        tok = self.take()
        if tok in (NUMBER, REDIR_WORD):
            tok = self.peek()
            if tok not in _FD_REDIR_OPS:
                self.unexpected()
            self.take()
        if tok in ("LESS_AND", "GREATER_AND"):
            self.expect(NUMBER, WORD, "-")
            return
        self.expect(WORD)
        if tok in ("LESS_LESS", "LESS_LESS_MINUS"):
            self.lx.heredocs.append((self.lx.value, tok == "LESS_LESS_MINUS", self.lx.quoted))

    def redirections(self) -> None:
        while self.peek() in _REDIR_OPS or self.peek() in (NUMBER, REDIR_WORD):
            self.redirection()

    def function_keyword(self) -> None:
        self.take()
        self.expect(WORD)
        self.defining(self.lx.value, self.function_keyword_body)

    def function_keyword_body(self) -> None:
        tok = self.peek()
        if tok == "(":
            self.take()
            if self.peek() != ")":  # `function f (cmd)`: the body is a subshell
                self.compound_list()
                self.expect(")")
                self.redirections()
                return
            self.take()
            self.newlines()
        elif tok == "\n":
            self.newlines()
        self.function_body()

    def function_body(self) -> None:
        if self.peek() not in _SHELL_COMMAND:
            self.unexpected()
        self.shell_command()
        self.redirections()

    def coproc(self) -> None:
        mark = len(self.effects)
        self.coproc_command()
        del self.effects[mark:]  # a coprocess runs in a subshell

    def coproc_command(self) -> None:
        self.take()
        tok = self.peek()
        if tok in _SHELL_COMMAND:
            self.shell_command()
            self.redirections()
            return
        if tok == WORD:
            self.take()
            if self.peek() in _SHELL_COMMAND:
                self.shell_command()
                self.redirections()
                return
            self.simple_command(words=1)
            return
        self.simple_command(words=0)

    def shell_command(self) -> None:
        tok = self.take()
        if tok in ("FOR", "SELECT"):
            self.for_command(tok)
        elif tok == "CASE":
            self.case_command()
        elif tok in ("WHILE", "UNTIL"):
            self.compound_list()
            self.expect("DO")
            self.compound_list()
            self.expect("DONE")
        elif tok == "IF":
            self.if_command()
        elif tok == "(":
            mark = len(self.effects)
            self.compound_list()
            self.expect(")")
            del self.effects[mark:]  # a subshell's settings end with it
        elif tok == "{":
            self.compound_list()
            self.expect("}")
        elif tok == "COND_START":
            self.expect(COND_CMD)
            self.expect("COND_END")
        # ARITH_CMD: nothing more

    def for_command(self, keyword: str) -> None:
        tok = self.peek()
        if keyword == "FOR" and tok == ARITH_FOR_EXPRS:
            line, exprs = self.lx.mark(), self.lx.value
            self.take()
            if self.peek() in _TERMINATORS:
                self.take()
                self.newlines()
            self.loop_body()
            _check_arith_for(exprs, self.lx.line_at(line))
            return
        self.expect(WORD)
        newlines = self.newlines()
        tok = self.peek()
        if tok == ";" and not newlines:
            self.take()
            self.newlines()
        elif tok == "IN":
            self.take()
            while self.peek() == WORD:
                self.take()
            self.expect(*_TERMINATORS)
            self.newlines()
        self.loop_body()

    def loop_body(self) -> None:
        tok = self.expect("DO", "{")
        self.compound_list()
        self.expect("DONE" if tok == "DO" else "}")

    def case_command(self) -> None:
        self.expect(WORD)
        self.newlines()
        self.expect("IN")
        while True:
            self.newlines()
            if self.peek() == "ESAC":
                self.take()
                return
            if self.peek() == "(":
                self.take()
            self.expect(WORD)
            while self.peek() == "|":
                self.take()
                self.expect(WORD)
            self.expect(")")
            self.newlines()
            if self.peek() in _COMMAND_START:
                self.list1()
            tok = self.peek()
            if tok in ("SEMI_SEMI", "SEMI_AND", "SEMI_SEMI_AND"):
                self.take()
                continue
            self.expect("ESAC")
            return

    def if_command(self) -> None:
        self.compound_list()
        self.expect("THEN")
        self.compound_list()
        while True:
            tok = self.expect("ELIF", "ELSE", "FI")
            if tok == "FI":
                return
            if tok == "ELSE":
                self.compound_list()
                self.expect("FI")
                return
            self.compound_list()
            self.expect("THEN")
            self.compound_list()

    # ---- $( ) ------------------------------------------------------------------------------

    def comsub(self, lx: Lexer) -> None:
        """Parse the command list of a ``$( )`` (the ``$(`` is read) up to its ``)``."""
        saved_state, saved_tok, mark = lx.save(), self.tok, len(self.effects)
        lx.regexp = lx.extpat = lx.condcmd = lx.condexpr = lx.compassign = False
        lx.casepat = lx.redirlist = False
        lx.eof_token = ")"
        lx.heredocs = []
        lx.esacs_needed = lx.expecting_in = 0
        lx.current = "DOLPAREN"
        lx.pushback = None
        self.tok = None
        self.newlines()
        if self.peek() != ")":
            self.list1()
            if self.peek() == EOF:
                raise LexError(lx.line(), "unexpected EOF while looking for matching `)'")
            if self.peek() != ")":
                self.unexpected()
        if lx.heredocs:
            gather_heredocs(lx)
        lx.restore(saved_state)
        self.tok = saved_tok
        del self.effects[mark:]  # a command substitution runs in a subshell


def _check_arith_for(exprs: str, line: int) -> None:
    """make_arith_for_command: `for ((...))` needs exactly three expressions."""
    count = 1
    i, n = 0, len(exprs)
    depth = 0
    while i < n:
        ch = exprs[i]
        if ch == "\\":
            i += 2
            continue
        if ch in "'\"`":
            end = exprs.find(ch, i + 1)
            i = n if end == -1 else end + 1
            continue
        if ch == "$" and exprs.startswith(("$(", "${"), i):
            depth += 1
            i += 2
            continue
        if ch in "({" and depth:
            depth += 1
        elif ch in ")}" and depth:
            depth -= 1
        elif ch == ";" and not depth:
            count += 1
        i += 1
    if count < 3:
        raise LexError(line, "syntax error: arithmetic expression required")
    if count > 3:
        raise LexError(line, "syntax error: `;' unexpected")


def _unit_start(text: str, pos: int) -> int:
    """The first character at or after ``pos`` that is not a blank, a newline or a comment."""
    n = len(text)
    while pos < n:
        ch = text[pos]
        if ch in " \t\r\n":
            pos += 1
        elif ch == "#":
            end = text.find("\n", pos)
            pos = n if end == -1 else end
        else:
            break
    return pos

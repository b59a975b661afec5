"""What the lexer reads as a whole (parse.y: parse_matched_pair, parse_comsub, parse_compound_assignment,
gather_here_documents): a quoted or bracketed run to its matching close, a command substitution, a
compound assignment, the bodies of pending here-documents. Functions of the lexer ``lx``, which they
read and advance."""

from __future__ import annotations

import re

from .tokens import ASSIGNMENT_WORD, EOF, _quote_removal, UnexpectedToken, WORD

_PAIR_RUNS: dict = {}


def _pair_run(chars: str) -> re.Pattern:
    run = _PAIR_RUNS.get(chars)
    if run is None:
        run = _PAIR_RUNS[chars] = re.compile("[^" + re.escape(chars) + "]+")
    return run


def matched_pair(lx, qc: str, open_: str, close: str, *, allowesc=False, firstclose=False, dolbrace=False,
                 arith=False, arraysub=False) -> None:  # fmt: skip
    """Read to the matching ``close`` (the opening character is already read), as bash does."""
    start_line = lx.mark()
    text = lx.text
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
        if not passnext and not wasdol and not gtlt and not lx.holes:
            m = run.match(text, lx.pos)
            if m is not None:
                lx.pos = m.end()
        ch = lx.getc(qc != "'" and not passnext)
        if ch == "":
            lx.error(start_line, f"unexpected EOF while looking for matching `{close}'")
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
                matched_pair(lx, ch, ch, ch, allowesc=wasdol and ch == "'")
            elif (dolbrace or arraysub) and wasdol and ch in "({[":
                dollar_word(lx, ch, open_)
                if open_ == ch:
                    count -= 1
            elif arith and wasdol and ch == "(":
                dollar_word(lx, ch, open_)
                if open_ == ch:
                    count -= 1
            elif (dolbrace or arraysub) and gtlt and ch == "(":
                dollar_word(lx, ch, open_)
                if open_ == ch:
                    count -= 1
        elif open_ == '"' and ch == "`":
            matched_pair(lx, "", "`", "`")
        elif open_ != "`" and wasdol and ch in "({[":
            if open_ == ch:
                count -= 1
            dollar_word(lx, ch, open_)
        gtlt = ch in "<>" and not gtlt
        wasdol = ch == "$" and not wasdol


def dollar_word(lx, ch: str, open_: str) -> None:
    if ch == "(":
        comsub(lx)
    elif ch == "{":
        matched_pair(lx, "", "{", "}", firstclose=True, dolbrace=True)
    else:
        matched_pair(lx, "", "[", "]", arith=True)


def comsub(lx) -> None:
    """``$(`` (or ``<(``, ``>(``) is read: parse the command list inside, to its ``)``."""
    if lx.peekc() == "(":
        matched_pair(lx, "", "(", ")", arith=True)
        return
    lx.comsub_parser(lx)


def compound_assignment(lx) -> None:
    """``NAME=(`` is read: words up to ``)``, newlines allowed; anything else is an error."""
    start_line = lx.mark()
    saved = lx.save()
    lx.last = WORD
    lx.condcmd = lx.condexpr = lx.regexp = lx.extpat = False
    lx.compassign = True
    lx.esacs_needed = lx.expecting_in = 0
    while True:
        tok = lx.read_token()
        if tok == ")":
            break
        if tok == "\n":
            continue
        if tok in (WORD, ASSIGNMENT_WORD):
            continue
        lx.current = tok
        if tok == EOF:
            lx.error(start_line, "unexpected EOF while looking for matching `)'")
        raise UnexpectedToken(tok, lx.value, lx.line())
    assignok = lx.assignok
    lx.restore(saved)
    lx.assignok = lx.assignok or assignok


def gather_heredocs(lx) -> None:
    """Read the bodies of the pending here-documents from the next line on."""
    docs, lx.heredocs = lx.heredocs, []
    nl = lx.text.find("\n", lx.pos - 1) if lx.pos <= lx.n else -1
    line_end = lx.pos if lx.text[lx.pos - 1 : lx.pos] == "\n" else (lx.n if nl == -1 else nl + 1)
    at = lx.holes.pop(line_end, line_end)
    for word, strip, quoted in docs:
        at = _heredoc_body(lx, at, word, strip, quoted)
    if line_end == lx.pos:
        lx.pos = at
    else:
        lx.holes[line_end] = at
    if at > 0 and at - 1 > lx.far:
        lx.far = at - 1


def _heredoc_body(lx, at: int, word: str, strip: bool, quoted: bool) -> int:
    delim = _quote_removal(word) if quoted else word
    text, n = lx.text, lx.n
    opened = text.count("\n", 0, at)  # the line of its `<<` (the body starts on the next one)
    while at < n:
        end = text.find("\n", at)
        end = n if end == -1 else end + 1
        line = text[at:end]
        nxt = end
        if not quoted:
            while line.endswith("\\\n") and (len(line) - len(line[:-1].rstrip("\\")) - 1) % 2 == 1:
                if nxt >= n:  # joined with the end of the input: bash counts one more line
                    lx.eof_reads += 1
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
        if lx.eof_token and body.startswith(delim) and lx.eof_token in body[len(delim) :]:
            # inside $( ): `EOF)` ends the document and the substitution (bash's compatibility
            # case, which bash warns about as if the file had ended it)
            lx.unended.append((opened, delim, False))
            return at + (len(line) - len(body)) + len(delim)
        at = nxt
    # bash: "warning: here-document at line N delimited by end-of-file (wanted `EOF')"
    lx.unended.append((opened, delim, True))
    return n

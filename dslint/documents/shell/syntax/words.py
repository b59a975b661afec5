"""How the lexer reads a word (parse.y: read_token_word, and the special cases of read_token after it):
where the word ends, what kind of token it is (a reserved word, an assignment, a number before a
redirection). Functions of the lexer ``lx``, which they read and advance."""

from __future__ import annotations

from .pairs import compound_assignment, comsub, matched_pair
from .tokens import ARITH_FOR_EXPRS, ASSIGNMENT_BUILTINS, ASSIGNMENT_WORD, _BREAK, _DIGITS, _FAST_WORD, _IDENT, _is_assignment, _is_assignment_name, NUMBER, _NUMBER, _PLAIN, _PLAIN_ASSIGN, _PLAIN_ASSIGN_EXTGLOB, _PLAIN_EXTGLOB, REDIR_WORD, RESERVED, _SPECIAL_WORDS, _TIME_OK, without_continuations, WORD


def read_word(lx, ch: str) -> str:
    text = lx.text
    start = lx.pos - 1
    if not lx.holes and not lx.extglob and not lx.regexp and not lx.compassign:
        # the common case: ordinary characters up to a blank, a newline or an operator
        m = _FAST_WORD.match(text, start)
        if m is not None:
            lx.pos = m.end()
            word = m.group()
            if "=" not in word and "[" not in word:
                return finish_word(lx, start, False, False, word.isdigit() and word.isascii(), False)
    quoted = False
    dollar = False
    all_digits = ch in _DIGITS if ch else False
    compound = False
    assign_ok = lx.assignment_ok(lx.last)
    special_eq = assign_ok or lx.assignok
    if lx.extglob:
        plain = _PLAIN_ASSIGN_EXTGLOB if special_eq else _PLAIN_EXTGLOB
    else:
        plain = _PLAIN_ASSIGN if special_eq else _PLAIN
    while True:
        if ch == "":
            break
        if ch == "\\":
            quoted = True
            nxt = lx.getc(False)
            if nxt == "":
                break
            all_digits = False
            ch = lx.getc()
            continue
        if ch in "'\"`":
            if ch == "'":
                line = lx.mark()
                end = text.find("'", lx.pos)
                if end == -1:
                    lx.pos = lx.n
                    lx.getc()
                    lx.error(line, "unexpected EOF while looking for matching `''")
                lx.pos = end + 1
            else:
                matched_pair(lx, ch, ch, ch)
            all_digits = False
            if ch != "`":
                quoted = True
            ch = lx.getc()
            continue
        if lx.regexp and ch in "(|":
            if ch == "(":
                matched_pair(lx, "", "(", ")")
            all_digits = dollar = False
            ch = lx.getc()
            continue
        if lx.extglob and ch in "*?+@!":
            peek = lx.getc()
            if peek == "(":
                matched_pair(lx, "", "(", ")")
                all_digits = dollar = False
                ch = lx.getc()
                continue
            lx.ungetc(peek)
        if ch in "$<>":
            peek = lx.getc()
            if peek == "(" or (ch == "$" and peek in "{["):
                if peek == "{":
                    matched_pair(lx, "", "{", "}", firstclose=True, dolbrace=True)
                elif peek == "(":
                    comsub(lx)
                else:
                    matched_pair(lx, "", "[", "]", arith=True)
                dollar = True
                all_digits = False
                ch = lx.getc()
                continue
            if ch == "$" and peek in ("'", '"'):
                matched_pair(lx, peek, peek, peek, allowesc=peek == "'")
                quoted = True
                all_digits = False
                ch = lx.getc()
                continue
            if ch == "$" and peek == "$":
                dollar = True
                all_digits = False
                ch = lx.getc()
                continue
            lx.ungetc(peek)
        elif ch == "[" and (
            (lx.pos - 1 > start and assign_ok and _ident(lx, start))
            or (lx.pos - 1 == start and lx.compassign)
        ):
            matched_pair(lx, "", "[", "]", arraysub=True)
            all_digits = False
            ch = lx.getc()
            continue
        elif ch == "=" and lx.pos - 1 > start and special_eq and _assignment_head(lx, start):
            peek = lx.getc()
            if peek == "(":
                compound_assignment(lx)
                all_digits = False
                compound = True
                ch = lx.getc()
                continue
            lx.ungetc(peek)
        if ch in _BREAK:
            lx.ungetc(ch)
            break
        # an ordinary character, and the run of ordinary characters after it
        if ch == "$":
            dollar = True
        if all_digits and ch not in _DIGITS:
            all_digits = False
        m = plain.match(text, lx.pos)
        if m is not None and not lx.holes:
            run = m.group()
            if all_digits and not run.isdigit():
                all_digits = False
            lx.pos = m.end()
        ch = lx.getc()
    return finish_word(lx, start, quoted, dollar, all_digits, compound)


def word_text(lx, start: int) -> str:
    raw = lx.text[start : min(lx.pos, lx.n)]
    return without_continuations(raw) if "\\\n" in raw else raw


def _ident(lx, start: int) -> bool:
    return bool(_IDENT.match(lx.text[start : lx.pos - 1].replace("\\\n", "")))


def _assignment_head(lx, start: int) -> bool:
    """token_is_assignment: the word so far is NAME, NAME[sub] or NAME+ (before `=`)."""
    head = lx.text[start : lx.pos - 1].replace("\\\n", "")
    if head.endswith("+"):
        head = head[:-1]
    return _is_assignment_name(head)


def finish_word(lx, start: int, quoted: bool, dollar: bool, all_digits: bool, compound: bool) -> str:
    word = word_text(lx, start)
    lx.value = word
    lx.quoted = quoted
    nxt = lx.text[lx.pos : lx.pos + 1] if lx.pos < lx.n else ""
    if all_digits and (nxt in ("<", ">") or lx.last in ("LESS_AND", "GREATER_AND")) and _NUMBER.match(word):
        return NUMBER
    if lx.allowopnbrc or word in _SPECIAL_WORDS:
        special = special_case(lx, word)
        if special is not None:
            return special
    if not dollar and not quoted and word in RESERVED and lx.reserved_ok():
        reserved = RESERVED[word]
        if _reserved(lx, reserved):
            return reserved
    command_position = lx.command_position(lx.last)
    if command_position and word in ASSIGNMENT_BUILTINS:
        lx.assignok = True
    if word[:1] == "{" and word.endswith("}") and nxt in ("<", ">") and _IDENT.match(word[1:-1]):
        return REDIR_WORD
    result = WORD
    if "=" in word and ((command_position and not lx.casepat) or lx.compassign) and _is_assignment(word):
        result = ASSIGNMENT_WORD
    if lx.last == "FUNCTION":
        lx.allowopnbrc = True
    elif lx.last in ("CASE", "SELECT", "FOR"):
        lx.expecting_in += 1
    return result


def _reserved(lx, tok: str) -> bool:
    if lx.casepat and tok != "ESAC":
        return False
    if tok == "TIME" and not time_ok(lx):
        return False
    if lx.casepat and lx.last in ("|", "("):
        return False
    if tok == "ESAC":
        lx.casepat = lx.casestmt = False
        lx.esacs_needed -= 1
    elif tok == "CASE":
        lx.casestmt = True
    elif tok == "COND_END":
        lx.condcmd = lx.condexpr = False
    elif tok == "COND_START":
        lx.condcmd = True
    elif tok == "{":
        lx.open_braces += 1
    elif tok == "}" and lx.open_braces:
        lx.open_braces -= 1
    return True


def time_ok(lx) -> bool:
    if lx.last in (None, ";", "\n"):
        return lx.before != "|"
    return lx.last in _TIME_OK


def special_case(lx, word: str) -> str | None:
    last, before = lx.last, lx.before
    if last == WORD and before in ("FOR", "CASE", "SELECT") and word == "in":
        if before == "CASE":
            lx.casepat = True
            lx.esacs_needed += 1
        if lx.expecting_in:
            lx.expecting_in -= 1
        return "IN"
    if lx.expecting_in and last in (WORD, "\n") and word == "in":
        if lx.casestmt:
            lx.casepat = True
            lx.esacs_needed += 1
        lx.expecting_in -= 1
        return "IN"
    if lx.expecting_in and last in ("\n", ";") and word == "do":
        lx.expecting_in -= 1
        return "DO"
    if last == WORD and before in ("FOR", "SELECT") and word == "do":
        if lx.expecting_in:
            lx.expecting_in -= 1
        return "DO"
    if lx.esacs_needed and last == "IN" and word == "esac":
        lx.esacs_needed -= 1
        lx.casepat = False
        return "ESAC"
    if lx.allowopnbrc:
        lx.allowopnbrc = False
        if word == "{":
            lx.open_braces += 1
            return "{"
    if last == ARITH_FOR_EXPRS and word == "do":
        return "DO"
    if last == ARITH_FOR_EXPRS and word == "{":
        lx.open_braces += 1
        return "{"
    if lx.open_braces and lx.reserved_ok() and word == "}":
        lx.open_braces -= 1
        return "}"
    if last == "TIME" and word == "-p":
        return "TIMEOPT"
    if last in ("TIME", "TIMEOPT") and word == "--":
        return "TIMEIGN"
    if lx.condexpr and word == "]]":
        return "COND_END"
    return None

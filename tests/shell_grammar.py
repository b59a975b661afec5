"""Hypothesis strategies that write bash scripts from a grammar of bash constructs.

Used by tests/test_bash_oracle.py to compare dslint's syntax verdict with `bash -n`. The grammar
covers what launch scripts use and where readers go wrong: every parameter-expansion operator
(with quotes, brackets, braces and nested expansions in its word), array subscripts and slices,
command and process substitution (with comments, `case` and here-documents inside), backquotes,
here-documents (`<<-`, quoted delimiters), `[[ =~ ]]`, arithmetic, functions, `case`, `\\`
continuations with comments and trailing spaces, CRLF line endings and zsh-only syntax. Scripts
are then broken on purpose (a token dropped or inserted) so that half of them are rejected.
"""

from __future__ import annotations

from hypothesis import strategies as st

NAMES = st.sampled_from(["A", "MODEL", "arr", "NPROC_PER_NODE", "x", "_v1"])
PLAIN = st.sampled_from(
    ["deepspeed", "train.py", "--lr", "1e-5", "a", "b=c", "--deepspeed=ds.json", "x.yaml", "0", "12", "-p", "--",
     "in", "do", "done", "fi", "then", "esac", "{", "}", "!", "[[", "]]", "time", "[", "]", "a]b", "{a,b}", "*.sh",
     "#", "a#b", "~", "@", "%", "=", "+=", "a=", "x[1]=2", "{x}"]
)  # fmt: skip
OPS = st.sampled_from(
    [":-", "-", ":=", "=", ":+", "+", ":?", "?", "#", "##", "%", "%%", "/", "//", "/#", "/%", "^", "^^", ",", ",,",
     ":1", ":1:2", ": -1", ":$n:$m", "@Q", "@U"]
)  # fmt: skip


@st.composite
def expansion(draw, depth=0):
    name = draw(NAMES)
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return "$" + name
    if kind == 1:
        return "${" + name + "}"
    if kind == 2:
        sub = draw(st.sampled_from(["@", "*", "0", "$i", "i+1", "-1"]))
        tail = draw(st.sampled_from(["", ":1", ":$start:$len", ":1:2", "#x", "/a/b"]))
        prefix = draw(st.sampled_from(["", "#", "!"]))
        return "${" + prefix + name + "[" + sub + "]" + tail + "}"
    if kind == 3:
        return "${#" + name + "}"
    op = draw(OPS)
    word = draw(op_word(depth))
    return "${" + name + op + word + "}"


@st.composite
def op_word(draw, depth):
    parts = draw(st.lists(st.sampled_from(["[default]", "[", "]", "{x}", "}", "{", "'q'", '"d q"', "a b", "8", "",
                                           '"$x"', "\\}", "$", "\\$", "'}'", '"}"', "#", "x/y", "*"]),
                          max_size=3))  # fmt: skip
    if depth < 2 and draw(st.booleans()):
        parts.append(draw(expansion(depth + 1)))
    if depth < 1 and draw(st.integers(0, 4)) == 0:
        parts.append("$(" + draw(simple_command(depth + 1)) + ")")
    return "".join(parts)


@st.composite
def word(draw, depth=0):
    kind = draw(st.integers(0, 16))
    if kind <= 5:
        return draw(PLAIN)
    if kind == 6:
        return "'" + draw(st.sampled_from(["a b", "it''s", "$x", '"', "\\", "a\nb"])) + "'"
    if kind == 7:
        inner = draw(st.lists(st.sampled_from(["a", " ", "$x", "${x:-y}", "\\\"", "'", "`echo`", "$(echo)", "[", "}"]),
                              max_size=3))  # fmt: skip
        return '"' + "".join(inner) + '"'
    if kind in (8, 9):
        return draw(expansion(depth))
    if kind == 10 and depth < 2:
        inner = draw(command_list(depth + 1))
        # `EOF)` on a here-document's last line is bash's compatibility case, where bash's line
        # numbers after it drift in ways dslint does not follow (see the report); close on a new line
        return "$(" + inner + ("\n)" if "<<" in inner else ")")
    if kind == 11:
        return "`" + draw(st.sampled_from(["echo a", "# comment", "date", "echo \\`x\\`", "a (", ""])) + "`"
    if kind == 12:
        return "$((" + draw(st.sampled_from(["1 + 2", "x * (y - 1)", "${#a}", "a ? b : c", "$(echo 1) + 1", "(1", "1 )"])) + "))"
    if kind == 13 and depth < 2:
        return draw(st.sampled_from(["<(", ">("])) + draw(simple_command(depth + 1)) + ")"
    if kind == 14:
        return draw(st.sampled_from(["$'a\\'b'", "$\"x\"", "@(a|b)", "!(x)", "<node2_ip>", "<Specify path>", "a=(1 2)",
                                     "a=(", "x[${i}]=1", "$", "$$", "$#", "$@", "\\", "\\ ", "a\\;b"]))  # fmt: skip
    return draw(PLAIN) + draw(expansion(depth))


REDIRECT = st.sampled_from([">out", "2>&1", ">>log", "<in", "&>f", "2>/dev/null", "<<<word", ">&-", "{fd}>f", "3<&0", "> "])


@st.composite
def simple_command(draw, depth=0):
    words = draw(st.lists(word(depth), min_size=1, max_size=5))
    if draw(st.integers(0, 4)) == 0:
        words.insert(draw(st.integers(0, len(words))), draw(REDIRECT))
    if draw(st.integers(0, 6)) == 0:
        words.insert(0, draw(st.sampled_from(["A=1", "CUDA_VISIBLE_DEVICES=0,1", "x+=y", "arr=(a b)"])))
    sep = draw(st.sampled_from([" ", " ", " ", " \\\n  ", " \\ \n  ", " \\\n  `# note` \\\n  ", " \\\n# c\n  "]))
    return sep.join(words)


@st.composite
def heredoc(draw):
    delim = draw(st.sampled_from(["EOF", "'EOF'", '"EOF"', "\\EOF", "E_1"]))
    dash = draw(st.booleans())
    body = draw(st.lists(st.sampled_from(["line", "$x ${y:-z}", "\tindented", "EOFX", "a \\", "", "`x`", ")"]), max_size=3))
    end = delim.strip("'\"\\")
    closing = ("\t" if dash and draw(st.booleans()) else "") + end if draw(st.integers(0, 6)) else "NOPE"
    cmd = draw(st.sampled_from(["cat", "cat > ds.json", "python - "]))
    return f"{cmd} <<{'-' if dash else ''}{delim}\n" + "".join(b + "\n" for b in body) + closing


@st.composite
def command(draw, depth=0):
    kind = draw(st.integers(0, 14 if depth < 3 else 0))
    if kind <= 4:
        return draw(simple_command(depth))
    inner = command_list(depth + 1)
    if kind == 5:
        return f"if {draw(simple_command(depth))}; then\n{draw(inner)}\n" + draw(
            st.sampled_from(["fi", "else\n:\nfi", "elif a; then b; fi", ""])
        )
    if kind == 6:
        return f"for {draw(NAMES)} in {draw(word(depth))} {draw(word(depth))}; do\n{draw(inner)}\ndone"
    if kind == 7:
        return f"while {draw(simple_command(depth))}; do {draw(inner)}; done"
    if kind == 8:
        pattern = draw(st.sampled_from(["a", "a|b", "(x)", "*", "@(a|b)", "[ab]*", "'q'", "in", "esac"]))
        end = draw(st.sampled_from([";;", ";&", ";;&", ""]))
        return f"case {draw(word(depth))} in\n  {pattern}) {draw(inner)} {end}\n  *) ;;\nesac"
    if kind == 9:
        name = draw(st.sampled_from(["f", "run_train", "a-b"]))
        form = draw(st.sampled_from(["{name}() {{\n{body}\n}}", "function {name} {{ {body}; }}", "function {name}() ( {body} )"]))
        return form.format(name=name, body=draw(inner))
    if kind == 10:
        return draw(st.sampled_from(["( ", "{ "])) + draw(inner) + draw(st.sampled_from([" )", "; }", " }"]))
    if kind == 11:
        return "[[ " + draw(st.sampled_from(["-n $x", "$x =~ ^[0-9]+$", "$a == @(x|y)", "a < b", "( -f f ) && -d d",
                                              "$x =~ (a|b)c", "x", "! -z $y", "-n", "a b", "$x =~ a|b"])) + " ]]"  # fmt: skip
    if kind == 12:
        return draw(st.sampled_from(["(( i++ ))", "(( x = (1 + 2) * 3 ))", "for ((i=0; i<3; i++)); do :; done",
                                     "for ((i=0; i<3)); do :; done", "((a) || (b))", "let x=1"]))  # fmt: skip
    if kind == 13:
        return draw(heredoc())
    return draw(st.sampled_from(["x=$(cat <<EOF\nhi\nEOF\n)", "y=$(case $1 in a) echo a;; esac)", "z=$(echo a # c\n)",
                                 "echo $( (cd x) )", "v=`cat <<EOF\nbody\nEOF`"]))  # fmt: skip


@st.composite
def command_list(draw, depth=0):
    cmds = draw(st.lists(command(depth), min_size=1, max_size=3))
    out = cmds[0]
    for cmd in cmds[1:]:
        out += draw(st.sampled_from(["\n", "; ", " && ", " || ", " | ", " &\n", "\n\n"])) + cmd
    return out


ZSH = st.sampled_from(["echo ${(j:,:)arr}", "for x (a b) { echo $x }", "print -P %F{red}", "repeat 3 echo hi",
                       "diff =(ls) =(ls -a)", "echo ${x:u}", "[[ $x == (a|b) ]]", "setopt extendedglob",
                       "echo $arr[1]", "f() { } always { }", "echo **/*(.)"])  # fmt: skip
BREAKERS = st.sampled_from([")", "(", ";;", "fi", "done", "}", "{", "esac", "then", "do", "'", '"', "`", "$(", "${",
                            "\n", "&&", "|", "<", ">", "\\", "in", "[[", "]]", "<<EOF", "!", "function", "case x in"])  # fmt: skip


@st.composite
def script(draw):
    text = draw(command_list())
    if draw(st.integers(0, 5)) == 0:
        text += "\n" + draw(ZSH)
    mutation = draw(st.integers(0, 3))
    if mutation == 1 and text:  # drop a character
        k = draw(st.integers(0, len(text) - 1))
        text = text[:k] + text[k + 1 :]
    elif mutation == 2:  # insert a token
        k = draw(st.integers(0, len(text)))
        text = text[:k] + " " + draw(BREAKERS) + " " + text[k:]
    text += draw(st.sampled_from(["\n", "\n", "", " \\\n", "\n\n"]))
    if draw(st.integers(0, 9)) == 0:
        text = text.replace("\n", "\r\n")
    return text

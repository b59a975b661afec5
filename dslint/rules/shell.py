"""Launch scripts that bash reads differently from how they look.

Each rule reports one kind of continuation or environment trap found by the static shell
reader (dslint/documents/shell/traps.py), at the exact line; the reader returns the facts
(``Trap``), the wording is here. Fixes change what bash runs, so they
are all unsafe: they make the script do what it appears to say.
"""

from __future__ import annotations

from dslint.diagnostics import Edit, Finding, Fix, Severity
from dslint.documents.model import SCRIPT
from dslint.source import Span
from dslint.rule import rule


def _traps(document, name: str):
    script = document.script
    if script is None:
        return []
    return [trap for trap in script.continuation_traps if trap.code_name == name]


def _blank_line_note(trap) -> str:
    """What the blank line does to the command: the headline says where it ends."""
    if trap.lost_env:
        return "the `VAR=value \\` lines before it only set shell variables, and the command after the blank line runs without them in its environment"
    if trap.orphans:
        return f"`{trap.orphans[:40]}` and the lines after it run as a separate command, not as arguments"
    return "nothing is lost here, but the trailing `\\` is misleading"


def _comment_note(trap) -> str:
    if trap.orphans:
        return f"`{trap.orphans[:40]}` and the lines after it run as a separate command"
    return "nothing after it belonged to the command, but the `\\` before it is misleading"


def _them(names) -> str:
    return "it" if len(names) == 1 else "them"


def _trap_line(trap) -> tuple:
    """(source, line number, the line without trailing blanks) of a trap."""
    source = trap.span.source
    line = source.position(trap.span.start)[0]
    return source, line, source.line_text(line).rstrip(" \t")


def _whole_line(source, line: int) -> Edit:
    start = source.line_start(line)
    end = source.line_start(line + 1) if line < source.line_count else len(source.text)
    return Edit(source, start, end, "")


@rule("DS601", "blank-line-after-continuation", severity="error", kinds=(SCRIPT,), fix="safe or unsafe")
def blank_line_after_continuation(document, context):
    """A blank line follows a line that ends in `\\`: the command ends at the blank line.

    ## What it checks
    A line ending in a backslash continues the command onto the next line. When the next line
    is empty, bash ends the command there. `VAR=value \\` lines before the blank line then only
    set shell variables (the launcher never sees them), and `--flag value` lines after it run
    as a command of their own (`--model: command not found`). Users hit this often when they
    comment out or delete a line in a long ms-swift or DeepSpeed command
    (modelscope/ms-swift#5328).

    A `\\` before a CRLF line ending does not continue the line at all (bash escapes the
    carriage return): such lines are left to `crlf-line-endings`, and deleting the blank line
    would not help.

    ## Why it matters
    The launcher runs without its environment (one process instead of eight, the wrong GPUs),
    or the arguments after the blank line fail as a command of their own.

    ## Example
    ```sh
    NPROC_PER_NODE=8 \\

    swift sft --model Qwen/Qwen2.5-7B-Instruct
    ```
    Use instead:
    ```sh
    NPROC_PER_NODE=8 \\
    swift sft --model Qwen/Qwen2.5-7B-Instruct
    ```

    ## Fix safety
    Unsafe: deleting the blank line joins the two parts into one command, which changes what
    runs (to what the script appears to say). When nothing is lost, or when the next line
    cannot be arguments (`((i++))`, `if`, `}`: joining would not parse), the fix removes the
    trailing `\\` instead, which is safe: bash already ends the command there.
    """
    for trap in _traps(document, "blank-line-after-continuation"):
        source = trap.span.source
        line = source.position(trap.span.start)[0]
        harmless = trap.harmless
        if harmless or not _joinable(_next_code_line(source, line)):
            # bash ends the command at the blank line already; joining would make the next
            # statement (`((i++))`, `if`, `}`) an argument, which bash cannot parse
            fix = Fix.safe("Remove the trailing `\\` (bash ends the command here already)", _trailing_backslash(source, line - 1))
        else:
            fix = Fix.unsafe("Delete the blank line", _whole_line(source, line))
        yield Finding(trap.span, "blank line after a line ending in `\\`: the command ends at the blank line", fix=fix,
                      severity=Severity.WARNING if harmless else None, note=_blank_line_note(trap))


_RESERVED = frozenset({"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac", "function", "select",
                       "time", "in", "!", "{", "}", "[[", "]]", "coproc"})


def _next_code_line(source, line: int) -> str:
    for number in range(line + 1, source.line_count + 1):
        text = source.line_text(number).strip()
        if text and not text.startswith("#"):
            return text
    return ""


def _joinable(follow: str) -> bool:
    """Can this line become the arguments of the command before it?"""
    if not follow or follow.startswith(("(", ")", "{", "}", ";", "&", "|", "<", ">")):
        return False
    return follow.split()[0] not in _RESERVED


def _trailing_backslash(source, line: int) -> Edit:
    text = source.line_text(line)
    content = text.rstrip(" \t")
    start = source.line_start(line) + len(content) - 1  # the backslash
    while start > source.line_start(line) and source.text[start - 1] in " \t":
        start -= 1
    return Edit(source, start, source.line_start(line) + len(content), "")


@rule("DS602", "comment-in-continuation", severity="error", kinds=(SCRIPT,), fix="unsafe")
def comment_in_continuation(document, context):
    """A comment line sits inside a command continued with `\\`: the command ends there.

    ## What it checks
    In bash a `#` at the start of a word starts a comment that runs to the end of the line,
    backslash included. A commented-out argument in the middle of a continued command
    therefore ends the command; the arguments after it run as a separate command
    (modelscope/ms-swift#5310).

    ## Why it matters
    Everything after the comment is dropped from the launch and run as a broken command.

    ## Example
    ```sh
    swift sft \\
        --model Qwen/Qwen2.5-7B-Instruct \\
        # --deepspeed zero2 \\
        --learning_rate 1e-4
    ```
    Use instead: move the commented line below the command, or delete it.

    ## Fix safety
    Unsafe: deleting the comment line makes the following arguments part of the command again.
    """
    for trap in _traps(document, "comment-in-continuation"):
        line = trap.span.source.position(trap.span.start)[0]
        harmless = trap.harmless
        yield Finding(
            trap.span,
            "comment line inside a `\\`-continued command: bash ends the command at the comment",
            note=_comment_note(trap),
            fix=None if harmless else Fix.unsafe("Delete the comment line", _whole_line(trap.span.source, line)),
            severity=Severity.WARNING if harmless else None,
        )


@rule("DS603", "space-after-backslash", severity="error", kinds=(SCRIPT,), fix="unsafe")
def space_after_backslash(document, context):
    """Spaces or tabs follow the `\\` meant to continue a line: it does not continue.

    ## What it checks
    `\\` continues a line only when it is the very last character (GNU Bash Reference Manual,
    §3.1.2.1 Escape Character: "If a `\\newline` pair appears ... it is treated as a line
    continuation"). With whitespace after it,
    bash escapes the space instead and ends the command at the end of the line; the next lines
    run as separate commands. The whitespace is invisible in most editors.

    ## Why it matters
    The command ends early: the remaining arguments are lost and run as a command of their own.

    ## Example
    `--output_dir out \\␠␠` followed by `--seed 42`.
    Use instead: `--output_dir out \\` with nothing after the backslash.

    ## Fix safety
    Unsafe: removing the whitespace joins the next line into the command.
    """
    for trap in _traps(document, "space-after-backslash"):
        source, line, stripped = _trap_line(trap)
        fix = None
        if stripped.endswith("\\"):
            start = source.line_start(line) + len(stripped)
            fix = Fix.unsafe("Remove the whitespace after the backslash", Edit(source, start, source.line_end(line), ""))
        yield Finding(trap.span, "whitespace after the `\\` at the end of this line", fix=fix,
                      note="bash reads `\\ ` as an escaped space, not a line continuation, so the command ends here and the next "
                      "line runs as a separate command")


@rule("DS604", "crlf-line-endings", severity="error", kinds=(SCRIPT,))
def crlf_line_endings(document, context):
    """The script has Windows (CRLF) line endings.

    ## What it checks
    bash splits words on space, tab and newline only (`IFS`, GNU Bash Reference Manual §3.5.7),
    so it does not treat `\\r` as whitespace: `\\` followed by `\\r\\n` does not continue the line,
    and every last word of a line carries a trailing `\\r` (`--output_dir out\\r`,
    `$'\\r': command not found`).

    ## Why it matters
    Continuations break and every last argument carries a `\\r`, so paths and values no longer
    match (`out\\r` is a different directory, `8\\r` is not a number).

    ## Example
    A script saved by a Windows editor.
    Use instead: convert it to LF line endings (`dos2unix train.sh`, or your editor's setting),
    and add `*.sh text eol=lf` to `.gitattributes`.
    """
    for trap in _traps(document, "crlf-line-endings"):
        yield Finding(
            trap.span,
            "the file has Windows (CRLF) line endings",
            note="bash keeps the carriage return as part of each line, so a `\\` at the end of a line does not continue the command "
            "and every value ends in `\\r`",
            help="convert the file to LF line endings",
        )


@rule("DS605", "trailing-backslash-at-eof", severity="warning", kinds=(SCRIPT,), fix="safe")
def trailing_backslash_at_eof(document, context):
    """The last line of the script ends in `\\`.

    ## What it checks
    A continuation at the very end of the file continues into nothing (GNU Bash Reference
    Manual §3.1.2.1: the `\\newline` pair is removed; here nothing follows it). bash accepts it, but it
    usually means the last argument of the command was deleted, or the file was cut. Only a `\\`
    that is really the end of the file counts: with a blank line after it, the command ends at
    that blank line (`blank-line-after-continuation` says so), and a line appended later stays
    a command of its own.

    ## Why it matters
    Nothing fails today, but the next line appended to the script silently becomes arguments
    of this command.

    ## Example
    `    --padding_free true \\` as the last line.
    Use instead: `    --padding_free true`.

    ## Fix safety
    Safe: bash ignores the backslash; removing it changes nothing that runs.
    """
    for trap in _traps(document, "trailing-backslash-at-eof"):
        source, line, stripped = _trap_line(trap)
        fix = None
        if stripped.endswith("\\"):
            keep = stripped[:-1].rstrip(" \t")
            start = source.line_start(line) + len(keep)
            fix = Fix.safe("Remove the trailing backslash", Edit(source, start, source.line_end(line), ""))
        yield Finding(trap.span, "the last command ends with a line continuation `\\` and nothing follows it", fix=fix,
                      note="bash accepts this, but a line added at the end later silently becomes part of the command")


@rule("DS606", "env-after-command", severity="error", kinds=(SCRIPT,))
def env_after_command(document, context):
    """An environment assignment is written after the launch command.

    ## What it checks
    `VAR=value` sets the environment of a command only *before* its name. Written after it,
    bash passes `CUDA_VISIBLE_DEVICES=0` to the program as an argument, which the training
    script's argument parser rejects (HfArgumentParser: "Some specified arguments are not
    used"), and the variable is never set (modelscope/ms-swift#3681).

    ## Why it matters
    The training script stops on an argument it does not know, and the variable is never set.

    ## Example
    ```sh
    deepspeed train.py --deepspeed ds.json CUDA_VISIBLE_DEVICES=0
    ```
    Use instead:
    ```sh
    CUDA_VISIBLE_DEVICES=0 deepspeed train.py --deepspeed ds.json
    ```
    """
    for trap in _traps(document, "env-after-command"):
        yield Finding(
            trap.span,
            f"`{trap.word}` after the command name is an argument of `{trap.command}`, not its environment",
            note=f"bash passes it to `{trap.command}` as an argument instead of setting {trap.names[0]} in its environment",
            help="put it before the command",
        )


@rule("DS607", "env-not-exported", severity="warning", kinds=(SCRIPT,), fix="unsafe")
def env_not_exported(document, context):
    """A launcher variable is set on its own line without `export`: the launcher never sees it.

    ## What it checks
    `NPROC_PER_NODE=8` on a line of its own sets a shell variable. Programs started later get
    only exported variables, so `swift sft` on the next line runs one process instead of eight
    (ms-swift reads NPROC_PER_NODE and NNODES from its environment, swift/cli/main.py:30-35).
    The same holds for CUDA_VISIBLE_DEVICES, FORCE_TORCHRUN and the other variables launchers
    read (modelscope/ms-swift#7836).

    ## Why it matters
    The launcher starts with its defaults instead: one process, all GPUs, no forced torchrun.

    ## Example
    ```sh
    NPROC_PER_NODE=8
    swift sft --model Qwen/Qwen2.5-7B-Instruct
    ```
    Use instead:
    ```sh
    export NPROC_PER_NODE=8
    swift sft --model Qwen/Qwen2.5-7B-Instruct
    ```

    ## Fix safety
    Unsafe: exporting the variable changes the environment of every later command.
    """
    for trap in _traps(document, "env-not-exported"):
        source = trap.span.source
        line = source.position(trap.span.start)[0]
        text = source.line_text(line)
        fix = None
        if "\\" not in text and text[: len(text) - len(text.lstrip())] == "" and "=" in text and " " not in text.split("=", 1)[0]:
            fix = Fix.unsafe("Export the variable", Edit(source, source.line_start(line), source.line_start(line), "export "))
        names = ", ".join(f"`{name}`" for name in trap.names)
        verb = "is a shell variable" if len(trap.names) == 1 else "are shell variables"
        hint = "the line ends without the `\\` that would continue it into the command, so " if trap.continued else ""
        it = _them(trap.names)
        yield Finding(trap.span, f"{names} {verb} here, not exported to `{trap.command}` on line {trap.command_line}", fix=fix,
                      note=f"{hint}`{trap.command}` does not get {it} in its environment (unless the caller already exported {it})",
                      help=None if fix else "use `export`, or put the assignment in front of the command")


@rule("DS608", "shell-runtime-error", severity="error", kinds=(SCRIPT,))
def shell_runtime_error(document, context):
    """Text that `bash -n` accepts but that certainly fails when its line runs.

    ## What it checks
    A string run by `eval`, `bash -c` or `sh -c` is parsed only when the line runs, so
    `bash -n` never sees it. When the script decides the string (`CMD="deepspeed train.py ("`
    then `eval "$CMD"`), dslint parses it with bash 5.2's grammar, as bash will, and reports
    bash's complaint once, at the command that runs the string. Strings built from values
    the script does not decide (arguments, the caller's environment, command output) are not
    judged.

    Likewise `bash -n` matches only the braces of `${...}`; the parameter inside is parsed when
    the word is expanded (bash's subst.c `parameter_brace_expand`), and `${NUM.GPUS}`,
    `${OUT DIR}`, `${ a}`, `${a:}` or `${}` then stop the command with "bad substitution"
    (checked against bash 5.2 in tests/test_shell.py). These are reported once per command,
    at the first one (bash abandons the command there), and only where the command certainly
    runs: a top-level command that is not inside `if`, a loop, a function, or after `&&`/`||`.

    ## Why it matters
    The launch line stops with a syntax error after everything before it ran: the job fails
    late, or a setup step silently does nothing.

    ## Example
    ```sh
    CMD="deepspeed train.py --deepspeed ds.json ("
    eval "$CMD"
    ```
    Use instead:
    ```sh
    CMD="deepspeed train.py --deepspeed ds.json"
    eval "$CMD"
    ```
    And `torchrun --nproc_per_node ${NUM.GPUS} train.py`: use `${NUM_GPUS}`.
    """
    script = document.script
    if script is None:
        return
    for failure in script.runtime_failures:
        yield Finding(failure.span, failure.message, note=failure.note)


@rule("DS609", "unended-heredoc", severity="warning", kinds=(SCRIPT,))
def unended_heredoc(document, context):
    """A here-document's end line never comes: the rest of the script is its text, not commands.

    ## What it checks
    Each `<<WORD` (or `<<-WORD`) whose line `WORD` does not follow. bash reads up to the end of
    the file as the document's text and warns `here-document at line N delimited by
    end-of-file (wanted 'WORD')` (bash 5.2 make_here_document in make_cmd.c); `bash -n` exits 0.
    dslint's reading of the script is bash's own (tests/test_bash_oracle.py compares them).

    ## Why it matters
    Every command after the `<<` is text fed to the command that reads the document: the
    launch below it never runs, and the script ends without an error. A misspelled end
    (`EOF ` with a trailing space, `EOF2`, an indented `EOF` under `<<`) is the usual cause.

    ## Example
    ```sh
    cat > ds_config.json <<EOF
    {"train_micro_batch_size_per_gpu": 4}
    EOF2
    deepspeed train.py --deepspeed ds_config.json
    ```
    Use instead:
    ```sh
    cat > ds_config.json <<EOF
    {"train_micro_batch_size_per_gpu": 4}
    EOF
    deepspeed train.py --deepspeed ds_config.json
    ```

    ## Fix safety
    No fix: which line was meant to end the document is for you to say.
    """
    script = document.script
    if script is None:
        return
    source = script.source
    for line, delimiter, _ in [entry for entry in script.unended_heredocs if entry[2]]:
        launch = _first_launch_after(source, line)
        note = f"bash -n: here-document at line {line} delimited by end-of-file (wanted `{delimiter}')"
        if launch is not None:
            note += f"; `{launch[1]}` on line {launch[0]} is its text and never runs"
        yield Finding(Span(source, source.line_start(line), source.line_end(line)), f"here-document `{delimiter}` is never ended: the rest of the file is its text",
                      note=note)


def _first_launch_after(source, line: int) -> tuple[int, str] | None:
    """(line, its first words) of the first line after ``line`` that starts with a launcher's name."""
    from dslint.documents.shell.launchers import is_launcher_name

    lines = source.text.split("\n")
    for number in range(line + 1, len(lines) + 1):
        words = lines[number - 1].split()
        name = words[0].rsplit("/", 1)[-1] if words else None
        if is_launcher_name(name):
            shown = " ".join(words[:4])
            return number, shown + (" ..." if len(words) > 4 else "")
    return None

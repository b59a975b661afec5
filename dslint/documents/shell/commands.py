"""Simple commands: their words, prefix assignments, wrappers, builtins' side effects, here-documents.

``Commands`` is given the text being read, the variable table, the expander, the assignments,
and ``run_string``, the walker's reader of a string that ``eval``/``bash -c``/``sbatch --wrap`` runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from dslint.source import Span

from .arith import arith_on_table
from .assignments import Assignments
from .expand import Expander
from .model import Assignment, Command, Heredoc, Redirect, Script, Value, Word, split_word
from .quoting import unquote_word
from .remote import REMOTE_SHELLS, remote_call
from .textmap import TextMap
from .variables import ASSIGN_WORD_RE, NAME_RE, Ctx, Var, VarTable, record_assignment
from .wrappers import EnvWord, unwrap

_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_WRITES = frozenset({">", ">>", ">|", "&>", "&>>"})  # the redirections that write a file
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
_READ_OPTIONS_WITH_ARG = frozenset({"-a", "-d", "-p", "-t", "-n", "-N", "-u", "-i", "-C", "-c", "-O", "-s"})
_HEREDOC_READ_OPTIONS_WITH_ARG = frozenset({"-d", "-a", "-p", "-n", "-N", "-t", "-u", "-i"})

# run_string(command, words, ctx, shell): read the string the words make as a script, in the same
# shell ("same"), a child shell ("child") or a shell on another host ("remote")
RunString = Callable[[Command, list, Ctx, str], None]


class Commands:
    def __init__(self, tm: TextMap, table: VarTable, expander: Expander, assignments: Assignments,
                 script: Script, events: list, run_string: RunString):
        self.tm = tm
        self.table = table
        self.expander = expander
        self.assignments = assignments
        self.script = script
        self.events = events
        self.run_string = run_string
        self.hoisted: dict[int, int] = {}  # command start byte -> leading segments already run
        # command start byte -> words tree-sitter put after a redirection's target (bash: arguments)
        self.spilled: dict[int, list] = {}

    def segments(self, node) -> list[list]:
        """The children of a command node, cut where bash would end the command.

        tree-sitter-bash joins ``A=1 B=2<newline>cmd`` (and ``A=1 B=2 # note<newline>cmd``)
        into one command; bash runs the assignments as a statement of their own.
        """
        segments: list[list] = [[]]
        prev_end = None
        for child in node.children:
            if child.type == "comment":
                segments.append([])
                prev_end = child.end_byte
                continue
            if prev_end is not None and segments[-1] and self.tm.newline_between(prev_end, child.start_byte):
                segments.append([])
            segments[-1].append(child)
            prev_end = child.end_byte
        return [seg for seg in segments if seg]

    def hoist_assignments(self, node, ctx: Ctx) -> None:
        """Run assignment lines that tree-sitter folded into the first command of a compound statement."""
        first = node
        while first is not None and first.type != "command":
            if first.type not in ("pipeline", "list", "redirected_statement", "negated_command"):
                return
            first = next((c for c in first.children if c.is_named and c.type != "comment"), None)
        if first is None:
            return
        segs = self.segments(first)
        if len(segs) < 2:
            return
        for seg in segs[:-1]:
            self.simple_command(seg, ctx._replace(background=False))
        self.hoisted[first.start_byte] = len(segs) - 1

    def command(self, node, ctx: Ctx):
        segments = self.segments(node)
        skip = self.hoisted.pop(node.start_byte, 0)
        spilled = self.spilled.get(node.start_byte)
        if spilled and segments:
            segments[-1] = segments[-1] + spilled
        result = None
        for seg in segments[skip:]:
            result = self.simple_command(seg, ctx)
        return result

    def simple_command(self, parts, ctx: Ctx):
        self.expander.ctx = ctx
        tm, table = self.tm, self.table
        prefixes = []
        name_node = None
        arg_nodes = []
        redirects = []
        for child in parts:
            t = child.type
            if t in _REDIRECTS:
                redirects.append(child)
            elif name_node is None and t == "variable_assignment":
                prefixes.append(child)
            elif name_node is None and child.is_named:
                name_node = child
            elif child.is_named:
                arg_nodes.append(child)
        if name_node is None:
            if prefixes:
                self.assignments.assign_statement(prefixes, ctx, parts[0])
            if redirects:
                self.heredocs(redirects, None)
            return None
        words = self.expander.fields([name_node, *arg_nodes])
        span = tm.span_bytes(parts[0].start_byte, parts[-1].end_byte)
        # prefix assignments: evaluated after the words, each one seeing the ones before it
        saved = table.share()
        env: list[Assignment] = []
        for pa in prefixes:
            name, name_node_, op, value_node, subscript = self.assignments.assignment_parts(pa)
            word, vparts, array = self.assignments.assign_value(pa, value_node, name, op, subscript)
            aspan = tm.span(pa)
            table.set_var(name, Var(vparts, True, aspan, "prefix", array))
            name_span = tm.span(name_node_) if name_node_ is not None else aspan
            env.append(record_assignment(self.script, Assignment(name, name_span, word, aspan, True, "prefix"), ctx))
        if not words:
            # nothing left to run (e.g. `A=1 $EMPTY`): the assignments stay in the shell
            table.use(saved)
            if prefixes:
                self.assignments.assign_statement(prefixes, ctx, parts[0])
            return None
        prefix_vars = table.vars  # the command keeps this table; the next write copies it
        table.use(saved)
        cmd = self.build_command(words, env, prefix_vars, span, ctx)
        if redirects:
            self.heredocs(redirects, cmd)
        return cmd

    def build_command(self, words: list[Word], env: list[Assignment], visible: dict, span: Span, ctx: Ctx) -> Command:
        unwrapped = unwrap(words)
        recorded = {id(e): self.env_assignment(e, ctx) for e in unwrapped.written}
        extra_env = [recorded[id(e)] for e in unwrapped.env]
        index, wrappers, clears, unsets = unwrapped.index, unwrapped.wrappers, unwrapped.clears, unwrapped.unset
        extra = _passed_on(unwrapped, visible) + [
            (a.name, Value(a.value.value if a.value else None, a.span, "prefix", a.value.assumed if a.value else None))
            for a in extra_env
        ]
        if unwrapped.python is not None:  # `uv run train.py`: the environment's Python runs it
            tool = unwrapped.python
            name, args = Word(tool.span, tool.raw, "python", False, "python", False, (("python", "python"),)), words[index:]
        else:
            name, args = words[index], words[index + 1 :]
        cmd = Command(
            span=span,
            name=name,
            args=args,
            env=env + extra_env,
            in_function=ctx.function,
            conditional=ctx.conditional,
            in_loop=ctx.in_loop,
            from_eval=ctx.from_eval,
            background=ctx.background,
            branch=ctx.branch,
            tested=ctx.tested,
            wrappers=wrappers,
            clears_env=clears,
            runner=ctx.runner,
            subshell=ctx.subshell or ctx.child_shell,
            _scope=(visible, extra, unsets, clears, ctx.child_shell),
        )
        self.script.commands.append(cmd)
        self.events.append(("command", cmd, ctx, None))
        self.after_command(cmd, ctx)
        return cmd

    def after_command(self, cmd: Command, ctx: Ctx) -> None:
        """Side effects of builtins on the variable table; strings run as scripts are read."""
        base = cmd.basename
        if base is None:
            return
        strings = _strings_run(base, cmd.args)
        if strings is None:
            self._builtin_effects(base, cmd)
            return
        for words, shell in strings:
            self.run_string(cmd, words, ctx, shell)

    def _builtin_effects(self, base: str, cmd: Command) -> None:
        args = cmd.args
        table = self.table
        if base in ("read", "mapfile", "readarray"):
            for name in _read_names(base, args):
                if NAME_RE.match(name):
                    table.make_unknown(name, cmd.span)
        elif base == "getopts" and len(args) >= 2 and args[1].value:
            table.make_unknown(args[1].value, cmd.span)
            table.make_unknown("OPTARG", cmd.span)
        elif base == "printf" and len(args) >= 2 and args[0].value == "-v" and args[1].value:
            table.make_unknown(args[1].value.split("[")[0], cmd.span)
        elif base == "let":
            self._let(cmd)
        elif base == "set":
            table.allexport = _allexport_after_set(args, table.allexport)
        elif base in table.func_assigns:
            assigns, exported = table.func_assigns[base]
            for name in assigns:
                table.make_unknown(name, cmd.span, export=name in exported)

    def _let(self, cmd: Command) -> None:
        for w in cmd.args:
            if w.value is not None:
                arith_on_table(self.table, w.value, w.assumed)
            else:
                m = ASSIGN_WORD_RE.match(w.raw.strip("\"'"))
                if m:
                    self.table.make_unknown(m.group(1), cmd.span)

    # ---- here-documents ----

    def heredocs(self, redirects, cmd: Command | None, pipeline: tuple = ()) -> None:
        """The here-documents and the file written by ``cmd``'s redirections (or by the last
        command of ``pipeline``, when the redirections are a whole pipeline's)."""
        target: Word | None = None
        docs = []
        recorded = len(self.script.redirects)
        stack = list(redirects)
        while stack:
            r = stack.pop(0)
            if r.type == "file_redirect":
                dest = r.child_by_field_name("destination")
                op = _redirect_op(r)
                if op in _WRITES and dest is not None:
                    fs = self.expander.fields([dest])
                    if fs:
                        target = target or fs[0]
                        writer = cmd or (pipeline[-1] if pipeline else None)
                        self.script.redirects.append(Redirect(self.tm.span(r), fs[0], writer, self.expander.ctx.function,
                                                              op.endswith(">>"), False, pipeline or ((cmd,) if cmd else ())))
            elif r.type == "heredoc_redirect":
                docs.append(r)
                stack.extend(c for c in r.children if c.type == "file_redirect")
        if target is None and cmd is not None and cmd.basename == "tee":
            for w in cmd.args:
                if w.value is None or not w.value.startswith("-"):
                    target = w
                    break
        for r in docs:
            self.heredoc(r, target, cmd)
        if docs:
            for redirect in self.script.redirects[recorded:]:
                redirect.heredoc = True  # what it writes is the here-document's text (Script.heredocs)

    def heredoc(self, node, target: Word | None, cmd: Command | None) -> None:
        read = self.expander.heredoc_value(node)
        if read is None:
            return
        span, value, assumed, delimiter, quoted = read
        located = self.expander.heredoc_located(node) if target is not None else None
        self.script.heredocs.append(Heredoc(span, target, value, delimiter, not quoted, cmd, located))
        if cmd is not None and cmd.basename == "read":
            self.read_heredoc(cmd, value, assumed)

    def read_heredoc(self, cmd: Command, value: str | None, assumed: str | None) -> None:
        """``read -r -d '' CMD <<EOF ... EOF``: CMD is the whole body (no NUL ends it sooner),
        without the blanks IFS trims at both ends; without ``-r`` backslashes escape, and a
        backslash-newline joins lines. Other uses of ``read`` stay unknown (after_command)."""
        options = _read_whole_options(cmd.args)
        if options is None:
            return
        name, raw = options
        ifs = next((a for a in cmd.env if a.name == "IFS"), None)
        if ifs is not None and (ifs.value is None or ifs.value.value != ""):
            return  # a custom IFS: the trimming is not the default one

        def read_as(text: str | None) -> str | None:
            if text is None:
                return None
            if not raw:
                text = unquote_word(text)
            return text if ifs is not None else text.strip(" \t\n")

        exported = self.table.exported(name)
        parts = ((read_as(value), read_as(assumed)),)
        self.table.set_var(name, Var(parts, exported, cmd.span, "assignment"))
        word = Word(cmd.span, self.tm.source.text[cmd.span.start : cmd.span.end], parts[0][0], False, parts[0][1], False, parts)
        record_assignment(self.script, Assignment(name, cmd.span, word, cmd.span, exported, "plain"), self.expander.ctx)

    # ---- the environment that wrappers (env, mpirun -genv) give the program ----

    def env_assignment(self, env: EnvWord, ctx: Ctx) -> Assignment:
        if env.value is not None:
            return self.mpi_env(env.word, env.value, ctx)
        return record_assignment(self.script, _env_word_assignment(env.word, env.name), ctx)

    def mpi_env(self, name_word: Word, value_word: Word, ctx: Ctx) -> Assignment:
        """``mpirun -genv NAME VALUE``: NAME=VALUE in the program's environment."""
        span = Span(name_word.span.source, name_word.span.start, max(name_word.span.end, value_word.span.end))
        return record_assignment(
            self.script, Assignment(name_word.value or "", name_word.span, value_word, span, True, "prefix"), ctx
        )


def _passed_on(unwrapped, visible: dict) -> list[tuple[str, Value]]:
    """The calling shell's variables a wrapper hands on by name: ``docker run -e NAME`` (its
    value, when the shell exports it), ``APPTAINERENV_NAME`` (NAME inside the container)."""
    out = []
    for name in unwrapped.kept:
        var = visible.get(name)
        if var is not None and var.exported and not var.unset:
            out.append((name, var.public))
    for name, var in visible.items():
        for prefix in unwrapped.renamed:
            if name.startswith(prefix) and len(name) > len(prefix) and var.exported and not var.unset:
                out.append((name[len(prefix):], var.public))
    return out


def _env_word_assignment(word: Word, name: str) -> Assignment:
    """``env NAME=value``: the assignment a word of the command makes."""
    span = word.span
    raw = word.raw
    exact = (span.end - span.start) == len(raw) and raw.startswith(name + "=")
    if exact:
        name_span = Span(span.source, span.start, span.start + len(name))
        vspan = Span(span.source, span.start + len(name) + 1, span.end)
        vraw = raw[len(name) + 1 :]
    else:
        name_span = vspan = span
        vraw = raw
    val = word.value[len(name) + 1 :] if word.value is not None else None
    asm = word.assumed[len(name) + 1 :] if word.assumed is not None and word.assumed.startswith(name + "=") else None
    vword = Word(vspan, vraw, val, word.literal, asm if val is None else val, word.may_split, ((val, asm if val is None else val),))
    return Assignment(name, name_span, vword, span, True, "prefix")


def _redirect_op(redirect) -> str | None:
    for child in redirect.children:
        if not child.is_named:
            return child.type
    return None


def _read_names(base: str, args: list[Word]) -> list[str]:
    """The variables ``read``/``mapfile``/``readarray`` write."""
    names = []
    skip = False
    for w in args:
        if skip:
            skip = False
            continue
        v = w.value
        if v is None:
            continue
        if v.startswith("-"):
            if v in _READ_OPTIONS_WITH_ARG:
                skip = True
            continue
        names.append(v)
    if base == "read" and not names:
        names = ["REPLY"]
    if base in ("mapfile", "readarray") and not names:
        names = ["MAPFILE"]
    # `read -a ARR` names the array after the option
    for w_index, w in enumerate(args):
        if w.value in ("-a",) and w_index + 1 < len(args) and args[w_index + 1].value:
            names.append(args[w_index + 1].value)
    return names


def _read_whole_options(args: list[Word]) -> tuple[str, bool] | None:
    """(name, raw) of ``read [-r] -d '' NAME``, the one form that reads a whole here-document."""
    names, delim, raw, array = [], None, False, None
    k = 0
    while k < len(args):
        v = args[k].value
        if v is None:
            return None
        if v in _HEREDOC_READ_OPTIONS_WITH_ARG and k + 1 < len(args):
            if v == "-d":
                delim = args[k + 1].value
            elif v == "-a":
                array = args[k + 1].value
            k += 2
            continue
        if v.startswith("-") and len(v) > 1 and set(v[1:]) <= set("rse"):
            raw = raw or "r" in v[1:]
        elif v.startswith("-"):
            return None
        else:
            names.append(v)
        k += 1
    if delim != "" or array is not None or len(names) != 1 or not NAME_RE.match(names[0]):
        return None
    return names[0], raw


def _allexport_after_set(args: list[Word], allexport: bool) -> bool:
    """Whether ``set`` with these arguments leaves ``allexport`` (``-a``) on."""
    for w in args:
        v = w.value
        if v is None:
            continue
        if re.fullmatch(r"-[a-zA-Z]*a[a-zA-Z]*", v):
            allexport = True
        elif re.fullmatch(r"\+[a-zA-Z]*a[a-zA-Z]*", v):
            allexport = False
    for k, w in enumerate(args[:-1]):
        if w.value in ("-o", "+o") and args[k + 1].value == "allexport":
            allexport = w.value == "-o"
    return allexport


def _strings_run(base: str, args: list[Word]) -> list[tuple[list[Word], str]] | None:
    """(words, which shell) of each string the command runs as a script: ``eval``'s words (the same
    shell), ``bash -c STRING``, ``sbatch --wrap=STRING`` (a `sh` script of its own), ``ssh HOST
    CMD...`` and ``pdsh -w HOSTS CMD...`` (the remote shell, dslint.documents.shell.remote); None
    for other commands."""
    if base == "eval":
        return [(args, "same")]
    if base in _SHELLS:
        string = _shell_c_string(args)
        return [] if string is None else [([string], "child")]
    if base == "sbatch":
        return [([string], "child") for string in _sbatch_wrap_strings(args)]
    if base in REMOTE_SHELLS:
        call = remote_call(base, args)
        return [] if call is None else [(call.command, "remote")]
    return None


def _shell_c_string(args: list[Word]) -> Word | None:
    """The string ``bash -c STRING`` runs, or None."""
    k = 0
    while k < len(args) and args[k].value is not None and args[k].value.startswith("-") and args[k].value != "--":
        if "c" in args[k].value[1:] and not args[k].value.startswith("--"):
            return args[k + 1] if k + 1 < len(args) else None
        k += 1
    return None


def _sbatch_wrap_strings(args: list[Word]) -> list[Word]:
    """The strings of ``sbatch --wrap`` options (before the batch script)."""
    out = []
    for k, w in enumerate(args):
        v = w.prefix
        if v.startswith("--wrap="):
            rest = split_word(w)
            if rest is not None:
                out.append(rest[1])
        elif v == "--wrap" and k + 1 < len(args):
            out.append(args[k + 1])
        elif not v.startswith("-"):
            break  # the batch script: its options end here
    return out

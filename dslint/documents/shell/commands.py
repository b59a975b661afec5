"""Simple commands: their words, prefix assignments, wrappers, builtins' side effects, here-documents.

Part of the walker (``Walker`` mixes this in); see walker.py.
"""

from __future__ import annotations

import re

from dslint.source import Span

from .model import Assignment, Command, Heredoc, RuntimeFailure, Value, Word, split_word
from .substitution import BAD_SUBSTITUTION_NOTE, bad_substitution_message, bad_substitutions
from .syntax import BASH_VERSION, check
from .treesitter import parser
from .pieces import PLACEHOLDER, join
from .quoting import unquote_word
from .variables import ASSIGN_WORD_RE, NAME_RE, Ctx, Var, unknown_var
from .wrappers import EnvWord, unwrap

_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_MAX_EVAL_DEPTH = 4


class Commands:
    def newline_between(self, start: int, end: int) -> bool:
        gap = self.data[start:end]
        if b"\n" not in gap:
            return False
        gap = gap.replace(b"\\\r\n", b"").replace(b"\\\n", b"")
        return b"\n" in gap

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
            if prev_end is not None and segments[-1] and self.newline_between(prev_end, child.start_byte):
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
        self._ctx = ctx
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
                self.assign_statement(prefixes, ctx, parts[0])
            if redirects:
                self.heredocs(redirects, None)
            return None
        words = self.fields([name_node, *arg_nodes])
        span = self.span_bytes(parts[0].start_byte, parts[-1].end_byte)
        # prefix assignments: evaluated after the words, each one seeing the ones before it
        saved = self.share()
        env: list[Assignment] = []
        for pa in prefixes:
            name, name_node_, op, value_node, subscript = self.assignment_parts(pa)
            word, vparts, array = self.assign_value(pa, value_node, name, op, subscript)
            aspan = self.span(pa)
            self.set_var(name, Var(vparts, True, aspan, "prefix", array))
            env.append(
                self.record_assignment(
                    Assignment(
                        name, self.span(name_node_) if name_node_ is not None else aspan, word, aspan, True, "prefix"
                    ),
                    ctx,
                )
            )
        if not words:
            # nothing left to run (e.g. `A=1 $EMPTY`): the assignments stay in the shell
            self.use(saved)
            if prefixes:
                self.assign_statement(prefixes, ctx, parts[0])
            return None
        prefix_vars = self.vars  # the command keeps this table; the next write copies it
        self.use(saved)
        cmd = self.build_command(words, env, prefix_vars, span, ctx)
        if redirects:
            self.heredocs(redirects, cmd)
        return cmd

    def build_command(self, words: list[Word], env: list[Assignment], visible: dict, span: Span, ctx: Ctx) -> Command:
        unwrapped = unwrap(words)
        recorded = {id(e): self.env_assignment(e, ctx) for e in unwrapped.written}
        extra_env = [recorded[id(e)] for e in unwrapped.env]
        index, wrappers, clears, unsets = unwrapped.index, unwrapped.wrappers, unwrapped.clears, unwrapped.unset
        extra = [
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
            wrappers=wrappers,
            clears_env=clears,
            runner=ctx.runner,
            _scope=(visible, extra, unsets, clears, ctx.child_shell),
        )
        self.script.commands.append(cmd)
        self.events.append(("command", cmd, ctx, None))
        self.after_command(cmd, ctx)
        return cmd

    def after_command(self, cmd: Command, ctx: Ctx) -> None:
        """Side effects of builtins on the variable table."""
        base = cmd.basename
        if base is None:
            return
        args = cmd.args
        if base in ("read", "mapfile", "readarray"):
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
                    if v in ("-a", "-d", "-p", "-t", "-n", "-N", "-u", "-i", "-C", "-c", "-O", "-s"):
                        skip = True
                    if v == "-a" or (base != "read"):
                        pass
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
            for name in names:
                if NAME_RE.match(name):
                    self.make_unknown(name, cmd.span)
        elif base == "getopts" and len(args) >= 2 and args[1].value:
            self.make_unknown(args[1].value, cmd.span)
            self.make_unknown("OPTARG", cmd.span)
        elif base == "printf" and len(args) >= 2 and args[0].value == "-v" and args[1].value:
            self.make_unknown(args[1].value.split("[")[0], cmd.span)
        elif base == "let":
            for w in args:
                if w.value is not None:
                    self.arith_value_text(w.value, w.assumed)
                else:
                    m = ASSIGN_WORD_RE.match(w.raw.strip("\"'"))
                    if m:
                        self.make_unknown(m.group(1), cmd.span)
        elif base == "set":
            for w in args:
                v = w.value
                if v is None:
                    continue
                if re.fullmatch(r"-[a-zA-Z]*a[a-zA-Z]*", v):
                    self.allexport = True
                elif re.fullmatch(r"\+[a-zA-Z]*a[a-zA-Z]*", v):
                    self.allexport = False
            for k, w in enumerate(args[:-1]):
                if w.value in ("-o", "+o") and args[k + 1].value == "allexport":
                    self.allexport = w.value == "-o"
        elif base == "eval":
            self.eval_words(cmd, args, ctx, child_shell=False)
        elif base in ("bash", "sh", "zsh", "dash", "ksh"):
            k = 0
            while (
                k < len(args) and args[k].value is not None and args[k].value.startswith("-") and args[k].value != "--"
            ):
                if "c" in args[k].value[1:] and not args[k].value.startswith("--"):
                    if k + 1 < len(args):
                        self.eval_words(cmd, [args[k + 1]], ctx, child_shell=True)
                    break
                k += 1
        elif base == "sbatch":  # `--wrap="cmd"`: sbatch runs the string as a `sh` script of its own
            for k, w in enumerate(args):
                v = w.prefix
                if v.startswith("--wrap="):
                    rest = split_word(w)
                    if rest is not None:
                        self.eval_words(cmd, [rest[1]], ctx, child_shell=True)
                elif v == "--wrap" and k + 1 < len(args):
                    self.eval_words(cmd, [args[k + 1]], ctx, child_shell=True)
                elif not v.startswith("-"):
                    break  # the batch script: its options end here
        elif base in self.func_assigns:
            assigns, exported = self.func_assigns[base]
            for name in assigns:
                self.make_unknown(name, cmd.span, export=name in exported)

    def make_unknown(self, name: str, span, export: bool = False) -> None:
        old = self.vars.get(name)
        exported = export or bool(old and old.exported and not old.unset) or self.allexport
        self.set_var(name, unknown_var(exported, span, "assignment"))

    def eval_words(self, cmd: Command, words: list[Word], ctx: Ctx, child_shell: bool) -> None:
        """Read the string that ``eval``, ``bash -c`` or ``sbatch --wrap`` runs, as a script.

        Pieces the script does not decide are read as unknown expansions (``PLACEHOLDER``), so
        the rest of the string is still read; positions are exact inside a string written
        verbatim in the file (``bash -c '...'``, ``CMD="..."; eval "$CMD"``), else the word."""
        if not words or self.eval_depth >= _MAX_EVAL_DEPTH:
            return
        unknown: list[str | None] = []
        chunks = []
        for w in words:
            for v, a in w.parts or ((w.value, w.assumed),):
                if v is None:
                    chunks.append("${%s%d}" % (PLACEHOLDER, len(unknown)))
                    unknown.append(a)
                else:
                    chunks.append(v)
            chunks.append(" ")
        text = "".join(chunks)[:-1]
        if not text.strip() or (unknown and not re.sub(r"\$\{%s\d+\}" % PLACEHOLDER, "", text).strip()):
            return  # nothing of the string is known
        data = text.encode("utf-8")
        tree = parser().parse(data)
        span = Span(words[0].span.source, words[0].span.start, max(w.span.end for w in words))
        saved = (self.data, self.fixed_span, self.shift, self.share() if child_shell else self.vars)
        if not unknown:
            units: list[tuple[int, int]] = []
            complaint = check(text, units)
            if complaint is not None:
                self.script.runtime_failures.append(
                    RuntimeFailure(span, f"bash {BASH_VERSION} cannot parse the string `{cmd.basename}` runs: {complaint.message}")
                )
            elif not (ctx.conditional or ctx.in_loop or ctx.function or ctx.from_eval) and "${" in text:
                for start, end in bad_substitutions(text, units):
                    self.script.runtime_failures.append(RuntimeFailure(
                        span, f"in the string `{cmd.basename}` runs: " + bad_substitution_message(text[start:end], BASH_VERSION),
                        BAD_SUBSTITUTION_NOTE))
        self.data = data
        self.fixed_span, self.shift = self.verbatim(words, text, span)
        if self.fixed_span is span and saved[1] is None:
            self.script.unmapped.append((span.start, span.end))
        self.eval_depth += 1
        inner = ctx._replace(from_eval=True, depth=ctx.depth + 1, runner=cmd)
        try:
            if child_shell:
                self.vars = {n: v for n, v in self.vars.items() if v.exported and not v.unset}
                self.owned = True
            for k, assumed in enumerate(unknown):
                self.set_var(f"{PLACEHOLDER}{k}", unknown_var(False, None, "assignment", assumed))
            self.block(tree.root_node.children, inner._replace(child_shell=True) if child_shell else inner)
            if unknown and not child_shell:
                self.vars = {n: v for n, v in self.vars.items() if not n.startswith(PLACEHOLDER)}
                self.owned = True
        finally:
            self.data, self.fixed_span, self.shift, old_vars = saved
            if child_shell:
                self.use(old_vars)
            self.eval_depth -= 1

    def verbatim(self, words: list[Word], text: str, span: Span) -> tuple[Span | None, int | None]:
        """(fixed span, shift): where the evaluated text stands verbatim in the file, the
        character offset of its start (positions inside it are exact); else the word's span."""
        if self.fixed_span is not None or self.shift is not None or len({(w.span.start, w.span.end) for w in words}) != 1:
            return span, None  # nested, or several words of the file
        source = self.source
        places = [words[0].span]
        m = re.fullmatch(r'"?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?"?', words[0].raw)
        var = self.vars.get(m.group(1)) if m else None
        if var is not None and var.span is not None and var.span.source is source:
            places.append(var.span)  # `eval "$CMD"`: the string where CMD was assigned
        for place in places:
            written = source.text[place.start : place.end]
            at = written.find(text)
            if at != -1 and written.find(text, at + 1) == -1:
                return None, place.start + at
        return span, None

    def heredocs(self, redirects, cmd: Command | None) -> None:
        target: Word | None = None
        docs = []
        stack = list(redirects)
        while stack:
            r = stack.pop(0)
            if r.type == "file_redirect":
                op = None
                for child in r.children:
                    if not child.is_named:
                        op = child.type
                        break
                dest = r.child_by_field_name("destination")
                if op in (">", ">>", ">|", "&>", "&>>") and dest is not None and target is None:
                    fs = self.fields([dest])
                    if fs:
                        target = fs[0]
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

    def heredoc(self, node, target: Word | None, cmd: Command | None) -> None:
        read = self.heredoc_value(node)
        if read is None:
            return
        span, value, assumed, delimiter, quoted = read
        self.script.heredocs.append(Heredoc(span, target, value, delimiter, not quoted, cmd))
        if cmd is not None and cmd.basename == "read":
            self.read_heredoc(cmd, value, assumed)

    def heredoc_value(self, node, parts: bool = False):
        """(body span, value, assumed, delimiter, quoted) of a ``heredoc_redirect`` node, or None;
        with ``parts``, the value as pieces ``(value, assumed)`` in place of value and assumed."""
        start_node = body = end_node = None
        strip_tabs = False
        for child in node.children:
            if child.type == "heredoc_start":
                start_node = child
            elif child.type == "heredoc_body":
                body = child
            elif child.type == "heredoc_end":
                end_node = child
            elif child.type == "<<-":
                strip_tabs = True
        if start_node is None:
            return None
        delim_raw = self.text(start_node)
        quoted = any(c in delim_raw for c in "'\"\\")
        delimiter = delim_raw.replace("'", "").replace('"', "").replace("\\", "")
        if body is None:
            if end_node is None:
                return None
            bstart = bend = end_node.start_byte
        else:
            bstart = body.start_byte
            line_start = self.data.rfind(b"\n", 0, bstart) + 1
            if not self.data[line_start:bstart].strip(b" \t"):
                bstart = line_start
            bend = end_node.start_byte if end_node is not None else body.end_byte
            bend = self.data.rfind(b"\n", 0, bend) + 1 if end_node is not None else bend
            bend = max(bend, bstart)
        text = self.text_bytes(bstart, bend)
        if strip_tabs:
            text = "\n".join(line.lstrip("\t") for line in text.split("\n"))
        pieces = [(text, text)] if quoted else self.expand_text_parts(text)
        if parts:
            return self.span_bytes(bstart, bend), pieces, delimiter, quoted
        value, assumed = join(pieces)
        return self.span_bytes(bstart, bend), value, assumed, delimiter, quoted

    def read_heredoc(self, cmd: Command, value: str | None, assumed: str | None) -> None:
        """``read -r -d '' CMD <<EOF ... EOF``: CMD is the whole body (no NUL ends it sooner),
        without the blanks IFS trims at both ends; without ``-r`` backslashes escape, and a
        backslash-newline joins lines. Other uses of ``read`` stay unknown (after_command)."""
        names, delim, raw, array = [], None, False, None
        args = cmd.args
        k = 0
        while k < len(args):
            v = args[k].value
            if v is None:
                return
            if v in ("-d", "-a", "-p", "-n", "-N", "-t", "-u", "-i") and k + 1 < len(args):
                if v == "-d":
                    delim = args[k + 1].value
                elif v == "-a":
                    array = args[k + 1].value
                k += 2
                continue
            if v.startswith("-") and len(v) > 1 and set(v[1:]) <= set("rse"):
                raw = raw or "r" in v[1:]
            elif v.startswith("-"):
                return
            else:
                names.append(v)
            k += 1
        if delim != "" or array is not None or len(names) != 1 or not NAME_RE.match(names[0]):
            return
        ifs = next((a for a in cmd.env if a.name == "IFS"), None)
        if ifs is not None and (ifs.value is None or ifs.value.value != ""):
            return  # a custom IFS: the trimming is not the default one

        def read_as(text: str | None) -> str | None:
            if text is None:
                return None
            if not raw:
                text = unquote_word(text)
            return text if ifs is not None else text.strip(" \t\n")

        name = names[0]
        old = self.vars.get(name)
        exported = bool(old and old.exported and not old.unset) or self.allexport
        parts = ((read_as(value), read_as(assumed)),)
        self.set_var(name, Var(parts, exported, cmd.span, "assignment"))
        word = Word(cmd.span, self.source.text[cmd.span.start : cmd.span.end], parts[0][0], False, parts[0][1], False, parts)
        self.record_assignment(Assignment(name, cmd.span, word, cmd.span, exported, "plain"), self._ctx)

    def env_assignment(self, env: EnvWord, ctx: Ctx) -> Assignment:
        if env.value is not None:
            return self.mpi_env(env.word, env.value, ctx)
        return self.env_word_assignment(env.word, env.name, ctx)

    def mpi_env(self, name_word: Word, value_word: Word, ctx: Ctx) -> Assignment:
        """``mpirun -genv NAME VALUE``: NAME=VALUE in the program's environment."""
        span = Span(name_word.span.source, name_word.span.start, max(name_word.span.end, value_word.span.end))
        return self.record_assignment(
            Assignment(name_word.value or "", name_word.span, value_word, span, True, "prefix"), ctx
        )

    def env_word_assignment(self, word: Word, name: str, ctx: Ctx) -> Assignment:
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
        asm = (
            word.assumed[len(name) + 1 :] if word.assumed is not None and word.assumed.startswith(name + "=") else None
        )
        vword = Word(
            vspan,
            vraw,
            val,
            word.literal,
            asm if val is None else val,
            word.may_split,
            ((val, asm if val is None else val),),
        )
        return self.record_assignment(Assignment(name, name_span, vword, span, True, "prefix"), ctx)

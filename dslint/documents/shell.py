"""Shell launch scripts read statically: commands, their words and the environment they see.

Nothing here runs anything. ``parse_script`` parses the text with tree-sitter-bash and walks
the statements in order, keeping a table of shell variables so that every word of every
command gets the value bash would give it, when that value can be known from the file alone.

Rules of the evaluation:

* A value is known only when the script itself decides it. Anything that comes from outside
  the file (the caller's environment, ``$1``, ``read``, ``$(nvidia-smi ...)``, loop variables,
  ``~``) is unknown: ``value`` is ``None``. Nothing is guessed.
* Besides the strict value, every word and variable carries ``assumed``: the value it has when
  the caller sets none of the variables the script leaves open and passes no arguments
  (``${NPROC:-8}`` is unknown, assumed ``"8"``). Rules can use it for softer findings.
* ``if``/``case`` branches and the right side of ``&&``/``||`` run on copies of the table; a
  variable whose branches disagree is unknown afterwards. Variables assigned in a loop body are
  unknown in the body and after it.
* Unquoted expansions are split into fields as bash does (``$ARGS`` with ``ARGS="--a 1"``
  gives two words); an unquoted expansion whose value is unknown keeps one word with
  ``may_split`` set, because it may stand for any number of words.
* Exported variables (``export``, ``declare -x``, ``set -a``) and prefix assignments
  (``VAR=x cmd``, ``env VAR=x cmd``) form a command's ``environment``; plain assignments are
  only ``shell_vars``. A variable the caller had already exported stays exported after a plain
  assignment, which a static reader cannot see: rules should word findings accordingly.

Positions are ``Span`` character ranges; words produced by ``eval``/``bash -c`` point at the
string that was evaluated.
"""

from __future__ import annotations

import bisect
import fnmatch
import os
import re
from dataclasses import dataclass, field
from typing import NamedTuple
from collections.abc import Iterable

from dslint.documents.model import ParseProblem
from dslint.source import SourceFile, Span

__all__ = [
    "Word",
    "Assignment",
    "Value",
    "Command",
    "Trap",
    "Heredoc",
    "FunctionDef",
    "VarRef",
    "Script",
    "parse_script",
    "split_word",
    "LAUNCHER_NAMES",
    "is_launcher_name",
    "LAUNCH_ENV_VARS",
    "is_launch_env_var",
]

# ---------------------------------------------------------------------------------------
# public data
# ---------------------------------------------------------------------------------------


def _span_text(span: Span | None) -> str:
    if span is None:
        return "?"
    line, col = span.source.position(span.start)
    return f"{line}:{col}"


@dataclass(eq=False, repr=False)
class Word:
    """One word of a command as bash passes it to the program.

    ``value`` is the string after quote removal and expansion, or None when any part of it
    is unknown. ``parts`` keeps the pieces: ``(value, assumed)`` pairs where an unknown piece
    has value None. ``literal`` is True when the source text contains no expansion at all.
    """

    span: Span
    raw: str
    value: str | None
    literal: bool = True
    assumed: str | None = None
    may_split: bool = False
    parts: tuple = ()

    @property
    def known(self) -> bool:
        return self.value is not None

    @property
    def prefix(self) -> str:
        """The known text at the start of the word (all of it when the word is known)."""
        if self.value is not None:
            return self.value
        out = []
        for piece in self.parts:
            if piece[0] is None:
                break
            out.append(piece[0])
        return "".join(out)

    def __repr__(self) -> str:
        extra = "" if self.value == self.raw else f" value={self.value!r}"
        if self.value is None and self.assumed is not None:
            extra += f" assumed={self.assumed!r}"
        return f"Word({self.raw!r}{extra} @{_span_text(self.span)})"


@dataclass(eq=False, repr=False)
class Assignment:
    """``NAME=value`` wherever it is written. ``value`` is None for ``export NAME``."""

    name: str
    name_span: Span
    value: Word | None
    span: Span
    exported: bool
    kind: str  # "prefix" | "export" | "plain" | "default"
    in_function: str | None = None
    conditional: bool = False
    in_loop: bool = False
    from_eval: bool = False

    def __repr__(self) -> str:
        val = None if self.value is None else self.value.value
        exported = " exported" if self.exported else ""
        return f"Assignment({self.name}={val!r} {self.kind}{exported} @{_span_text(self.span)})"


@dataclass(frozen=True, repr=False)
class Value:
    """A variable as one command sees it. ``value`` None means unknown."""

    value: str | None
    span: Span | None  # where it was set (None when it only comes from the caller)
    source_kind: str  # "assignment" | "export" | "prefix" | "default" | "caller-env"
    assumed: str | None = None

    def __repr__(self) -> str:
        return f"Value({self.value!r} {self.source_kind} @{_span_text(self.span)})"


@dataclass(eq=False, repr=False)
class Command:
    """A simple command after wrappers (``nohup``, ``env``, ``exec``, ``time`` ...) are peeled off."""

    span: Span
    name: Word
    args: list[Word]
    env: list[Assignment]  # its own prefix assignments (and those of an `env` wrapper)
    in_function: str | None = None
    conditional: bool = False
    in_loop: bool = False
    from_eval: bool = False
    background: bool = False
    wrappers: list[Word] = field(default_factory=list)
    clears_env: bool = False  # env -i / exec -c: nothing but `env` reaches the program
    # (variable table, extra env, unset names, clears, child shell); read lazily
    _scope: tuple | None = field(default=None, repr=False)
    _environment: dict | None = field(default=None, repr=False)
    _shell_vars: dict | None = field(default=None, repr=False)

    @property
    def environment(self) -> dict[str, Value]:
        """Every variable the program gets in its environment: exported ones and prefix assignments."""
        if self._environment is None:
            env: dict[str, Value] = {}
            if self._scope is not None:
                table, extra, unsets, clears, _child = self._scope
                if not clears:
                    env = {n: v.public for n, v in table.items() if v.exported and not v.unset}
                for n in unsets:
                    env.pop(n, None)
                for n, value in extra:
                    env[n] = value
            self._environment = env
        return self._environment

    @property
    def shell_vars(self) -> dict[str, Value]:
        """Variables set in the shell but not exported: the program does not see them."""
        if self._shell_vars is None:
            out: dict[str, Value] = {}
            if self._scope is not None:
                table, _extra, _unsets, _clears, child = self._scope
                if not child:
                    out = {n: v.public for n, v in table.items() if not v.exported and not v.unset}
            self._shell_vars = out
        return self._shell_vars

    @property
    def argv(self) -> list[Word]:
        return [self.name, *self.args]

    @property
    def basename(self) -> str | None:
        """File name of the program (``/usr/bin/python3`` -> ``python3``), None when unknown."""
        if self.name.value is None:
            return None
        return os.path.basename(self.name.value)

    def __repr__(self) -> str:
        words = " ".join(w.raw if w.value is None else w.value for w in self.argv)
        return f"Command({words!r} @{_span_text(self.span)})"


@dataclass(eq=False, repr=False)
class Trap:
    """A place where bash reads the text differently from how it looks."""

    code_name: str
    span: Span
    message: str

    def __repr__(self) -> str:
        return f"Trap({self.code_name} @{_span_text(self.span)})"


@dataclass(eq=False, repr=False)
class Heredoc:
    """A here-document: ``cat > ds.json <<EOF ... EOF``."""

    span: Span  # the body
    target: Word | None  # the file it is written to, when there is one
    value: str | None  # the body after expansion (None when any part is unknown)
    delimiter: str
    expanded: bool  # False for <<'EOF' (body taken literally)
    command: Command | None = None

    def __repr__(self) -> str:
        tgt = None if self.target is None else self.target.value
        return f"Heredoc(-> {tgt!r} @{_span_text(self.span)})"


@dataclass(eq=False, repr=False)
class FunctionDef:
    name: str
    span: Span
    assigns: frozenset = frozenset()  # global variables the body sets

    def __repr__(self) -> str:
        return f"FunctionDef({self.name} @{_span_text(self.span)})"


@dataclass(eq=False, repr=False)
class VarRef:
    """``$NAME`` / ``${NAME...}`` in a word. ``set_in_script`` is False when only the caller can set it."""

    name: str
    span: Span
    set_in_script: bool

    def __repr__(self) -> str:
        return f"VarRef({self.name} @{_span_text(self.span)})"


@dataclass(eq=False)
class Script:
    source: SourceFile
    commands: list[Command] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)
    problems: list[ParseProblem] = field(default_factory=list)
    continuation_traps: list[Trap] = field(default_factory=list)
    heredocs: list[Heredoc] = field(default_factory=list)
    functions: dict[str, FunctionDef] = field(default_factory=dict)
    references: list[VarRef] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.source.path


# ---------------------------------------------------------------------------------------
# launchers and the environment variables they read (shared with dslint.launch.commands)
# ---------------------------------------------------------------------------------------

LAUNCHER_NAMES = frozenset(
    {"deepspeed", "torchrun", "accelerate", "accelerate-launch", "swift", "megatron", "llamafactory-cli", "lmf"}
)
_PYTHON_RE = re.compile(r"python(\d+(\.\d+)*)?\Z")


def is_launcher_name(basename: str | None) -> bool:
    return basename is not None and (basename in LAUNCHER_NAMES or bool(_PYTHON_RE.match(basename)))


# Variables the launchers and trainers read from their environment (swift_npu_rules.md §1-3).
_COMMON_ENV = frozenset(
    {
        "CUDA_VISIBLE_DEVICES",
        "ASCEND_RT_VISIBLE_DEVICES",
        "HIP_VISIBLE_DEVICES",
        "ROCR_VISIBLE_DEVICES",
        "OMP_NUM_THREADS",
        "TOKENIZERS_PARALLELISM",
        "LD_LIBRARY_PATH",
        "PYTHONPATH",
    }
)
_COMMON_PREFIXES = (
    "NCCL_",
    "HCCL_",
    "PYTORCH_",
    "TORCH_",
    "CUDA_",
    "ASCEND_",
    "HF_",
    "TRANSFORMERS_",
    "WANDB_",
    "DS_",
    "NPU_",
    "VLLM_",
)
_SWIFT_ENV = frozenset(
    {
        "NPROC_PER_NODE",
        "NNODES",
        "NODE_RANK",
        "MASTER_ADDR",
        "MASTER_PORT",
        "MAX_PIXELS",
        "MIN_PIXELS",
        "VIDEO_MAX_PIXELS",
        "FPS_MAX_FRAMES",
        "CELOSS_PARALLEL_SIZE",
        "DISABLE_MP_DDP",
        "USE_HF",
        "MEGATRON_LM_PATH",
    }
)
_LLAMAFACTORY_ENV = frozenset(
    {
        "FORCE_TORCHRUN",
        "NNODES",
        "NODE_RANK",
        "NPROC_PER_NODE",
        "MASTER_ADDR",
        "MASTER_PORT",
        "USE_RAY",
        "USE_V1",
        "USE_MCA",
        "USE_MEGATRON_BRIDGE",
        "USE_KT",
        "ALLOW_EXTRA_ARGS",
        "RDZV_ID",
        "MIN_NNODES",
        "MAX_NNODES",
        "MAX_RESTARTS",
        "OPTIM_TORCH",
    }
)
LAUNCH_ENV_VARS = _COMMON_ENV | _SWIFT_ENV | _LLAMAFACTORY_ENV


def is_launch_env_var(name: str, launcher: str | None = None) -> bool:
    """Whether a launcher (a command basename; None for any) reads ``name`` from its environment."""
    if name in _COMMON_ENV or name.startswith(_COMMON_PREFIXES):
        return True
    if launcher is None:
        return name in LAUNCH_ENV_VARS or name.startswith(("SWIFT_", "MODELSCOPE_", "ACCELERATE_"))
    if launcher in ("swift", "megatron"):
        return name in _SWIFT_ENV or name.startswith(("SWIFT_", "MODELSCOPE_"))
    if launcher in ("llamafactory-cli", "lmf"):
        return name in _LLAMAFACTORY_ENV
    if launcher in ("accelerate", "accelerate-launch"):
        return name.startswith("ACCELERATE_")
    return False


# ---------------------------------------------------------------------------------------
# tree-sitter, loaded on first use
# ---------------------------------------------------------------------------------------

_PARSER = None


def _parser():
    global _PARSER
    if _PARSER is None:
        import tree_sitter
        import tree_sitter_bash

        _PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
    return _PARSER


# ---------------------------------------------------------------------------------------
# small helpers
# ---------------------------------------------------------------------------------------

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ASSIGN_WORD_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?=)")
_IFS_SPLIT = re.compile(r"[ \t\n]+")
_BRACE_RE = re.compile(r"\{[^{}\s]*(,|\.\.)[^{}\s]*\}")
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_RESERVED_STRAYS = frozenset({"then", "else", "elif", "fi", "do", "done", "esac", "in", "}"})
# Variables every login shell has: their "assumed" value is not the empty string.
_ALWAYS_SET = frozenset(
    {
        "HOME",
        "PATH",
        "USER",
        "PWD",
        "OLDPWD",
        "HOSTNAME",
        "SHELL",
        "LANG",
        "RANDOM",
        "SECONDS",
        "LINENO",
        "BASH_SOURCE",
        "BASHPID",
        "PPID",
        "UID",
        "EUID",
        "IFS",
        "BASH",
        "BASH_VERSION",
        "HOSTTYPE",
        "OSTYPE",
        "LOGNAME",
        "TERM",
        "SHLVL",
    }
)
# srun options that take no value (everything else takes one, unless written --opt=value)
_SRUN_SHORT_FLAGS = frozenset("EhHklOQsuvXZI")
_SRUN_LONG_FLAGS = frozenset(
    {
        "exclusive",
        "label",
        "unbuffered",
        "overlap",
        "pty",
        "quiet",
        "verbose",
        "kill-on-bad-exit",
        "no-kill",
        "help",
        "usage",
        "test-only",
        "disable-status",
        "multi-prog",
        "no-allocate",
        "exact",
        "spread-job",
        "whole",
        "oversubscribe",
        "contiguous",
        "reboot",
        "overcommit",
        "preserve-env",
        "x11",
        "hold",
        "immediate",
        "nice",
        "external-launcher",
        "send-libs",
        "version",
    }
)
# mpirun/mpiexec (Open MPI, MPICH, Intel MPI)
_MPI_TWO_VALUES = frozenset({"mca", "gmca", "genv", "env"})
_MPI_FLAGS = frozenset(
    {
        "allow-run-as-root",
        "oversubscribe",
        "v",
        "verbose",
        "report-bindings",
        "tag-output",
        "display-map",
        "display-allocation",
        "q",
        "quiet",
        "timestamp-output",
        "genvall",
        "genvnone",
        "noprefix",
        "enable-recovery",
        "use-hwthread-cpus",
        "bind-to-core",
        "bind-to-socket",
        "nolocal",
        "no-prefix",
        "l",
        "prepend-rank",
        "hostlist",
    }
)
_MAX_DEPTH = 120  # statement nesting handled; deeper constructs are skipped
_MAX_EVAL_DEPTH = 4
_MAX_EXPANSION_NESTING = 100  # $( $( ... ) ), ${a:-${b:-...}} deeper than this is unknown
_MAX_VALUE_CHARS = 100_000  # a value longer than this (A="$A$A" forty times) is unknown
_MAX_VAR_PARTS = 256  # a variable built from more pieces keeps them joined into one
_MAX_ARRAY_ELEMENTS = 10_000  # a longer array (A=("${A[@]}" "${A[@]}") ...) is unknown

UNKNOWN = (None, None)
BREAK = None  # field break inside a piece list ("${arr[@]}")


def _join(parts: Iterable[tuple]) -> tuple[str | None, str | None]:
    """(value, assumed) of a sequence of (value, assumed[, quoted]) pieces."""
    vals: list[str] | None = []
    asms: list[str] | None = []
    vlen = alen = 0
    for piece in parts:
        if piece is None:
            continue
        v, a = piece[0], piece[1]
        if vals is not None:
            if v is None or vlen + len(v) > _MAX_VALUE_CHARS:
                vals = None
            else:
                vals.append(v)
                vlen += len(v)
        if asms is not None:
            if a is None or alen + len(a) > _MAX_VALUE_CHARS:
                asms = None
            else:
                asms.append(a)
                alen += len(a)
    return (None if vals is None else "".join(vals), None if asms is None else "".join(asms))


def _known(text: str, quoted: bool = False) -> tuple:
    return (text, text, quoted)


def _unquote_word(text: str) -> str:
    """Backslash removal for an unquoted word: a backslash escapes any character."""
    return _remove_backslashes(text, None)


def _unquote_dq(text: str, escapable: str = '$`"\\') -> str:
    """Backslash processing inside double quotes (and here-documents, with ``"`` not special)."""
    return _remove_backslashes(text, escapable)


def _remove_backslashes(text: str, escapable: str | None) -> str:
    """Drop line continuations and the backslash before an escapable character (None: any)."""
    if "\\" not in text:
        return text
    out = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n:
            nxt = text[i + 1]
            if nxt == "\n":
                i += 2
                continue
            if nxt == "\r" and i + 2 < n and text[i + 2] == "\n":
                i += 3
                continue
            if escapable is None or nxt in escapable:
                out.append(nxt)
                i += 2
                continue
        out.append(ch)
        i += 1
    return "".join(out)


_ANSI_SIMPLE = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "e": "\x1b",
    "E": "\x1b",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def _ansi_c(text: str) -> str:
    out = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch != "\\" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[nxt])
            i += 2
        elif nxt == "x":
            m = re.match(r"[0-9a-fA-F]{1,2}", text[i + 2 :])
            if m:
                out.append(chr(int(m.group(0), 16)))
                i += 2 + len(m.group(0))
            else:
                out.append("\\x")
                i += 2
        elif nxt in "01234567":
            m = re.match(r"[0-7]{1,3}", text[i + 1 :])
            out.append(chr(int(m.group(0), 8) & 0xFF))
            i += 1 + len(m.group(0))
        else:
            out.append("\\" + nxt)
            i += 2
    return "".join(out)


def _parse_int(text: str | None) -> int | None:
    """An integer as bash arithmetic reads a constant (decimal, 0x hex, 0 octal, base#n)."""
    if text is None:
        return None
    s = text.strip()
    if not s:
        return 0
    sign = 1
    if s[0] in "+-":
        if s[0] == "-":
            sign = -1
        s = s[1:].strip()
    try:
        if re.fullmatch(r"0[xX][0-9a-fA-F]+", s):
            return sign * int(s, 16)
        if re.fullmatch(r"0[0-7]+", s):
            return sign * int(s, 8)
        if re.fullmatch(r"[0-9]+", s):
            return sign * int(s)
        m = re.fullmatch(r"([0-9]+)#([0-9a-zA-Z]+)", s)
        if m and 2 <= int(m.group(1)) <= 36:
            return sign * int(m.group(2), int(m.group(1)))
    except ValueError:
        return None
    return None


def _c_div(a: int, b: int) -> int | None:
    if b == 0:
        return None
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _c_mod(a: int, b: int) -> int | None:
    q = _c_div(a, b)
    return None if q is None else a - b * q


def _glob_regex(pattern: str, shortest: bool) -> re.Pattern | None:
    try:
        rx = fnmatch.translate(pattern)
    except Exception:  # pragma: no cover - fnmatch accepts everything
        return None
    if shortest:
        rx = rx.replace(".*", ".*?")
    try:
        return re.compile(rx, re.S)
    except re.error:
        return None


def _remove_affix(value: str, pattern: str, op: str) -> str | None:
    if not any(c in pattern for c in "*?["):
        if op in ("#", "##"):
            return value[len(pattern) :] if value.startswith(pattern) else value
        return value[: len(value) - len(pattern)] if pattern and value.endswith(pattern) else value
    rx = _glob_regex(pattern, shortest=False)
    if rx is None:
        return None
    n = len(value)
    if op == "#":
        order = range(0, n + 1)
    elif op == "##":
        order = range(n, -1, -1)
    elif op == "%":
        order = range(n, -1, -1)
    else:
        order = range(0, n + 1)
    for k in order:
        if op in ("#", "##"):
            if rx.match(value[:k]):
                return value[k:]
        else:
            if rx.match(value[k:]):
                return value[:k]
    return value


# ---------------------------------------------------------------------------------------
# bash arithmetic, on text (tree-sitter's arithmetic trees get unary minus precedence wrong)
# ---------------------------------------------------------------------------------------

_ARITH_ASSIGN_RE = re.compile(
    r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)"
    r"|([A-Za-z_][A-Za-z0-9_]*)\s*(?:\+\+|--)|(?:\+\+|--)\s*([A-Za-z_][A-Za-z0-9_]*)"
)
_ARITH_TOKEN = re.compile(
    r"\s*(?:(?P<num>[0-9]+#[0-9A-Za-z@_]+|0[xX][0-9A-Fa-f]+|[0-9]+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op><<=|>>=|\*\*|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||\+=|-=|\*=|/=|%=|&=|\^=|\|=|[-+*/%<>=!~&^|?:(),]))"
)
_BINARY_PREC = {
    "||": 3,
    "&&": 4,
    "|": 5,
    "^": 6,
    "&": 7,
    "==": 8,
    "!=": 8,
    "<": 9,
    ">": 9,
    "<=": 9,
    ">=": 9,
    "<<": 10,
    ">>": 10,
    "+": 11,
    "-": 11,
    "*": 12,
    "/": 12,
    "%": 12,
    "**": 13,
}
_ASSIGN_OPS = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|="})


class _ArithError(Exception):
    pass


def _arith_apply(op: str, a: int, b: int) -> int:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        r = _c_div(a, b)
    elif op == "%":
        r = _c_mod(a, b)
    elif op == "**":
        if b < 0 or b > 4096:
            raise _ArithError
        r = a**b
    elif op == "<<":
        r = a << b if 0 <= b < 4096 else None
    elif op == ">>":
        r = a >> b if b >= 0 else None
    elif op == "&":
        return a & b
    elif op == "|":
        return a | b
    elif op == "^":
        return a ^ b
    elif op == "==":
        return int(a == b)
    elif op == "!=":
        return int(a != b)
    elif op == "<":
        return int(a < b)
    elif op == ">":
        return int(a > b)
    elif op == "<=":
        return int(a <= b)
    elif op == ">=":
        return int(a >= b)
    else:
        raise _ArithError
    if r is None:
        raise _ArithError
    return r


class _Arith:
    """A Pratt parser evaluating a bash arithmetic expression.

    ``lookup(name)`` returns the int value of a variable or None when unknown; ``assign``
    records side effects.
    """

    def __init__(self, text: str, lookup, assign):
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        text = text.strip()
        while pos < len(text):
            m = _ARITH_TOKEN.match(text, pos)
            if not m or m.end() == pos:
                if text[pos:].strip() == "":
                    break
                raise _ArithError
            pos = m.end()
            kind = m.lastgroup
            self.tokens.append((kind, m.group(kind)))
        self.i = 0
        self.lookup = lookup
        self.assign = assign

    def run(self) -> int | None:
        if not self.tokens:
            return 0
        value = self.comma()
        if self.i != len(self.tokens):
            raise _ArithError
        return value

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        if tok is None:
            raise _ArithError
        self.i += 1
        return tok

    def comma(self):
        value = self.assignment()
        while self.peek() == ("op", ","):
            self.i += 1
            value = self.assignment()
        return value

    def assignment(self):
        tok = self.peek()
        nxt = self.tokens[self.i + 1] if self.i + 1 < len(self.tokens) else None
        if tok and tok[0] == "name" and nxt and nxt[0] == "op" and nxt[1] in _ASSIGN_OPS:
            self.i += 2
            rhs = self.assignment()
            name = tok[1]
            if nxt[1] == "=":
                result = rhs
            else:
                cur = self.lookup(name)
                result = None if cur is None or rhs is None else _arith_apply(nxt[1][:-1], cur, rhs)
            self.assign(name, result)
            return result
        return self.ternary()

    def ternary(self):
        cond = self.binary(3)
        if self.peek() == ("op", "?"):
            self.i += 1
            yes = self.comma()
            if self.take() != ("op", ":"):
                raise _ArithError
            no = self.assignment()
            if cond is None:
                return None
            return yes if cond else no
        return cond

    def binary(self, min_prec: int):
        left = self.unary()
        while True:
            tok = self.peek()
            if tok is None or tok[0] != "op" or tok[1] not in _BINARY_PREC:
                return left
            prec = _BINARY_PREC[tok[1]]
            if prec < min_prec:
                return left
            self.i += 1
            right = self.binary(prec if tok[1] == "**" else prec + 1)
            if left is None or right is None:
                left = None
            elif tok[1] == "&&":
                left = int(bool(left) and bool(right))
            elif tok[1] == "||":
                left = int(bool(left) or bool(right))
            else:
                left = _arith_apply(tok[1], left, right)

    def unary(self):
        tok = self.peek()
        if tok and tok[0] == "op" and tok[1] in ("-", "+", "!", "~"):
            self.i += 1
            val = self.unary()
            if val is None:
                return None
            return {"-": -val, "+": val, "!": int(not val), "~": ~val}[tok[1]]
        if tok and tok[0] == "op" and tok[1] in ("++", "--"):
            self.i += 1
            name = self.take()
            if name[0] != "name":
                raise _ArithError
            cur = self.lookup(name[1])
            new = None if cur is None else cur + (1 if tok[1] == "++" else -1)
            self.assign(name[1], new)
            return new
        return self.postfix()

    def postfix(self):
        tok = self.take()
        if tok == ("op", "("):
            val = self.comma()
            if self.take() != ("op", ")"):
                raise _ArithError
            return val
        if tok[0] == "num":
            val = _parse_int(tok[1])
            if val is None:
                raise _ArithError
            return val
        if tok[0] == "name":
            nxt = self.peek()
            cur = self.lookup(tok[1])
            if nxt and nxt[0] == "op" and nxt[1] in ("++", "--"):
                self.i += 1
                self.assign(tok[1], None if cur is None else cur + (1 if nxt[1] == "++" else -1))
            return cur
        raise _ArithError


def _expr_eval(tokens: list[str]) -> str | None:
    """``expr`` over integers: + - * / % and parentheses. Anything else is unknown."""
    pos = 0

    def atom():
        nonlocal pos
        if pos >= len(tokens):
            raise _ArithError
        tok = tokens[pos]
        pos += 1
        if tok == "(":
            val = add()
            if pos >= len(tokens) or tokens[pos] != ")":
                raise _ArithError
            pos += 1
            return val
        if re.fullmatch(r"\s*[-+]?[0-9]+\s*", tok):
            return int(tok)
        raise _ArithError

    def mul():
        nonlocal pos
        val = atom()
        while pos < len(tokens) and tokens[pos] in ("*", "/", "%"):
            op = tokens[pos]
            pos += 1
            rhs = atom()
            val = val * rhs if op == "*" else (_c_div(val, rhs) if op == "/" else _c_mod(val, rhs))
            if val is None:
                raise _ArithError
        return val

    def add():
        nonlocal pos
        val = mul()
        while pos < len(tokens) and tokens[pos] in ("+", "-"):
            op = tokens[pos]
            pos += 1
            rhs = mul()
            val = val + rhs if op == "+" else val - rhs
        return val

    try:
        result = add()
    except (_ArithError, RecursionError):
        return None
    if pos != len(tokens):
        return None
    return str(result)


# ---------------------------------------------------------------------------------------
# the variable table
# ---------------------------------------------------------------------------------------


class _Var:
    __slots__ = ("parts", "array", "exported", "unset", "span", "kind", "value", "assumed", "public")

    def __init__(self, parts, exported, span, kind, array=None, unset=False):
        self.parts = tuple(parts)  # ((value|None, assumed|None), ...)
        if len(self.parts) > _MAX_VAR_PARTS:  # bounded, however often a script doubles a variable
            self.parts = (_join(self.parts),)
        if array is not None and len(array) > _MAX_ARRAY_ELEMENTS:
            array, self.parts = None, ((None, None),)
        self.array = array  # tuple of parts-tuples for indexed arrays
        self.exported = exported
        self.unset = unset
        self.span = span
        self.kind = kind
        if array is not None and not self.parts:
            self.parts = array[0] if array else ()
        self.value, self.assumed = _join(self.parts)
        self.public = Value(self.value, span, kind, self.assumed)

    def same(self, other: _Var) -> bool:
        return (
            self.parts == other.parts
            and self.array == other.array
            and self.exported == other.exported
            and self.unset == other.unset
        )

    def with_export(self, exported: bool) -> _Var:
        return _Var(self.parts, exported, self.span, self.kind, self.array, self.unset)


def _unknown_var(exported: bool, span, kind: str, assumed: str | None = None) -> _Var:
    return _Var(((None, assumed),), exported, span, kind)


class _Ctx(NamedTuple):
    function: str | None = None
    conditional: bool = False
    in_loop: bool = False
    from_eval: bool = False
    background: bool = False
    depth: int = 0
    child_shell: bool = False  # bash -c: non-exported variables of the parent are gone


# ---------------------------------------------------------------------------------------
# the walker
# ---------------------------------------------------------------------------------------


class _Walker:
    def __init__(self, script: Script, data: bytes):
        self.script = script
        self.source = script.source
        self.data = data
        self.fixed_span: Span | None = None  # set while walking an eval'd string
        self.ascii = len(data) == len(script.source.text)  # byte offsets are character offsets
        self.eval_depth = 0
        self.vars: dict[str, _Var] = {}
        self.allexport = False
        self.locals: list[set[str]] = []
        self.func_assigns: dict[str, tuple[frozenset, frozenset]] = {}
        self.events: list[tuple] = []  # ("assign", Assignment, ctx) / ("command", Command, ctx)
        self.hoisted: dict[int, int] = {}  # command start byte -> leading segments already run
        self.owned = True  # whether self.vars may be written in place
        self.logs: list[set[str]] = []  # names written, one set per open branch
        self._nesting = 0
        self._assign_index: list[tuple] = []
        self._literal = True
        self._ctx = _Ctx()

    # ---- positions ----------------------------------------------------------------

    def span(self, node) -> Span:
        if self.fixed_span is not None:
            return self.fixed_span
        if self.ascii:
            return Span(self.source, node.start_byte, node.end_byte)
        cho = self.source.char_offset
        return Span(self.source, cho(node.start_byte), cho(node.end_byte))

    def span_bytes(self, start: int, end: int) -> Span:
        if self.fixed_span is not None:
            return self.fixed_span
        if self.ascii:
            return Span(self.source, start, end)
        cho = self.source.char_offset
        return Span(self.source, cho(start), cho(end))

    def text(self, node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def text_bytes(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8", "replace")

    # ---- statements ---------------------------------------------------------------

    def block(self, children, ctx: _Ctx) -> None:
        count = len(children)
        for index, child in enumerate(children):
            if not child.is_named:
                continue
            bg = index + 1 < count and children[index + 1].type == "&"
            self.stmt(child, ctx._replace(background=True) if bg else ctx)

    def stmt(self, node, ctx: _Ctx):
        t = node.type
        if ctx.depth > _MAX_DEPTH:
            return None
        self._ctx = ctx
        if t == "command":
            return self.command(node, ctx)
        if t in ("pipeline", "list", "redirected_statement", "negated_command"):
            self.hoist_assignments(node, ctx)
        if t == "variable_assignment":
            self.assign_statement([node], ctx, node)
        elif t == "variable_assignments":
            self.assign_statement([c for c in node.children if c.type == "variable_assignment"], ctx, node)
        elif t == "declaration_command":
            self.declaration(node, ctx)
        elif t == "unset_command":
            self.unset(node, ctx)
        elif t == "redirected_statement":
            self.redirected(node, ctx)
        elif t == "pipeline":
            parts = [c for c in node.children if c.is_named and c.type != "comment"]
            if len(parts) <= 1:
                for part in parts:
                    self.stmt(part, ctx._replace(depth=ctx.depth + 1))
            else:
                saved = self.share()
                for part in parts:
                    self.use(saved)
                    self.stmt(part, ctx._replace(depth=ctx.depth + 1))
                self.use(saved)
        elif t == "list":
            self.list_(node, ctx)
        elif t == "subshell":
            saved = self.share()
            saved_allexport = self.allexport
            self.block(node.children, ctx._replace(depth=ctx.depth + 1))
            self.use(saved)
            self.allexport = saved_allexport
        elif t == "compound_statement":
            kids = node.children
            if kids and kids[0].type == "((":
                self.arith_command(node, ctx)
            else:
                self.block(kids, ctx._replace(depth=ctx.depth + 1))
        elif t == "if_statement":
            self.if_(node, ctx)
        elif t == "case_statement":
            self.case(node, ctx)
        elif t in ("while_statement", "until_statement"):
            self.loop(
                node,
                ctx,
                [c for c in self.field_children(node, "condition") if c.is_named],
                node.child_by_field_name("body"),
            )
        elif t in ("for_statement", "select_statement"):
            var = node.child_by_field_name("variable")
            names = {self.text(var)} if var is not None else set()
            self.loop(node, ctx, [], node.child_by_field_name("body"), names)
        elif t == "c_style_for_statement":
            self.loop(node, ctx, [], node.child_by_field_name("body"))
        elif t == "function_definition":
            self.function_def(node, ctx)
        elif t == "negated_command":
            for child in node.children:
                if child.is_named:
                    self.stmt(child, ctx._replace(depth=ctx.depth + 1))
        elif t in ("do_group", "else_clause", "program"):
            self.block(node.children, ctx._replace(depth=ctx.depth + 1))
        return None

    def field_children(self, node, name: str) -> list:
        out = []
        for i, child in enumerate(node.children):
            if node.field_name_for_child(i) == name:
                out.append(child)
        return out

    def list_(self, node, ctx: _Ctx) -> None:
        # `a && b || c` nests to the left: walk the chain without recursing on it
        chain = []
        left = node
        while left.type == "list":
            kids = [c for c in left.children if c.type != "comment"]
            if len(kids) < 3:
                break
            chain.append(kids[-1])
            left = kids[0]
        inner = ctx._replace(depth=ctx.depth + 1)
        if left.type == "list":
            self.block(left.children, inner)
        else:
            self.stmt(left, inner._replace(background=False))
        for right in reversed(chain):
            base = self.share()
            self.logs.append(set())
            self.stmt(right, inner._replace(conditional=True))
            branch = self.share()
            self.merge(base, [base, branch], self.end_log())

    # ---- the variable table: copy on write, with a log of names written in each branch ----

    def share(self) -> dict:
        """The current table, which the caller keeps: the next write copies it first."""
        self.owned = False
        return self.vars

    def use(self, table: dict) -> None:
        self.vars = table
        self.owned = False

    def set_var(self, name: str, var: _Var) -> None:
        if not self.owned:
            self.vars = dict(self.vars)
            self.owned = True
        self.vars[name] = var
        if self.logs:
            self.logs[-1].add(name)

    def end_log(self, propagate: bool = True) -> set[str]:
        names = self.logs.pop()
        if propagate and self.logs:
            self.logs[-1].update(names)
        return names

    def merge(self, base: dict, branches: list[dict], names: set[str]) -> None:
        """Make the table the join of the branches; ``names`` are the variables any branch wrote."""
        changed = {}
        for name in names:
            got = [b.get(name) for b in branches]
            first = got[0]
            if all(g is first for g in got):
                if first is not base.get(name):
                    changed[name] = first
                continue
            if first is not None and all(g is not None and g.same(first) for g in got):
                changed[name] = first
                continue
            exported = any(g is not None and g.exported for g in got)
            setters = [g for g in got if g is not None and g is not base.get(name)]
            span = setters[-1].span if setters else None
            kind = setters[-1].kind if setters else "assignment"
            assumed_vals = set()
            for g in got:
                if g is None:
                    assumed_vals.add(None if name in _ALWAYS_SET else "")
                elif g.unset:
                    assumed_vals.add("")
                else:
                    assumed_vals.add(g.assumed)
            assumed = assumed_vals.pop() if len(assumed_vals) == 1 else None
            changed[name] = _unknown_var(exported, span, kind, assumed)
        if not changed:
            self.use(base)
            return
        result = dict(base)
        for name, var in changed.items():
            if var is None:
                result.pop(name, None)
            else:
                result[name] = var
        self.vars = result
        self.owned = True

    def if_(self, node, ctx: _Ctx) -> None:
        kids = node.children
        inner = ctx._replace(depth=ctx.depth + 1)
        i = 0
        # condition: between `if` and `then`
        while i < len(kids) and kids[i].type != "then":
            if kids[i].is_named:
                self.stmt(kids[i], inner)
            i += 1
        base = self.share()
        self.logs.append(set())
        branches = []
        body = []
        i += 1
        has_else = False
        clauses = []
        while i < len(kids):
            k = kids[i]
            if k.type in ("elif_clause", "else_clause"):
                clauses.append(k)
            elif k.type != "fi" and k.is_named:
                body.append(k)
            i += 1
        cond_ctx = inner._replace(conditional=True)
        for k in body:
            self.stmt(k, cond_ctx)
        branches.append(self.share())
        # elif conditions run only when the branches before them did not
        pre = base
        for clause in clauses:
            if clause.type == "else_clause":
                has_else = True
                self.use(pre)
                self.block(clause.children, cond_ctx)
                branches.append(self.share())
                continue
            ck = clause.children
            j = 0
            self.use(pre)
            while j < len(ck) and ck[j].type != "then":
                if ck[j].is_named:
                    self.stmt(ck[j], cond_ctx)
                j += 1
            pre = self.share()
            for k in ck[j + 1 :]:
                if k.is_named:
                    self.stmt(k, cond_ctx)
            branches.append(self.share())
        if not has_else:
            branches.append(pre)
        self.merge(base, branches, self.end_log())

    def case(self, node, ctx: _Ctx) -> None:
        inner = ctx._replace(depth=ctx.depth + 1, conditional=True)
        base = self.share()
        self.logs.append(set())
        branches = []
        has_default = False
        for item in node.children:
            if item.type != "case_item":
                continue
            self.use(base)
            for i, child in enumerate(item.children):
                fname = item.field_name_for_child(i)
                if fname == "value":
                    if self.text(child).strip() == "*":
                        has_default = True
                    continue
                if fname == "termination" or not child.is_named:
                    continue
                self.stmt(child, inner)
            branches.append(self.share())
        if not has_default:
            branches.append(base)
        self.merge(base, branches, self.end_log())

    def loop(self, node, ctx: _Ctx, conditions, body, extra_names: set[str] | None = None) -> None:
        names = set(extra_names or ())
        self.assigned_names(node, names)
        before = self.share()
        self.logs.append(set())
        for name in names:
            old = self.vars.get(name)
            self.set_var(
                name,
                _unknown_var(
                    bool(old and old.exported) or self.allexport,
                    old.span if old else None,
                    old.kind if old else "assignment",
                ),
            )
        inner = ctx._replace(depth=ctx.depth + 1, in_loop=True)
        for cond in conditions:
            self.stmt(cond, inner)
        if body is not None:
            self.block(body.children, inner) if body.type == "do_group" else self.stmt(body, inner)
        written = self.end_log()
        for name in names | written:
            cur = self.vars.get(name)
            old = before.get(name)
            exported = bool(cur and cur.exported) or bool(old and old.exported)
            self.set_var(name, _unknown_var(exported, cur.span if cur else None, cur.kind if cur else "assignment"))

    def assigned_names(self, node, out: set[str]) -> None:
        """Names a subtree may assign (syntactically): used to make loop variables unknown.

        The first loop scanned records every assignment site under it; loops nested inside it
        reuse that index, so deeply nested loops stay linear.
        """
        entry = next((e for e in self._assign_index if e[0] <= node.start_byte and node.end_byte <= e[1]), None)
        if entry is None:
            sites = sorted(self.assignment_sites(node))
            entry = (node.start_byte, node.end_byte, [p for p, _ in sites], [n for _, n in sites])
            self._assign_index.append(entry)
        _lo, _hi, positions, names = entry
        a = bisect.bisect_left(positions, node.start_byte)
        b = bisect.bisect_left(positions, node.end_byte)
        for name in names[a:b]:
            if name.startswith("()"):
                called = self.func_assigns.get(name[2:])
                if called:
                    out.update(called[0])
            else:
                out.add(name)

    def assignment_sites(self, node) -> list[tuple[int, str]]:
        sites: list[tuple[int, str]] = []
        stack = [node]
        while stack:
            n = stack.pop()
            t = n.type
            pos = n.start_byte
            if t == "variable_assignment":
                name = n.child_by_field_name("name")
                if name is not None:
                    if name.type == "subscript":
                        name = name.child_by_field_name("name") or name
                    sites.append((pos, self.text(name)))
            elif t in ("for_statement", "select_statement"):
                var = n.child_by_field_name("variable")
                if var is not None:
                    sites.append((pos, self.text(var)))
            elif t in ("declaration_command", "unset_command"):
                for c in n.children:
                    if c.type == "variable_name":
                        sites.append((pos, self.text(c)))
            elif t == "expansion":
                kids = n.children
                for i, c in enumerate(kids):
                    if c.type in (":=", "=") and i > 0:
                        sites.append((pos, self.text(kids[i - 1]).split("[")[0]))
            elif t in ("arithmetic_expansion", "c_style_for_statement") or (
                t == "compound_statement" and n.children and n.children[0].type == "(("
            ):
                for m in _ARITH_ASSIGN_RE.finditer(self.text(n)):
                    sites.append((pos, m.group(1) or m.group(2) or m.group(3)))
                continue
            elif t == "command":
                name = n.child_by_field_name("name")
                if name is not None:
                    cmd = self.text(name)
                    if cmd in ("read", "mapfile", "readarray", "getopts", "printf", "let"):
                        for arg in n.children_by_field_name("argument"):
                            txt = self.text(arg).strip("\"'")
                            m = _ASSIGN_WORD_RE.match(txt)
                            if m:
                                sites.append((pos, m.group(1)))
                            elif _NAME_RE.match(txt):
                                sites.append((pos, txt))
                    else:
                        sites.append((pos, "()" + cmd))
            stack.extend(n.children)
        return sites

    def function_def(self, node, ctx: _Ctx) -> None:
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name_node is None:
            return
        name = self.text(name_node)
        saved = self.share()
        saved_allexport = self.allexport
        self.logs.append(set())
        self.locals.append(set())
        if body is not None:
            inner = ctx._replace(function=name, depth=ctx.depth + 1, conditional=False, in_loop=False)
            if body.type == "compound_statement":
                self.block(body.children, inner)
            else:
                self.stmt(body, inner)
        local_names = self.locals.pop()
        written = self.end_log(propagate=False)
        after = self.vars
        assigns = frozenset(n for n in written if after.get(n) is not saved.get(n) and n not in local_names)
        exported = frozenset(n for n in assigns if after[n].exported)
        self.use(saved)
        self.allexport = saved_allexport
        self.func_assigns[name] = (assigns, exported)
        self.script.functions[name] = FunctionDef(name, self.span(node), assigns)

    def arith_command(self, node, ctx: _Ctx) -> None:
        kids = node.children
        if len(kids) < 2:
            return
        self.arith_text(kids[0].end_byte, kids[-1].start_byte if kids[-1].type == "))" else node.end_byte, node)

    def redirected(self, node, ctx: _Ctx) -> None:
        body = node.child_by_field_name("body")
        cmd = None
        if body is not None:
            cmd = self.stmt(body, ctx._replace(depth=ctx.depth + 1))
        redirects = [c for c in node.children if c.type in _REDIRECTS]
        self.heredocs(redirects, cmd)

    # ---- assignments ----------------------------------------------------------------

    def record_assignment(self, a: Assignment, ctx: _Ctx) -> Assignment:
        a.in_function = ctx.function
        a.conditional = ctx.conditional
        a.in_loop = ctx.in_loop
        a.from_eval = ctx.from_eval
        self.script.assignments.append(a)
        return a

    def assignment_parts(self, node):
        """(name, name_node, op, value_node, is_subscript) of a variable_assignment node."""
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        op = "="
        for child in node.children:
            if child.type in ("=", "+="):
                op = child.type
                break
        subscript = False
        if name_node is not None and name_node.type == "subscript":
            subscript = True
            name_node = name_node.child_by_field_name("name") or name_node
        name = self.text(name_node) if name_node is not None else self.text(node).split("=")[0]
        return name, name_node, op, value_node, subscript

    def assign_value(self, node, value_node, name: str, op: str, subscript: bool):
        """Evaluate the right side of an assignment: (Word, parts, array)."""
        if value_node is None:
            eq_end = node.end_byte
            span = self.span_bytes(eq_end, eq_end)
            word = Word(span, "", "", True, "", False, (("", ""),))
            parts: tuple = (("", ""),)
            array = None
        elif value_node.type == "array":
            elements = []
            literal = True
            for f in self.fields([c for c in value_node.children if c.is_named and c.type != "comment"]):
                elements.append(f.parts)
                literal = literal and f.literal
            array = tuple(elements)
            joined = [_join(el) for el in elements]
            joined_v = None if any(j[0] is None for j in joined) else " ".join(j[0] for j in joined)
            joined_a = None if any(j[1] is None for j in joined) else " ".join(j[1] for j in joined)
            word = Word(self.span(value_node), self.text(value_node), joined_v, literal, joined_a, False, ())
            parts = array[0] if array else ()
        else:
            saved_literal = self._literal
            self._literal = True
            pieces = self.pieces(value_node, False)
            raw = self.text(value_node)
            if raw.startswith("~"):
                pieces = [(None, None, False)]
                self._literal = False
            parts = tuple((p[0], p[1]) for p in pieces if p is not None)
            v, a = _join(parts)
            word = Word(self.span(value_node), raw, v, self._literal, a, False, parts)
            self._literal = saved_literal
            array = None
        old = self.vars.get(name)
        if subscript:
            return word, ((None, None),), None
        if op == "+=" and old is not None and not old.unset:
            if array is not None:
                base = old.array if old.array is not None else ((old.parts,) if old.parts else ())
                array = tuple(base) + array
                parts = array[0] if array else ()
            else:
                parts = old.parts + parts
        elif op == "+=" and old is None:
            # appending to a variable the caller may have set
            parts = ((None, ""),) + parts if array is None else parts
        return word, parts, array

    def assign_statement(self, nodes, ctx: _Ctx, stmt_node) -> None:
        for node in nodes:
            name, name_node, op, value_node, subscript = self.assignment_parts(node)
            word, parts, array = self.assign_value(node, value_node, name, op, subscript)
            old = self.vars.get(name)
            exported = bool(old is not None and old.exported and not old.unset) or self.allexport
            span = self.span(node)
            self.set_var(name, _Var(parts, exported, span, "assignment", array))
            a = self.record_assignment(
                Assignment(
                    name, self.span(name_node) if name_node is not None else span, word, span, exported, "plain"
                ),
                ctx,
            )
            self.events.append(("assign", a, ctx, stmt_node.start_byte))

    def declaration(self, node, ctx: _Ctx) -> None:
        kids = node.children
        if not kids:
            return
        keyword = kids[0].type if not kids[0].is_named else self.text(kids[0])
        flags = ""
        unflags = ""
        export = keyword == "export"
        for child in kids[1:]:
            if child.type == "word":
                txt = self.text(child)
                if txt.startswith("-"):
                    flags += txt[1:]
                    continue
                if txt.startswith("+"):
                    unflags += txt[1:]
                    continue
        if "f" in flags or "F" in flags or ("p" in flags and keyword != "export"):
            return
        if keyword == "export" and "n" in flags:
            export_flag: bool | None = False
        elif export or "x" in flags:
            export_flag = True
        elif "x" in unflags:
            export_flag = False
        else:
            export_flag = None  # leave as is
        is_local = keyword == "local" or (keyword in ("declare", "typeset") and self.locals and "g" not in flags)
        kind = "export" if export_flag else "plain"
        for child in kids[1:]:
            t = child.type
            if t == "variable_assignment":
                name, name_node, op, value_node, subscript = self.assignment_parts(child)
                word, parts, array = self.assign_value(child, value_node, name, op, subscript)
                if "i" in flags and word.value is not None:
                    val = self.arith_value_text(word.value, word.assumed)
                    parts = (val,)
                old = self.vars.get(name)
                exported = (
                    export_flag
                    if export_flag is not None
                    else bool(old and old.exported and not old.unset) or self.allexport
                )
                span = self.span(child)
                self.set_var(name, _Var(parts, exported, span, "export" if exported else "assignment", array))
                if is_local and self.locals:
                    self.locals[-1].add(name)
                a = self.record_assignment(
                    Assignment(
                        name, self.span(name_node) if name_node is not None else span, word, span, bool(exported), kind
                    ),
                    ctx,
                )
                self.events.append(("assign" if not exported else "export", a, ctx, node.start_byte))
            elif t == "variable_name":
                name = self.text(child)
                span = self.span(child)
                old = self.vars.get(name)
                if is_local and self.locals:
                    self.locals[-1].add(name)
                if export_flag is None:
                    if old is None and (keyword == "local" or is_local):
                        self.set_var(name, _Var((("", ""),), False, span, "assignment", unset=True))
                    continue
                if old is None:
                    if export_flag:
                        self.set_var(name, _Var(((None, None),), True, span, "caller-env"))
                        self.record_assignment(Assignment(name, span, None, span, True, "export"), ctx)
                    continue
                self.set_var(name, old.with_export(export_flag and not old.unset))
                if export_flag:
                    self.record_assignment(Assignment(name, span, None, span, True, "export"), ctx)
            elif t in ("word", "string", "raw_string", "concatenation") and not self.text(child).startswith(("-", "+")):
                for f in self.fields([child]):
                    if f.value is None:
                        continue
                    m = _ASSIGN_WORD_RE.match(f.value)
                    if not m or m.group(2) != "=":
                        continue
                    name = m.group(1)
                    val = f.value[m.end() :]
                    old = self.vars.get(name)
                    exported = export_flag if export_flag is not None else bool(old and old.exported) or self.allexport
                    self.set_var(name, _Var(((val, val),), exported, f.span, "export" if exported else "assignment"))
                    vw = Word(f.span, f.raw, val, f.literal, val, False, ((val, val),))
                    self.record_assignment(Assignment(name, f.span, vw, f.span, bool(exported), kind), ctx)

    def unset(self, node, ctx: _Ctx) -> None:
        functions = False
        for child in node.children:
            txt = self.text(child)
            if child.type == "word" and txt.startswith("-"):
                functions = "f" in txt
                continue
            if child.type in ("variable_name", "word"):
                if functions:
                    self.script.functions.pop(txt, None)
                    self.func_assigns.pop(txt, None)
                else:
                    self.set_var(txt, _Var((("", ""),), False, self.span(child), "assignment", unset=True))

    # ---- expansion ----------------------------------------------------------------

    def pieces(self, node, quoted: bool, depth: int = 0) -> list:
        """Expand a word node into pieces: (value|None, assumed|None, quoted) or BREAK."""
        if self._nesting > _MAX_EXPANSION_NESTING:
            self._literal = False
            return [(None, None, quoted)]
        self._nesting += 1
        try:
            return self._pieces(node, quoted, depth)
        finally:
            self._nesting -= 1

    def _pieces(self, node, quoted: bool, depth: int) -> list:
        t = node.type
        if t == "word":
            raw = self.text(node)
            if not quoted and _BRACE_RE.search(raw):
                self._literal = False
                return [(None, None, False)]
            if quoted:
                return [_known(_unquote_dq(raw, "$`\\"), True)]
            return [_known(_unquote_word(raw), False)]
        if t in ("number", "variable_name", "regex", "extglob_pattern", "test_operator", "special_variable_name"):
            raw = self.text(node)
            return [_known(raw if quoted else _unquote_word(raw), quoted)]
        if t in ("string", "translated_string"):
            return self.dq_pieces(node, depth)
        if t == "raw_string":
            raw = self.text(node)
            return [_known(raw[1:-1] if raw.endswith("'") and len(raw) >= 2 else raw[1:], True)]
        if t == "ansi_c_string":
            raw = self.text(node)
            inner = raw[2:-1] if raw.endswith("'") and len(raw) >= 3 else raw[2:]
            return [_known(_ansi_c(inner), True)]
        if t == "string_content":
            return [_known(_unquote_dq(self.text(node)), True)]
        if t in ("concatenation", "command_name"):
            if t == "concatenation" and not quoted:
                raw = self.text(node)
                if _BRACE_RE.search(raw) and any(c.type == "word" and "{" in self.text(c) for c in node.children):
                    self._literal = False
                    return [(None, None, False)]
            out = []
            pos = node.start_byte
            for child in node.children:
                if child.start_byte > pos:
                    gap = self.text_bytes(pos, child.start_byte)
                    out.append(_known(_unquote_dq(gap) if quoted else _unquote_word(gap), quoted))
                out.extend(self.pieces(child, quoted, depth + 1))
                pos = child.end_byte
            if node.end_byte > pos:
                gap = self.text_bytes(pos, node.end_byte)
                out.append(_known(_unquote_dq(gap) if quoted else _unquote_word(gap), quoted))
            return out
        if t == "simple_expansion":
            self._literal = False
            name_node = None
            for child in node.children:
                if child.is_named:
                    name_node = child
            name = self.text(name_node) if name_node is not None else self.text(node)[1:]
            return self.var_pieces(name, quoted, node)
        if t == "expansion":
            self._literal = False
            return self.expansion(node, quoted, depth)
        if t == "arithmetic_expansion":
            self._literal = False
            kids = node.children
            start = kids[0].end_byte if kids else node.start_byte
            end = kids[-1].start_byte if kids and kids[-1].type == "))" else node.end_byte
            v, a = self.arith_text(start, end, node)
            return [(v, a, quoted)]
        if t == "command_substitution":
            self._literal = False
            v, a = self.command_substitution(node)
            return [(v, a, quoted)]
        # process substitution, brace expressions, anything unusual: unknown
        self._literal = False
        return [(None, None, quoted)]

    def dq_pieces(self, node, depth: int) -> list:
        kids = node.children
        start = kids[0].end_byte if kids and kids[0].type in ('"', '$"') else node.start_byte + 1
        end = kids[-1].start_byte if len(kids) > 1 and kids[-1].type == '"' else node.end_byte
        out = []
        pos = start
        for child in kids:
            if not child.is_named:
                continue
            if child.start_byte > pos:
                out.append(_known(_unquote_dq(self.text_bytes(pos, child.start_byte)), True))
            out.extend(self.pieces(child, True, depth + 1))
            pos = max(pos, child.end_byte)
        if end > pos:
            out.append(_known(_unquote_dq(self.text_bytes(pos, end)), True))
        if not out:
            out.append(_known("", True))
        return out

    def lookup(self, name: str, node=None) -> _Var | None:
        var = self.vars.get(name)
        if node is not None and self.fixed_span is None:
            self.script.references.append(VarRef(name, self.span(node), var is not None))
        return var

    def var_pieces(self, name: str, quoted: bool, node) -> list:
        if not _NAME_RE.match(name):
            # positional and special parameters
            if name in ("@", "*"):
                return [(None, "", False)]  # any number of words, even when quoted
            if name.isdigit():
                return [(None, "", quoted)]
            if name == "#":
                return [(None, "0", quoted)]
            return [(None, None, quoted)]
        var = self.lookup(name, node)
        if var is None:
            return [(None, None if name in _ALWAYS_SET else "", quoted)]
        if var.unset:
            return [("", "", quoted)]
        return [(v, a, quoted) for v, a in var.parts] or [("", "", quoted)]

    def expansion(self, node, quoted: bool, depth: int) -> list:
        kids = [c for c in node.children if c.type not in ("${", "}")]
        if not kids:
            return [(None, None, quoted)]
        first = kids[0]
        if first.type == "!":
            return [(None, None, quoted)]
        length = False
        if first.type == "#" and len(kids) >= 2:
            length = True
            kids = kids[1:]
        target = kids[0]
        rest = kids[1:]
        # the variable's pieces, as a list of fields for arrays
        elements = None
        star = False
        if target.type == "subscript":
            name_node = target.child_by_field_name("name")
            index_node = target.child_by_field_name("index")
            name = self.text(name_node) if name_node is not None else ""
            index = self.text(index_node) if index_node is not None else ""
            var = self.lookup(name, node)
            if var is None:
                base = [(None, None if name in _ALWAYS_SET else "", quoted)]
            elif var.unset:
                base = []
                elements = [] if index in ("@", "*") else None
            elif index in ("@", "*"):
                star = index == "*"
                elements = list(var.array) if var.array is not None else [var.parts]
                base = None
            else:
                idx = _parse_int(index)
                if var.array is not None and idx is not None:
                    arr = var.array
                    base = [(v, a, quoted) for v, a in arr[idx]] if -len(arr) <= idx < len(arr) else [("", "", quoted)]
                elif var.array is None and idx == 0:
                    base = [(v, a, quoted) for v, a in var.parts]
                else:
                    base = [(None, None, quoted)]
        elif target.type in ("variable_name", "special_variable_name"):
            name = self.text(target)
            base = self.var_pieces(name, quoted, node)
            var = self.vars.get(name) if _NAME_RE.match(name) else None
        else:
            return [(None, None, quoted)]
        if elements is not None:
            if length:
                n = str(len(elements))
                return [(n, n, quoted)]
            if rest:
                return [(None, None, quoted)]
            out: list = []
            for i, el in enumerate(elements):
                if i:
                    out.append((" ", " ", quoted) if star and quoted else BREAK)
                out.extend((v, a, quoted) for v, a in el)
            if not elements and quoted and not star:
                return []
            return out
        if length:
            v, a = _join(base)
            return [(None if v is None else str(len(v)), None if a is None else str(len(a)), quoted)]
        if not rest:
            return base
        op_node = rest[0]
        op = op_node.type
        operand = rest[1:]
        bv, ba = _join(base)
        unset_known = target.type == "variable_name" and var is not None and var.unset

        def alt():
            return self.operand_pieces(operand, quoted, depth, op_node.end_byte, node.end_byte - 1)

        if op in (":-", "-", ":=", "=", ":+", "+", ":?", "?"):
            colon = op.startswith(":")
            core = op.lstrip(":")
            # strict decision: None when unknown
            if bv is None and not unset_known:
                use_base_strict = None
            elif unset_known:
                use_base_strict = False
            elif colon:
                use_base_strict = bv != ""
            else:
                use_base_strict = True  # known value: the variable is set
            # assumed decision (caller sets nothing)
            if ba is None:
                use_base_assumed = None
            elif colon:
                use_base_assumed = ba != ""
            else:
                use_base_assumed = var is not None and not var.unset
            if core == "+":
                use_base_strict = None if use_base_strict is None else not use_base_strict
                use_base_assumed = None if use_base_assumed is None else not use_base_assumed
                alt_pieces = alt()
                empty = [("", "", quoted)]
                chosen_strict = None if use_base_strict is None else (empty if use_base_strict else alt_pieces)
                av = _join(alt_pieces)[1]
                chosen_assumed = None if use_base_assumed is None else ("" if use_base_assumed else av)
            else:
                alt_pieces = alt()
                chosen_strict = None if use_base_strict is None else (base if use_base_strict else alt_pieces)
                chosen_assumed = (
                    None if use_base_assumed is None else (ba if use_base_assumed else _join(alt_pieces)[1])
                )
            if core == "?" and use_base_strict is False:
                return [(None, None, quoted)]
            if core == "=" and target.type == "variable_name" and use_base_strict is not True:
                self.default_assignment(target, node, operand, alt_pieces, use_base_strict, chosen_assumed)
            if chosen_strict is not None:
                return chosen_strict
            return [(None, chosen_assumed, quoted)]
        if op in ("#", "##", "%", "%%"):
            pat_pieces = self.operand_pieces(operand, True, depth, op_node.end_byte, node.end_byte - 1)
            pv, pa = _join(pat_pieces)
            rv = None if bv is None or pv is None else _remove_affix(bv, pv, op)
            ra = None if ba is None or pa is None else _remove_affix(ba, pa, op)
            return [(rv, ra, quoted)]
        return [(None, None, quoted)]

    def operand_pieces(self, operand, quoted: bool, depth: int, start: int, end: int) -> list:
        out = []
        pos = start
        for child in operand:
            if not child.is_named:
                continue
            if child.start_byte > pos:
                gap = self.text_bytes(pos, child.start_byte)
                out.append(_known(_unquote_dq(gap) if quoted else _unquote_word(gap), quoted))
            out.extend(self.pieces(child, quoted, depth + 1))
            pos = max(pos, child.end_byte)
        if end > pos:
            gap = self.text_bytes(pos, end)
            out.append(_known(_unquote_dq(gap) if quoted else _unquote_word(gap), quoted))
        return out or [("", "", quoted)]

    def default_assignment(self, target, node, operand, alt_pieces, use_base_strict, chosen_assumed) -> None:
        name = self.text(target)
        old = self.vars.get(name)
        exported = bool(old and old.exported and not old.unset) or self.allexport
        span = self.span(node)
        parts = tuple((p[0], p[1]) for p in alt_pieces if p is not None)
        if use_base_strict is False:
            self.set_var(name, _Var(parts, exported, span, "default"))
        else:
            self.set_var(name, _unknown_var(exported, span, "default", chosen_assumed))
        v, a = _join(parts)
        if operand:
            wspan = self.span_bytes(operand[0].start_byte, operand[-1].end_byte)
            raw = self.text_bytes(operand[0].start_byte, operand[-1].end_byte)
        else:
            wspan = self.span_bytes(node.end_byte - 1, node.end_byte - 1)
            raw = ""
        word = Word(wspan, raw, v, all(c.type in ("word", "number", "raw_string") for c in operand), a, False, parts)
        ctx = self._ctx
        self.record_assignment(Assignment(name, self.span(target), word, span, exported, "default"), ctx)

    def arith_text(self, start: int, end: int, node) -> tuple[str | None, str | None]:
        """Evaluate ``$(( ... ))`` between two byte offsets: expansions first, then arithmetic."""
        strict_parts: list[str] | None = []
        assumed_parts: list[str] | None = []
        pos = start
        stack = [node]
        found = []
        while stack:
            n = stack.pop()
            for child in n.children:
                if child.start_byte < start or child.end_byte > end:
                    if child.start_byte < end and child.end_byte > start:
                        stack.append(child)
                    continue
                if child.type in ("simple_expansion", "expansion", "command_substitution", "arithmetic_expansion"):
                    found.append(child)
                else:
                    stack.append(child)
        found.sort(key=lambda c: c.start_byte)
        for child in found:
            if child.start_byte < pos:
                continue
            gap = self.text_bytes(pos, child.start_byte)
            v, a = _join(self.pieces(child, True))
            if strict_parts is not None:
                strict_parts = None if v is None else strict_parts + [gap, v]
            if assumed_parts is not None:
                assumed_parts = None if a is None else assumed_parts + [gap, a]
            pos = child.end_byte
        tail = self.text_bytes(pos, end)
        strict = None if strict_parts is None else "".join(strict_parts) + tail
        assumed = None if assumed_parts is None else "".join(assumed_parts) + tail
        return self.arith_value_text(strict, assumed)

    def arith_value_text(self, strict: str | None, assumed: str | None) -> tuple[str | None, str | None]:
        effects: dict[str, list] = {}

        def run(text: str | None, mode: int):
            if text is None:
                return None
            local: dict[str, int | None] = {}

            def lookup(name: str, depth: int = 0):
                if name in local:
                    return local[name]
                var = self.vars.get(name)
                if var is None:
                    return None if mode == 0 or name in _ALWAYS_SET else 0
                if var.unset:
                    return 0
                raw = var.value if mode == 0 else var.assumed
                if raw is None:
                    return None
                val = _parse_int(raw)
                if val is None and depth < 8 and raw.strip():
                    try:
                        val = _Arith(raw, lambda n: lookup(n, depth + 1), lambda n, v: None).run()
                    except (_ArithError, RecursionError):
                        val = None
                return val

            def assign(name: str, value):
                local[name] = value
                effects.setdefault(name, [None, None])[mode] = value

            try:
                result = _Arith(text, lookup, assign).run()
            except (_ArithError, RecursionError, OverflowError, ValueError):
                return None
            return result

        v = run(strict, 0)
        a = run(assumed, 1)
        for name, (ev, ea) in effects.items():
            old = self.vars.get(name)
            exported = bool(old and old.exported and not old.unset) or self.allexport
            sv = None if ev is None else str(ev)
            sa = None if ea is None else str(ea)
            self.set_var(name, _Var(((sv, sa),), exported, old.span if old else None, "assignment"))
        return (None if v is None else str(v), None if a is None else str(a))

    def command_substitution(self, node) -> tuple[str | None, str | None]:
        inner = [c for c in node.children if c.is_named and c.type != "comment"]
        if len(inner) != 1 or inner[0].type != "command":
            return UNKNOWN
        cmd = inner[0]
        name = cmd.child_by_field_name("name")
        if name is None or any(c.type == "variable_assignment" for c in cmd.children):
            return UNKNOWN
        program = self.text(name)
        args = [c for c in cmd.children_by_field_name("argument")]
        if any(c.type in _REDIRECTS for c in cmd.children):
            return UNKNOWN
        if program == "expr":
            words = self.fields(args)
            v = None if any(w.value is None for w in words) else _expr_eval([w.value for w in words])
            a = None if any(w.assumed is None for w in words) else _expr_eval([w.assumed for w in words])
            return (v, a)
        if program == "echo":
            words = self.fields(args)
            if words and words[0].value is not None and re.fullmatch(r"-[neE]+", words[0].value):
                if "e" in words[0].value:
                    return UNKNOWN
                words = words[1:]
            v = None if any(w.value is None for w in words) else " ".join(w.value for w in words).rstrip("\n")
            a = None if any(w.assumed is None for w in words) else " ".join(w.assumed for w in words).rstrip("\n")
            return (v, a)
        return UNKNOWN

    def fields(self, nodes) -> list[Word]:
        """Words bash passes for these argument nodes (after splitting unquoted expansions)."""
        out: list[Word] = []
        saved_literal = self._literal
        for node in nodes:
            self._literal = True
            pieces = self.pieces(node, False)
            literal = self._literal
            span = self.span(node)
            raw = self.text(node)
            if raw.startswith("~"):  # tilde expansion: a home directory we cannot know
                out.append(Word(span, raw, None, False, None, False, ((None, None),)))
                continue
            if literal and len(pieces) == 1 and pieces[0] is not None:
                v, a, _q = pieces[0]
                out.append(Word(span, raw, v, True, a, False, ((v, a),)))
                continue
            for field_parts, may_split in self.split(pieces):
                v, a = _join(field_parts)
                out.append(Word(span, raw, v, literal, a, may_split, tuple(field_parts)))
        self._literal = saved_literal
        return out

    @staticmethod
    def split(pieces) -> list[tuple[list, bool]]:
        fields: list[tuple[list, bool]] = []
        cur: list = []
        content = False
        may_split = False
        for p in pieces:
            if p is BREAK:
                if content:
                    fields.append((cur, may_split))
                cur, content, may_split = [], False, False
                continue
            v, a, q = p
            if q:
                cur.append((v, a))
                content = True
                continue
            if v is None:
                cur.append((None, a))
                content = True
                may_split = True
                continue
            if not v:
                continue
            chunks = _IFS_SPLIT.split(v)
            for i, chunk in enumerate(chunks):
                if i > 0:
                    if content:
                        fields.append((cur, may_split))
                    cur, content, may_split = [], False, False
                if chunk:
                    cur.append((chunk, chunk))
                    content = True
        if content:
            fields.append((cur, may_split))
        return fields

    # ---- simple commands ------------------------------------------------------------

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

    def hoist_assignments(self, node, ctx: _Ctx) -> None:
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

    def command(self, node, ctx: _Ctx):
        segments = self.segments(node)
        skip = self.hoisted.pop(node.start_byte, 0)
        result = None
        for seg in segments[skip:]:
            result = self.simple_command(seg, ctx)
        return result

    def simple_command(self, parts, ctx: _Ctx):
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
            self.set_var(name, _Var(vparts, True, aspan, "prefix", array))
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

    def build_command(self, words: list[Word], env: list[Assignment], visible: dict, span: Span, ctx: _Ctx) -> Command:
        index, wrappers, extra_env, clears, unsets = self.unwrap(words, ctx)
        extra = [
            (a.name, Value(a.value.value if a.value else None, a.span, "prefix", a.value.assumed if a.value else None))
            for a in extra_env
        ]
        cmd = Command(
            span=span,
            name=words[index],
            args=words[index + 1 :],
            env=env + extra_env,
            in_function=ctx.function,
            conditional=ctx.conditional,
            in_loop=ctx.in_loop,
            from_eval=ctx.from_eval,
            background=ctx.background,
            wrappers=wrappers,
            clears_env=clears,
            _scope=(visible, extra, unsets, clears, ctx.child_shell),
        )
        self.script.commands.append(cmd)
        self.events.append(("command", cmd, ctx, None))
        self.after_command(cmd, ctx)
        return cmd

    def unwrap(self, words: list[Word], ctx: _Ctx):
        """Peel ``nohup``/``env``/``exec``/``time``/... off the front of a command."""
        i = 0
        wrappers: list[Word] = []
        extra: list[Assignment] = []
        unsets: list[str] = []
        clears = False
        n = len(words)
        while i < n - 1:
            w = words[i]
            if w.value is None:
                break
            base = os.path.basename(w.value)
            j = i + 1
            local_env: list[Assignment] = []
            local_unsets: list[str] = []
            local_clear = False
            if base == "env":
                while j < n:
                    v = words[j].value
                    if v is None:
                        break
                    if v in ("-i", "-", "--ignore-environment"):
                        local_clear = True
                    elif v in ("-u", "--unset") and j + 1 < n:
                        j += 1
                        if words[j].value:
                            local_unsets.append(words[j].value)
                    elif v.startswith("--unset="):
                        local_unsets.append(v.split("=", 1)[1])
                    elif v.startswith("-u") and len(v) > 2:
                        local_unsets.append(v[2:])
                    elif v in ("-C", "--chdir") and j + 1 < n:
                        j += 1
                    elif v.startswith("--chdir=") or v in ("-0", "--null", "-v", "--debug"):
                        pass
                    elif v == "--":
                        j += 1
                        break
                    elif v.startswith("-"):
                        break
                    else:
                        m = _ASSIGN_WORD_RE.match(v)
                        if not m or m.group(2) != "=":
                            break
                        local_env.append(self.env_word_assignment(words[j], m.group(1), ctx))
                    j += 1
            elif base == "exec":
                while j < n and words[j].value is not None and words[j].value.startswith("-"):
                    v = words[j].value
                    if v == "--":
                        j += 1
                        break
                    if "c" in v:
                        local_clear = True
                    if "a" in v:
                        j += 1
                    j += 1
            elif base in ("nohup", "builtin"):
                if j < n and words[j].value == "--":
                    j += 1
            elif base == "time":
                while j < n and words[j].value in ("-p", "--"):
                    j += 1
            elif base == "command":
                if j < n and words[j].value in ("-v", "-V"):
                    break
                while j < n and words[j].value in ("-p", "--"):
                    j += 1
            elif base == "timeout":
                while j < n and words[j].value is not None and words[j].value.startswith("-"):
                    v = words[j].value
                    j += 1
                    if v in ("-s", "-k", "--signal", "--kill-after"):
                        j += 1
                j += 1  # the duration
            elif base == "stdbuf":
                while j < n and words[j].value is not None and words[j].value.startswith("-"):
                    v = words[j].value
                    j += 1
                    if v in ("-i", "-o", "-e"):
                        j += 1
            elif base == "nice":
                while j < n and words[j].value is not None and words[j].value.startswith("-"):
                    v = words[j].value
                    j += 1
                    if v in ("-n", "--adjustment"):
                        j += 1
            elif base == "setsid":
                while j < n and words[j].value is not None and words[j].value.startswith("-"):
                    j += 1
            elif base == "taskset":
                pid_mode = False
                while j < n and words[j].value is not None and words[j].value.startswith("-"):
                    if "p" in words[j].value:
                        pid_mode = True
                    j += 1
                if pid_mode:
                    break
                j += 1  # the mask / cpu list
            elif base == "srun":
                while j < n and words[j].value is not None and words[j].value.startswith("-"):
                    v = words[j].value
                    j += 1
                    if v == "--":
                        break
                    if v.startswith("--"):
                        if "=" not in v and v[2:] not in _SRUN_LONG_FLAGS:
                            j += 1
                    elif len(v) == 2 and v[1] not in _SRUN_SHORT_FLAGS:
                        j += 1
            elif base in ("mpirun", "mpiexec", "mpiexec.hydra", "orterun"):
                while j < n and words[j].value is not None and words[j].value.startswith("-"):
                    v = words[j].value
                    opt = v.lstrip("-")
                    j += 1
                    if v == "--":
                        break
                    if "=" in opt:
                        continue
                    if opt in _MPI_TWO_VALUES:
                        if opt in ("genv", "env") and j + 1 < n and words[j].value and _NAME_RE.match(words[j].value):
                            local_env.append(self.mpi_env(words[j], words[j + 1], ctx))
                        j += 2
                    elif opt == "x" and j < n:
                        m = _ASSIGN_WORD_RE.match(words[j].value or "")
                        if m and m.group(2) == "=":
                            local_env.append(self.env_word_assignment(words[j], m.group(1), ctx))
                        j += 1
                    elif opt not in _MPI_FLAGS:
                        j += 1
            elif base == "numactl":
                while j < n and words[j].value is not None and words[j].value.startswith("-"):
                    v = words[j].value
                    j += 1
                    if v in (
                        "-C",
                        "-N",
                        "-m",
                        "-p",
                        "-i",
                        "-P",
                        "--physcpubind",
                        "--cpunodebind",
                        "--membind",
                        "--preferred",
                        "--interleave",
                    ):
                        j += 1
            else:
                break
            if j >= n:
                break
            wrappers.extend(words[i:j])
            extra.extend(local_env)
            unsets.extend(local_unsets)
            if local_clear:
                clears = True
                extra = list(local_env)
            i = j
        return i, wrappers, extra, clears, unsets

    def mpi_env(self, name_word: Word, value_word: Word, ctx: _Ctx) -> Assignment:
        """``mpirun -genv NAME VALUE``: NAME=VALUE in the program's environment."""
        span = Span(name_word.span.source, name_word.span.start, max(name_word.span.end, value_word.span.end))
        return self.record_assignment(
            Assignment(name_word.value or "", name_word.span, value_word, span, True, "prefix"), ctx
        )

    def env_word_assignment(self, word: Word, name: str, ctx: _Ctx) -> Assignment:
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

    def after_command(self, cmd: Command, ctx: _Ctx) -> None:
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
                if _NAME_RE.match(name):
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
                    m = _ASSIGN_WORD_RE.match(w.raw.strip("\"'"))
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
        elif base in self.func_assigns:
            assigns, exported = self.func_assigns[base]
            for name in assigns:
                self.make_unknown(name, cmd.span, export=name in exported)

    def make_unknown(self, name: str, span, export: bool = False) -> None:
        old = self.vars.get(name)
        exported = export or bool(old and old.exported and not old.unset) or self.allexport
        self.set_var(name, _unknown_var(exported, span, "assignment"))

    def eval_words(self, cmd: Command, words: list[Word], ctx: _Ctx, child_shell: bool) -> None:
        if not words or any(w.value is None for w in words):
            return
        if self.eval_depth >= _MAX_EVAL_DEPTH:
            return
        text = " ".join(w.value for w in words)
        if not text.strip():
            return
        data = text.encode("utf-8")
        tree = _parser().parse(data)
        span = words[0].span if len(words) == 1 else Span(words[0].span.source, words[0].span.start, words[-1].span.end)
        saved = (self.data, self.fixed_span, self.share() if child_shell else self.vars)
        self.data = data
        self.fixed_span = span
        self.eval_depth += 1
        if tree.root_node.has_error:
            self.script.problems.append(ParseProblem(span, f"bash cannot parse the string run by `{cmd.basename}`"))
        inner = ctx._replace(from_eval=True, depth=ctx.depth + 1)
        try:
            if child_shell:
                self.vars = {n: v for n, v in self.vars.items() if v.exported and not v.unset}
                self.owned = True
                self.block(tree.root_node.children, inner._replace(child_shell=True))
            else:
                self.block(tree.root_node.children, inner)
        finally:
            self.data, self.fixed_span, old_vars = saved
            if child_shell:
                self.use(old_vars)
            self.eval_depth -= 1

    # ---- here-documents -------------------------------------------------------------

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
            return
        delim_raw = self.text(start_node)
        quoted = any(c in delim_raw for c in "'\"\\")
        delimiter = delim_raw.replace("'", "").replace('"', "").replace("\\", "")
        if body is None:
            if end_node is None:
                return
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
        if quoted:
            value = text
        else:
            value = self.expand_text(text)[0]
        self.script.heredocs.append(Heredoc(self.span_bytes(bstart, bend), target, value, delimiter, not quoted, cmd))

    def expand_text(self, text: str, depth: int = 0) -> tuple[str | None, str | None]:
        """Expand a here-document body (``$VAR``, ``${VAR...}``, ``$((...))``; ``$(...)`` is unknown)."""
        vals: list | None = []
        asms: list | None = []

        def add(v, a):
            nonlocal vals, asms
            if vals is not None:
                vals = None if v is None else vals + [v]
            if asms is not None:
                asms = None if a is None else asms + [a]

        i, n = 0, len(text)
        lit_start = 0
        while i < n:
            ch = text[i]
            if ch == "\\" and i + 1 < n:
                i += 2
                continue
            if ch == "`":
                add(_unquote_dq(text[lit_start:i], "$`\\"), _unquote_dq(text[lit_start:i], "$`\\"))
                end = text.find("`", i + 1)
                i = n if end == -1 else end + 1
                lit_start = i
                add(None, None)
                continue
            if ch != "$" or i + 1 >= n:
                i += 1
                continue
            lit = _unquote_dq(text[lit_start:i], "$`\\")
            add(lit, lit)
            nxt = text[i + 1]
            if text.startswith("$((", i):
                end = text.find("))", i + 3)
                if end == -1:
                    add(None, None)
                    i = n
                else:
                    inner = text[i + 3 : end]
                    iv, ia = self.expand_text(inner, depth + 1) if depth < 8 else UNKNOWN
                    add(*self.arith_value_text(iv, ia))
                    i = end + 2
            elif nxt == "(":
                level, j = 0, i + 1
                while j < n:
                    if text[j] == "(":
                        level += 1
                    elif text[j] == ")":
                        level -= 1
                        if level == 0:
                            break
                    j += 1
                add(None, None)
                i = j + 1
            elif nxt == "{":
                level, j = 0, i + 1
                while j < n:
                    if text[j] == "{":
                        level += 1
                    elif text[j] == "}":
                        level -= 1
                        if level == 0:
                            break
                    j += 1
                inner = text[i + 2 : j]
                add(*self.expand_braced(inner, depth))
                i = j + 1
            else:
                m = re.match(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]", text[i + 1 :])
                if not m:
                    i += 1
                    continue
                add(*_join(self.var_pieces(m.group(0), True, None)))
                i += 1 + len(m.group(0))
            lit_start = i
        lit = _unquote_dq(text[lit_start:], "$`\\")
        add(lit, lit)
        return (None if vals is None else "".join(vals), None if asms is None else "".join(asms))

    def expand_braced(self, inner: str, depth: int) -> tuple[str | None, str | None]:
        m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)(?::?[-=+?])?", inner)
        if not m:
            return UNKNOWN
        name = m.group(1)
        rest = inner[len(name) :]
        base = _join(self.var_pieces(name, True, None))
        if not rest:
            return base
        om = re.match(r"(:?[-=+?])", rest)
        if not om or depth > 8:
            return UNKNOWN
        op = om.group(1)
        word = self.expand_text(rest[len(op) :], depth + 1)
        var = self.vars.get(name)
        colon = op.startswith(":")
        out = []
        for mode in (0, 1):
            b = base[mode]
            if b is None and not (var is not None and var.unset):
                out.append(None)
                continue
            is_set = var is not None and not var.unset
            use_base = (b != "") if colon else is_set
            if op.lstrip(":") == "+":
                out.append(word[mode] if use_base else "")
            elif op.lstrip(":") == "?":
                out.append(b if use_base else None)
            else:
                out.append(b if use_base else word[mode])
        return (out[0], out[1])


# ---------------------------------------------------------------------------------------
# syntax problems
# ---------------------------------------------------------------------------------------

_CLOSERS = {
    "if": "fi",
    "case": "esac",
    "for": "done",
    "while": "done",
    "until": "done",
    "select": "done",
    "{": "}",
    "(": ")",
    "$(": ")",
    "[[": "]]",
    "do": "done",
    "then": "fi",
    "elif": "fi",
    "else": "fi",
}


def _unbalanced_quote(text: str) -> int | None:
    """Offset of a quote that is never closed, scanning as bash does (roughly)."""
    state = None
    start = 0
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if state is None:
            if ch == "\\":
                i += 2
                continue
            if ch == "#" and (i == 0 or text[i - 1] in " \t\n;"):
                end = text.find("\n", i)
                i = n if end == -1 else end
                continue
            if ch in "'\"`":
                state, start = ch, i
        elif state == "'":
            if ch == "'":
                state = None
        else:
            if ch == "\\":
                i += 2
                continue
            if ch == state:
                state = None
        i += 1
    return start if state is not None else None


def _problem_message(
    text: str, first_child_type: str | None, to_eof: bool = True, line_rest: str = ""
) -> tuple[str, int]:
    """Message for an ERROR node and the offset (within its text) the problem starts at."""
    placeholder = re.search(r"<[^<>\s][^<>\n]*>", text)
    if placeholder is None and text.lstrip().startswith("<"):
        found = re.match(r"\s*(<[^<>\s][^<>\n]*>)", line_rest)
        if found is not None:
            return (
                f"`{found.group(1)[:60]}` looks like a placeholder that was never filled in: bash reads "
                f"`<` and `>` as redirections and stops with a syntax error",
                found.start(1),
            )
    if placeholder is not None:
        return (
            f"`{placeholder.group(0)[:60]}` looks like a placeholder that was never filled in: bash reads `<` and "
            f"`>` as redirections and stops with a syntax error",
            placeholder.start(),
        )
    quote_at = _unbalanced_quote(text) if to_eof else None
    if quote_at is not None:
        q = text[quote_at]
        kind = {"'": "single-quoted string", '"': "double-quoted string", "`": "backquoted command"}[q]
        return (
            f"unterminated {kind}: bash reads to the end of the file looking for the closing {q} "
            f"(unexpected EOF while looking for matching `{q}')",
            quote_at,
        )
    stripped = text.lstrip()
    lead = len(text) - len(stripped)
    token = stripped.split(None, 1)[0] if stripped else ""
    if first_child_type in _CLOSERS:
        closer = _CLOSERS[first_child_type]
        return (
            f"`{first_child_type}` without a matching `{closer}`: bash stops with "
            f'"syntax error: unexpected end of file"',
            lead,
        )
    if stripped.startswith("$(("):
        return ("invalid arithmetic expression: bash stops with a syntax error in the expression", lead)
    if stripped.startswith("${"):
        return ('bad parameter expansion: bash stops with "bad substitution"', lead)
    if token in ("<", ">", "<<", ">>", "|", "&", ";", ")", "(", "&&", "||", ";;"):
        return (f"bash stops here: syntax error near unexpected token `{token}'", lead)
    if stripped.endswith("\\") and not stripped.endswith("\\\\"):
        return ("line continuation with nothing after it", len(text.rstrip()) - 1)
    return (f"cannot parse the script from `{token[:40]}` on; bash probably stops here with a syntax error", lead)


_QUERY = None
_QUERY_TEXT = """
(comment) @comment
(string) @string (raw_string) @string (ansi_c_string) @string (translated_string) @string
(heredoc_redirect) @heredoc
(command name: (command_name (word) @name))
(ERROR) @error
(MISSING) @missing
"""


def _query():
    global _QUERY
    if _QUERY is None:
        import tree_sitter
        import tree_sitter_bash

        _QUERY = tree_sitter.Query(tree_sitter.Language(tree_sitter_bash.language()), _QUERY_TEXT)
    return _QUERY


def _collect_problems(script: Script, tree, data: bytes) -> list[tuple[int, int]]:
    """ERROR/MISSING nodes and stray reserved words; returns the byte ranges that are not code
    (comments, multi-line strings, here-document bodies)."""
    import tree_sitter

    source = script.source
    cho = source.char_offset
    captures = tree_sitter.QueryCursor(_query()).captures(tree.root_node)
    excluded: list[tuple[int, int]] = []
    for node in captures.get("comment", ()):
        excluded.append((node.start_byte, node.end_byte))
    for node in captures.get("string", ()):
        if b"\n" in data[node.start_byte : node.end_byte]:
            excluded.append((node.start_byte, node.end_byte))
    for node in captures.get("heredoc", ()):
        body_start = None
        end = node.end_byte
        for child in node.children:
            if child.type == "heredoc_body":
                body_start = child.start_byte
            elif child.type == "heredoc_end":
                end = child.end_byte
        if body_start is not None:
            excluded.append((data.rfind(b"\n", 0, body_start) + 1, end))
    for node in captures.get("name", ()):
        word = data[node.start_byte : node.end_byte].decode("utf-8", "replace")
        if word in _RESERVED_STRAYS:
            script.problems.append(
                ParseProblem(
                    Span(source, cho(node.start_byte), cho(node.end_byte)),
                    f"bash stops here: syntax error near unexpected token `{word}'",
                )
            )
    if not tree.root_node.has_error:
        return excluded
    # one problem per outermost ERROR node; MISSING nodes outside them
    errors = sorted(captures.get("error", ()), key=lambda n: (n.start_byte, -n.end_byte))
    outer: list = []
    for node in errors:
        if outer and node.start_byte < outer[-1].end_byte:
            continue
        outer.append(node)
    for node in outer:
        text = data[node.start_byte : node.end_byte].decode("utf-8", "replace")
        first = node.children[0].type if node.children else None
        if first == "ERROR" and node.children[0].children:
            first = node.children[0].children[0].type
        to_eof = not data[node.end_byte :].strip()
        eol = data.find(b"\n", node.start_byte)
        line_rest = data[node.start_byte : len(data) if eol == -1 else eol].decode("utf-8", "replace")
        message, rel = _problem_message(text, first, to_eof, line_rest)
        start = node.start_byte + len(text[:rel].encode("utf-8"))
        script.problems.append(ParseProblem(Span(source, cho(start), cho(node.end_byte)), message))
    starts = [n.start_byte for n in outer]
    for node in captures.get("missing", ()):
        k = bisect.bisect_right(starts, node.start_byte) - 1
        if k >= 0 and node.start_byte < outer[k].end_byte:
            continue
        what = node.type
        opener = {"fi": "if", "done": "do", "esac": "case", "}": "{", ")": "(", "]]": "[[", "`": "`"}.get(what)
        hint = f" to close the `{opener}`" if opener and opener != what else ""
        script.problems.append(
            ParseProblem(
                Span(source, cho(node.start_byte), cho(node.end_byte)),
                f'missing `{what}`{hint}: bash stops with "syntax error: unexpected end of file"',
            )
        )
    return excluded


# ---------------------------------------------------------------------------------------
# continuation traps (on the raw text, as bash reads it)
# ---------------------------------------------------------------------------------------


_BACKSLASH_EOL = re.compile(r"\\[ \t]*\r?$", re.M)


def _merge_ranges(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for s, e in sorted(ranges):
        if merged and s <= merged[-1][1]:
            if e > merged[-1][1]:
                merged[-1] = (merged[-1][0], e)
        else:
            merged.append((s, e))
    return merged


def _blank_line_message(source: SourceFile, line: int, code) -> str:
    """Explain what a blank line after ``\\`` does, depending on what surrounds it."""
    first = line
    while first > 1:
        prev = source.line_text(first - 1).rstrip(" \t")
        if not prev.endswith("\\") or not code(source.line_end(first - 1) - 1):
            break
        first -= 1
    block = [source.line_text(ln).strip().rstrip("\\").strip() for ln in range(first, line + 1)]
    follow = ""
    for ln in range(line + 2, source.line_count + 1):
        candidate = source.line_text(ln).strip()
        if candidate and not candidate.startswith("#"):
            follow = candidate
            break
    base = "blank line after a line ending in `\\`: the command ends at the blank line"
    if block and all(re.match(r"[A-Za-z_][A-Za-z0-9_]*=", part) for part in block if part):
        return (
            base + "; the `VAR=value \\` lines before it only set shell variables, and the command after the "
            "blank line runs without them in its environment"
        )
    if follow.startswith("-"):
        return base + f"; `{follow[:40]}` and the lines after it run as a separate command, not as arguments"
    return base + "; nothing is lost here, but the trailing `\\` is misleading"


def _comment_message(source: SourceFile, line: int) -> str:
    base = "comment line inside a `\\`-continued command: bash ends the command at the comment"
    for ln in range(line + 1, source.line_count + 1):
        follow = source.line_text(ln).strip()
        if not follow or follow.startswith("#"):
            continue
        if follow.startswith("-"):
            return base + f", and `{follow[:40]}` and the lines after it run as a separate command"
        break
    return base + "; nothing after it belonged to the command, but the `\\` before it is misleading"


def _find_traps(script: Script, excluded_bytes: list[tuple[int, int]]) -> None:
    source = script.source
    text = source.text
    cho = source.char_offset
    ranges = _merge_ranges([(cho(s), cho(e)) for s, e in excluded_bytes])
    starts = [r[0] for r in ranges]
    traps = script.continuation_traps

    def code(pos: int) -> bool:
        """True when ``pos`` is shell code (not in a comment, a multi-line string or a here-document)."""
        k = bisect.bisect_right(starts, pos) - 1
        return k < 0 or pos >= ranges[k][1]

    # CRLF: one finding per file, at the first CRLF line
    crlf = text.find("\r\n")
    if crlf != -1:
        traps.append(
            Trap(
                "crlf-line-endings",
                Span(source, crlf, crlf + 1),
                "the file has Windows (CRLF) line endings: bash keeps the carriage return as part of each line, "
                "so a `\\` at the end of a line does not continue the command and every value ends in `\\r`; "
                "convert the file to LF line endings",
            )
        )

    count = source.line_count
    for found in _BACKSLASH_EOL.finditer(text):
        line = source.position(found.start())[0]
        start = source.line_start(line)
        end = source.line_end(line)  # before the \r\n or \n
        content = text[start:end]
        stripped = content.rstrip(" \t")
        if not stripped.endswith("\\"):
            continue  # pragma: no cover - the pattern only finds lines ending in a backslash
        bs_pos = start + len(stripped) - 1
        if (len(stripped) - len(stripped.rstrip("\\"))) % 2 == 0:
            continue  # an escaped backslash, not a continuation
        if not code(bs_pos):
            continue
        if text[end : end + 1] == "\r":
            continue  # `\` + CR: bash escapes the CR and the line does not continue (crlf-line-endings says so)
        if len(stripped) < len(content):
            traps.append(
                Trap(
                    "space-after-backslash",
                    Span(source, bs_pos, end),
                    "whitespace after the `\\` at the end of this line: bash reads `\\ ` as an escaped space, not a "
                    "line continuation, so the command ends here and the next line runs as a separate command",
                )
            )
            continue
        if not text[bs_pos + 1 :].strip():
            traps.append(
                Trap(
                    "trailing-backslash-at-eof",
                    Span(source, bs_pos, bs_pos + 1),
                    "the last command ends with a line continuation `\\` and nothing follows it; bash accepts this, "
                    "but a line added at the end later silently becomes part of the command",
                )
            )
            continue
        if line >= count:
            continue
        nstart = source.line_start(line + 1)
        nend = source.line_end(line + 1)
        nxt = text[nstart:nend]
        if not nxt.strip():
            traps.append(
                Trap(
                    "blank-line-after-continuation", Span(source, nstart, nend), _blank_line_message(source, line, code)
                )
            )
            continue
        lead = len(nxt) - len(nxt.lstrip(" \t"))
        if nxt[lead : lead + 1] == "#" and not code(nstart + lead):
            traps.append(
                Trap(
                    "comment-in-continuation",
                    Span(source, nstart + lead, nend),
                    _comment_message(source, line + 1),
                )
            )


_BETWEEN_LINE = re.compile(r"\s*(?:#.*|(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*\+?=.*|[;\\]\s*)?\Z")


def _env_after_command(script: Script, walker: _Walker) -> None:
    source = script.source
    text = source.text
    traps = script.continuation_traps
    other_trap_lines = {
        source.position(t.span.start)[0]
        for t in traps
        if t.code_name in ("blank-line-after-continuation", "comment-in-continuation", "space-after-backslash")
    }
    # (a) VAR=value written after the launcher's name
    for cmd in script.commands:
        base = cmd.basename
        if not is_launcher_name(base) or cmd.from_eval:
            continue
        prev: Word | None = None
        for w in cmd.args:
            m = re.match(r"([A-Z][A-Z0-9_]*)=", w.raw)
            if (
                m
                and (prev is None or not prev.raw.startswith("-") or "=" in prev.raw)
                and (not _PYTHON_RE.match(base or "") or is_launch_env_var(m.group(1)))
            ):
                traps.append(
                    Trap(
                        "env-after-command",
                        w.span,
                        f"`{w.raw}` comes after the command name, so bash passes it to `{base}` as an argument "
                        f"instead of setting {m.group(1)} in its environment; put it before the command",
                    )
                )
            prev = w
    # (b) VAR=value lines without export right before a launcher that reads VAR
    events = walker.events
    k = 0
    n = len(events)
    while k < n:
        kind, item, ctx, key = events[k]
        if kind != "assign":
            k += 1
            continue
        group = [item]
        j = k + 1
        while j < n and events[j][0] == "assign" and events[j][3] == key:
            group.append(events[j][1])
            j += 1
        k = j
        if ctx.from_eval:
            continue
        # the next command, with only assignment lines, comments and blank lines in between
        m = j
        while m < n and events[m][0] in ("assign", "export") and events[m][2].function == ctx.function:
            m += 1
        if m >= n or events[m][0] != "command":
            continue
        cmd = events[m][1]
        cctx = events[m][2]
        base = cmd.basename
        if (
            cmd.from_eval
            or cctx.function != ctx.function
            or cctx.conditional != ctx.conditional
            or cctx.in_loop != ctx.in_loop
            or not is_launcher_name(base)
        ):
            continue
        last = group[-1]
        first_line = source.position(last.span.end)[0]
        cmd_line = source.position(cmd.span.start)[0]
        between = [source.line_text(ln) for ln in range(first_line + 1, cmd_line)]
        tail = text[last.span.end : source.line_end(first_line)]
        if not all(_BETWEEN_LINE.match(line) for line in between) or not _BETWEEN_LINE.match(tail):
            continue
        if any(source.position(a.span.start)[0] <= ln <= cmd_line for ln in other_trap_lines for a in group[:1]):
            continue
        cmd_text = text[cmd.span.start : cmd.span.end]
        missed = [
            a
            for a in group
            if not a.exported
            and is_launch_env_var(a.name, base)
            and a.name not in cmd.environment
            and not re.search(r"\$\{?" + re.escape(a.name) + r"\b", cmd_text)
        ]
        if not missed:
            continue
        names = ", ".join(f"`{a.name}`" for a in missed)
        verb = "is a shell variable" if len(missed) == 1 else "are shell variables"
        continued = len(group) > 1 and source.position(group[0].span.start)[0] != first_line
        hint = " (the line ends without the `\\` that would continue it into the command)" if continued else ""
        traps.append(
            Trap(
                "env-not-exported",
                Span(source, missed[-1].span.start, missed[-1].span.end) if continued else missed[0].span,
                f"{names} {verb} here, not exported{hint}, so `{base}` on line {cmd_line} does not get "
                f"{'it' if len(missed) == 1 else 'them'} in its environment (unless the caller already exported "
                f"{'it' if len(missed) == 1 else 'them'}); use `export`, or put the assignment in front of the command",
            )
        )


# ---------------------------------------------------------------------------------------
# entry point
# ---------------------------------------------------------------------------------------


def parse_script(source: SourceFile) -> Script:
    """Read a shell script statically. Never raises for bad input; problems are reported."""
    script = Script(source=source)
    data = source.utf8
    tree = _parser().parse(data)
    # bash accepts a `\` at the very end of the file; tree-sitter does not. Parse a copy with
    # that backslash turned into a space (same length, so every offset stays valid).
    if tree.root_node.has_error:
        end = len(data.rstrip())
        if end and data[end - 1 : end] == b"\\" and (end - len(data[:end].rstrip(b"\\"))) % 2 == 1:
            buf = bytearray(data)
            buf[end - 1] = 0x20
            patched = bytes(buf)
            patched_tree = _parser().parse(patched)
            if not patched_tree.root_node.has_error or _count_errors(patched_tree) < _count_errors(tree):
                data, tree = patched, patched_tree
    walker = _Walker(script, data)
    walker._ctx = _Ctx()
    walker._literal = True
    walker.block(tree.root_node.children, _Ctx())
    excluded = _collect_problems(script, tree, data)
    script.problems.sort(key=lambda p: (p.span.start, p.span.end))
    _find_traps(script, excluded)
    _env_after_command(script, walker)
    script.continuation_traps.sort(key=lambda t: (t.span.start, t.code_name))
    return script


def _count_errors(tree) -> int:
    count = 0
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            count += 1
            continue
        if node.has_error:
            stack.extend(node.children)
    return count


def split_word(word: Word, sep: str = "=") -> tuple[str, Word] | None:
    """Split ``--flag=value`` at the first ``sep`` inside the word's known leading text.

    Returns (text before sep, Word for the rest) or None when the separator is not in the
    known part of the word.
    """
    before: list[str] = []
    rest_parts: list[tuple] = []
    found = False
    for v, a in word.parts or ((word.value, word.assumed),):
        if found:
            rest_parts.append((v, a))
            continue
        if v is None:
            return None
        if sep in v:
            k = v.index(sep)
            before.append(v[:k])
            tail = v[k + len(sep) :]
            rest_parts.append((tail, tail))
            found = True
        else:
            before.append(v)
    if not found:
        return None
    left = "".join(before)
    value, assumed = _join(rest_parts)
    span = word.span
    raw = word.raw
    cut = raw.find(sep)
    if word.literal and (span.end - span.start) == len(raw) and cut != -1 and raw.startswith(left):
        vspan = Span(span.source, span.start + cut + len(sep), span.end)
        vraw = raw[cut + len(sep) :]
    elif cut != -1 and raw[:cut] == left and (span.end - span.start) == len(raw):
        vspan = Span(span.source, span.start + cut + len(sep), span.end)
        vraw = raw[cut + len(sep) :]
    else:
        vspan, vraw = span, raw
    return left, Word(vspan, vraw, value, word.literal, assumed, word.may_split and value is None, tuple(rest_parts))

"""A Hydra app's command line and the config it composes, read as Hydra 1.3 reads them.

A Hydra app (``@hydra.main``: verl's ``main_ppo``, its recipes) takes its own flags and a list
of overrides (hydra/_internal/utils.py ``get_args_parser``, hydra-core 1.3.2):

- ``--config-path`` / ``-cp``: the primary config's folder, absolute or relative to the Python
  file that declares ``@hydra.main`` (utils.py:118-161 ``compute_search_path_dir``);
  ``--config-name`` / ``-cn``: the primary config; ``--config-dir`` / ``-cd``: one more folder
  to search, relative to the working directory.
- every other word is an override (hydra/grammar/OverrideLexer.g4): ``key=value`` changes a
  key the config has ("Could not override 'key'" when it has none), ``+key=value`` adds one
  ("Could not append to config. An item is already at 'key'" when it is there), ``++key=value``
  sets either way, ``~key`` (or ``~key=value``) deletes. They are applied in order, so the
  last one of a key wins (config_loader_impl.py:336-398).
- a value is typed by the grammar: ``1024`` is an int (no leading zeros, ``_`` between digits),
  ``1e-6`` / ``0.5`` / ``inf`` a float, ``true``/``false`` in any case a bool, ``null`` None,
  a quoted text a string; ``${...}`` is an interpolation, ``[...]`` and ``{...}`` containers.

The primary config's own ``defaults`` list composes it from other configs; ``_self_`` says
where its own keys go (after the defaults when it is not listed). A default dslint cannot read
(a config of an installed package, a config group) makes every key it might set unknown,
unless the framework's own defaults are known (``base`` in :func:`compose`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from dslint.documents.model import Mapping, Scalar, Sequence
from dslint.source import Span

# Hydra's own flags (hydra/_internal/utils.py get_args_parser): those that take a value.
_VALUE_FLAGS = {"--config-path": "config_path", "-cp": "config_path", "--config-name": "config_name",
                "-cn": "config_name", "--config-dir": "config_dir", "-cd": "config_dir", "--cfg": "cfg", "-c": "cfg",
                "--package": "package", "-p": "package", "--experimental-rerun": "rerun"}
_BARE_FLAGS = ("--help", "-h", "--hydra-help", "--version", "--resolve", "--run", "-r", "--multirun", "-m",
               "--info", "-i", "--shell-completion", "-sc")

_INT = re.compile(r"^[+-]?(?:0|[1-9](?:_?[0-9])*)$")
_FLOAT = re.compile(r"^[+-]?(?:(?:(?:0|[1-9](?:_?[0-9])*)?\.[0-9](?:_?[0-9])*|(?:0|[1-9](?:_?[0-9])*)\.)"
                    r"(?:[eE][+-]?[0-9](?:_?[0-9])*)?|(?:0|[1-9](?:_?[0-9])*)[eE][+-]?[0-9](?:_?[0-9])*"
                    r"|[Ii][Nn][Ff]|[Nn][Aa][Nn])$")
_KEY = re.compile(r"^(~|\+\+|\+)?([A-Za-z_$0-9][\w$\-]*(?:[./@][\w$\-]+)*)$")
_REFERENCE = re.compile(r"^\$\{([A-Za-z_][\w\-]*(?:\.[A-Za-z_0-9][\w\-]*)*)\}$")


class Unknown:
    """A value dslint cannot know statically, with the reason."""

    def __init__(self, why: str):
        self.why = why

    def __repr__(self) -> str:
        return f"Unknown({self.why!r})"


def parse_value(text: str) -> Any:
    """An override's value as Hydra's grammar types it (an ``Unknown`` for what it computes)."""
    text = text.strip(" \t")
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        inner = text[1:-1]
        return Unknown(f"the interpolation {inner}") if "${" in inner else inner
    if _INT.match(text):
        return int(text.replace("_", ""))
    if _FLOAT.match(text):
        return float(text.replace("_", ""))
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered == "null":
        return None
    if "${" in text:
        return Unknown(f"the interpolation {text}")
    if text[:1] in "[{" or "(" in text:
        return Unknown(f"the container or function {text}")
    if "," in text:
        return Unknown(f"the sweep {text} (Hydra runs it only with --multirun)")
    return text


@dataclass(eq=False)
class Override:
    """One ``[+|++|~]key[=value]`` word of a Hydra command line."""

    op: str  # "set" | "add" (+) | "force" (++) | "delete" (~)
    key: str
    value: Any  # parsed (parse_value); None for a bare delete; Unknown when the shell hides it
    text: str | None  # the value as written (after the shell), None when unknown or absent
    span: Span  # the whole word
    key_span: Span
    value_span: Span | None
    assumed: str | None = None  # the shell text whose default the value rests on

    @property
    def group(self) -> bool:
        """A config-group override (``db=mysql``, ``actor@pkg=x``, ``a/b=c``): it picks a config file."""
        return "/" in self.key or "@" in self.key

    def written(self) -> str:
        prefix = {"set": "", "add": "+", "force": "++", "delete": "~"}[self.op]
        return f"{prefix}{self.key}" + (f"={self.text}" if self.text is not None else "")


@dataclass
class HydraCommand:
    """What a Hydra app's command line says: its flags and its overrides, in order."""

    config_path: Any = None  # Word
    config_name: Any = None  # Word
    config_dirs: list = field(default_factory=list)  # Words
    overrides: list[Override] = field(default_factory=list)
    multirun: bool = False
    opaque: list = field(default_factory=list)  # words dslint cannot read (``$EXTRA``): may be overrides

    @property
    def complete(self) -> bool:
        return not self.opaque

    def last(self, key: str) -> Override | None:
        """The override that decides ``key`` (the last one that names it or a section above it)."""
        for override in reversed(self.overrides):
            if override.group:
                continue
            if override.key == key or key.startswith(override.key + "."):
                return override
        return None


def read_command(words: list) -> HydraCommand:
    """The Hydra flags and overrides among the words after the program (shell ``Word`` objects)."""
    from dslint.documents.shell import split_word

    out = HydraCommand()
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        prefix = word.prefix
        if prefix.startswith("-") and not prefix.startswith(("~", "+")):
            name, _, inline = prefix.partition("=")
            dest = _VALUE_FLAGS.get(name)
            if dest is not None:
                parts = split_word(word) if "=" in prefix else None
                value = parts[1] if parts is not None else None
                if value is None and not inline and index < len(words):
                    value = words[index]
                    index += 1
                if dest == "config_path":
                    out.config_path = value
                elif dest == "config_name":
                    out.config_name = value
                elif dest == "config_dir" and value is not None:
                    out.config_dirs.append(value)
                continue
            if name in ("--multirun", "-m"):
                out.multirun = True
            if name in _BARE_FLAGS or word.value is not None:
                continue
            out.opaque.append(word)
            continue
        override = _override(word)
        if override is None:
            if word.value is None:
                out.opaque.append(word)  # `$EXTRA_ARGS`, `"$@"`: may hold overrides
            continue
        out.overrides.append(override)
    return out


_TILDE = re.compile(r"^~[A-Za-z_][\w.\-]*(?:=[\w.\-/:]*)?$")


def _override(word) -> Override | None:
    from dslint.documents.shell import split_word

    if word.value is None and _TILDE.match(word.raw):
        # `~key` / `~key=value`: bash's tilde expansion looks up a user named `key`; there is none
        # with Hydra's dotted key names, and bash leaves the word as written.
        from dslint.documents.shell import Word

        word = Word(word.span, word.raw, word.raw)
    prefix = word.prefix
    head = prefix.split("=", 1)[0]
    match = _KEY.match(head)
    if match is None or (word.value is None and "=" not in prefix):
        return None
    op = {"~": "delete", "+": "add", "++": "force", None: "set"}[match.group(1)]
    key = match.group(2)
    span = word.span
    key_start = span.start + (len(match.group(1) or "") if word.raw.startswith(head) else 0)
    key_span = Span(span.source, key_start, key_start + len(key)) if word.raw.startswith(head) else span
    if "=" not in prefix:
        return Override(op, key, None, None, span, key_span, None)
    parts = split_word(word)
    if parts is None:
        return None
    value_word = parts[1]
    if value_word.value is not None:
        return Override(op, key, parse_value(value_word.value), value_word.value, span, key_span, value_word.span)
    if getattr(value_word, "assumed", None) is not None:
        return Override(op, key, parse_value(value_word.assumed), value_word.assumed, span, key_span, value_word.span,
                        assumed=value_word.raw)
    return Override(op, key, Unknown(f"{value_word.raw} is only known at run time"), None, span, key_span, value_word.span)


# --------------------------------------------------------------------------------------------
# Composition
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    """A composed config value and where it came from."""

    key: str
    value: Any  # an Unknown when dslint cannot know it
    origin: str  # "data.train_batch_size=1024 at run.sh:5", "train_batch_size: 1024 in cfg.yaml:8", "verl's default ..."
    span: Span | None = None
    source: str = "default"  # override | config | default
    assumed: str | None = None

    @property
    def known(self) -> bool:
        return not isinstance(self.value, Unknown)

    @property
    def written(self) -> bool:
        return self.source != "default"


@dataclass
class Base:
    """A config dslint knows without reading it: a framework's shipped defaults."""

    name: str  # who ships it, for origins: "verl"
    values: dict[str, Any]  # dotted key -> default value
    cite: str = ""  # where the defaults are read from: "verl/trainer/config/ppo_trainer.yaml"


@dataclass
class Layer:
    """One config file's values in the composition, flattened to dotted keys."""

    path: str
    values: dict[str, tuple[Any, Span | None, Span | None]]  # dotted -> (value, value span, key span)


@dataclass
class Composition:
    """The config a Hydra app runs with: overrides over the composed defaults list."""

    command: HydraCommand
    layers: list[Layer] = field(default_factory=list)  # lowest precedence first
    base: Base | None = None
    unread: list[str] = field(default_factory=list)  # defaults dslint could not read: any key may come from them
    where: Callable[[Span | None], str] | None = None

    @property
    def complete(self) -> bool:
        return self.command.complete and not self.unread

    def get(self, key: str, _seen: frozenset = frozenset()) -> Setting:
        """``key`` (dotted) as the app sees it, with its origin."""
        override = self.command.last(key)
        if override is not None:
            return self._from_override(key, override, _seen)
        for layer in reversed(self.layers):
            if key in layer.values:
                value, span, key_span = layer.values[key]
                value = self._resolve(value, key, _seen)
                where = self._where(key_span or span)
                return Setting(key, value, f"{key.rsplit('.', 1)[-1]}: {_shown(value)} in {where}", span, "config")
        if self.unread:
            return Setting(key, Unknown(f"{key} may be set by {', '.join(self.unread)}, which dslint cannot read"), "", None)
        if self.base is not None and key in self.base.values:
            value = self.base.values[key]
            if isinstance(value, str) and _REFERENCE.match(value):
                value = self._resolve(value, key, _seen)
            cite = f" ({self.base.cite})" if self.base.cite else ""
            return Setting(key, value, f"{key} = {_shown(value)}, {self.base.name}'s default{cite}", None)
        return Setting(key, Unknown(f"{key} is not set"), "", None)

    def _from_override(self, key: str, override: Override, seen: frozenset = frozenset()) -> Setting:
        where = self._where(override.span)
        if override.op == "delete":
            return Setting(key, Unknown(f"{override.written()} deletes it"), f"{override.written()} at {where}", override.span, "override")
        value = override.value
        if override.key != key:  # `actor=...` replaces a whole section: the key inside is its part
            if isinstance(value, Unknown):
                return Setting(key, value, f"{override.written()} at {where}", override.value_span, "override")
            return Setting(key, Unknown(f"{override.written()} replaces the section"), f"{override.written()} at {where}", override.value_span, "override")
        if isinstance(value, str) and _REFERENCE.match(value):
            value = self._resolve(value, key, seen)
        origin = f"{override.written()} at {where}"
        if override.assumed:
            origin += f" (assuming {override.assumed} keeps its default)"
        return Setting(key, value, origin, override.value_span or override.span, "override", override.assumed)

    def _resolve(self, value: Any, key: str, seen: frozenset) -> Any:
        """An absolute ``${a.b}`` reference followed to the value it names; other interpolations, and
        references that go round in a circle or nest too deep, are unknown."""
        if isinstance(value, Unknown) or not isinstance(value, str) or "${" not in value:
            return value
        match = _REFERENCE.match(value)
        if match is None or match.group(1) in seen or key in seen or len(seen) > 8:
            return Unknown(f"the interpolation {value}")
        return self.get(match.group(1), seen | {key}).value

    def _where(self, span: Span | None) -> str:
        if self.where is not None:
            return self.where(span)
        if span is None:
            return "the command line"
        return f"{span.path}:{span.source.position(span.start)[0]}"


def _shown(value: Any) -> str:
    if isinstance(value, Unknown):
        return "?"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def program_words(launch) -> list:
    """The words after a launch's program (a Hydra app's flags and overrides), as bash passes them."""
    program = getattr(launch, "program", None)
    command = getattr(launch, "command", None)
    argv = list(getattr(command, "argv", []) or [])
    if program is None or not argv:
        return []
    for index, word in enumerate(argv):
        if word is program:
            return argv[index + 1:]
    end = program.span.end  # `-mpkg.mod`: the program is a piece of the word
    for index, word in enumerate(argv):
        if word.span.source is program.span.source and word.span.end == end:
            return argv[index + 1:]
    return []


def compose(plan, base_of: Callable[[str], Base | None], default_config: str | None = None, default_path: str | None = None,
            where: Callable[[Span | None], str] | None = None) -> Composition:
    """The config a Hydra launch runs with.

    ``base_of(name)``: a framework's shipped config by name (verl's ``ppo_trainer``), which dslint
    knows without a file; ``default_config`` / ``default_path``: what ``@hydra.main`` names when the
    command line does not (a relative ``--config-path`` equal to ``default_path`` is the same folder).
    """
    command = read_command(program_words(plan.command))
    out = Composition(command, where=where)
    primary = plan.training_config.document if plan.training_config is not None else None
    if primary is not None and primary.mapping is not None:
        _compose_primary(out, plan, primary, base_of)
    else:
        _compose_named(out, command, base_of, default_config, default_path)
    return out


def _compose_primary(out: Composition, plan, primary, base_of: Callable[[str], Base | None]) -> None:
    """The layers of a primary config the linker found: its defaults list in order, itself included."""
    local = {ref.raw: ref.document for ref in plan.references
             if ref.role == "hydra-default" and ref.document is not None and ref.document.mapping is not None}
    entries = defaults_list(primary.mapping)
    if not any(kind == "self" for kind, _ in entries):
        entries.append(("self", None))
    for kind, item in entries:
        if kind == "self":
            out.layers.append(Layer(primary.path, flatten(primary.mapping)))
        elif kind == "config" and item in local:
            out.layers.append(Layer(local[item].path, flatten(local[item].mapping)))
        elif kind == "config" and base_of(item) is not None and out.base is None:
            out.base = base_of(item)
        else:
            out.unread.append(f"the default `{item}` of {primary.path}")


def _compose_named(out: Composition, command: HydraCommand, base_of: Callable[[str], Base | None], default_config: str | None,
                   default_path: str | None) -> None:
    """No primary config file was found: a framework's shipped config by the name the command line
    (or ``@hydra.main``) gives, else what could not be read."""
    name = _word_text(command.config_name)
    if name is None and command.config_name is not None:
        out.unread.append(f"the config {command.config_name.raw}, only known at run time")
        return
    name = name or default_config
    if name is None:
        out.unread.append("the primary config, which the command line does not name")
        return
    stem = name[:-5] if name.endswith(".yaml") else name
    # Without --config-path/--config-dir the name is looked up where @hydra.main says: the package's own configs.
    path = _word_text(command.config_path)
    own_folder = command.config_path is None or (path is not None and default_path is not None
                                                 and path.strip("/").removeprefix("./") == default_path)
    base = base_of(stem) if own_folder and not command.config_dirs else None
    if base is not None:
        out.base = base
    else:
        out.unread.append(f"the config {name}, which dslint could not find")


def _word_text(word) -> str | None:
    if word is None:
        return None
    if word.value is not None:
        return word.value
    return getattr(word, "assumed", None)


def flatten(mapping: Mapping, prefix: str = "") -> dict[str, tuple[Any, Span | None, Span | None]]:
    """A config mapping as dotted keys (``data.train_batch_size``), the ``defaults`` and ``hydra`` keys left out."""
    out: dict[str, tuple[Any, Span | None, Span | None]] = {}
    for entry in mapping.entries:
        if not prefix and entry.key in ("defaults", "hydra"):
            continue
        key = f"{prefix}{entry.key}"
        value = entry.value
        if isinstance(value, Mapping):
            out[key] = (Unknown("a section"), value.span, entry.key_span)
            out.update(flatten(value, key + "."))
        elif isinstance(value, Scalar):
            out[key] = (value.value, value.span, entry.key_span)
        else:
            out[key] = (value.to_python(), value.span, entry.key_span)
    return out


def defaults_list(mapping: Mapping | None) -> list[tuple[str, Any]]:
    """The primary config's defaults: ("self", None), ("config", name) or ("group", text) in order."""
    if mapping is None:
        return []
    node = mapping.get("defaults")
    if not isinstance(node, Sequence):
        return []
    out: list[tuple[str, Any]] = []
    for item in node.items:
        if isinstance(item, Scalar) and isinstance(item.value, str):
            name = item.value.strip()
            if name == "_self_":
                out.append(("self", None))
            elif name.startswith("optional "):
                out.append(("group", name))
            else:
                out.append(("config", name))
        elif isinstance(item, Mapping):
            for entry in item.entries:
                out.append(("group", f"{entry.key}: {entry.value.to_python()}"))
        else:
            out.append(("group", "?"))
    return out


__all__ = ["Base", "Composition", "HydraCommand", "Layer", "Override", "Setting", "Unknown", "defaults_list", "flatten",
           "parse_value", "read_command"]

"""Files → parsed documents with positions. Nothing here knows about rules."""

from __future__ import annotations

from dslint.files.suffixes import JSON_SUFFIXES
from dslint.documents.classify import (
    classify_json,
    classify_script,
    classify_unparsable_json,
    classify_yaml,
    looks_like_script,
    suffix_kind,
    training_flavor,
)
from dslint.documents.model import ACCELERATE, DEEPSPEED, SCRIPT, TRAINING_JSON, TRAINING_YAML, Document, ParseProblem
from dslint.documents.sniff import named_like_deepspeed
from dslint.source import DecodeError, SourceFile, Span, describe_encoding

UNREADABLE = "unreadable"  # the kind of a file nothing could read (reported by DS003)


class Skipped(Exception):
    """A file dslint does not lint, with the reason."""


def read_candidate(candidate, data: bytes | None = None) -> Document:
    """The document of one discovered file (a ``dslint.files.discovery.Candidate``), read from disk, or
    from ``data`` in its place (the fixer's passes); raises Skipped.

    What cannot be read (a missing or unreadable file that was named, one past the size limit,
    nesting too deep for the parsers) is a document of kind ``unreadable`` with the reason; a
    dataset JSON is skipped after its head is read (dslint/documents/sniff.py). A parser's own
    failure (a bug) propagates: the caller reports it and goes on with the other files.
    """
    display, explicit = candidate.display, candidate.explicit
    if data is None:
        data = _read_bytes(candidate)
        if isinstance(data, Document):
            return data
    try:
        return read_document(display, data, explicit=explicit)
    except RecursionError:
        return unreadable(display, "nesting too deep to read")


def _read_bytes(candidate) -> bytes | Document:
    import errno
    import os
    import stat

    from dslint.documents.sniff import HEAD_BYTES, data_json
    from dslint.source import MAX_FILE_BYTES

    path = candidate.path
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            # A FIFO, socket or device (or a link to one): reading it could block forever.
            if candidate.explicit:  # named to be checked: say that it was not, and why
                return unreadable(candidate.display, "not a regular file (a FIFO, socket or device): not read")
            raise Skipped("not a regular file")
        size = info.st_size
        with open(path, "rb") as handle:
            if size > HEAD_BYTES and candidate.display.lower().endswith(JSON_SUFFIXES):
                # a dataset or tokenizer: its head says so, without reading megabytes
                reason = data_json(handle.read(HEAD_BYTES), size)
                if reason is not None:
                    raise Skipped(reason)
                handle.seek(0)
            if size > MAX_FILE_BYTES:
                return unreadable(candidate.display, f"file is {size / 1e6:.1f} MB; dslint reads files up to {MAX_FILE_BYTES // 1_000_000} MB")
            return handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if getattr(exc, "errno", None) == errno.ELOOP:
            reason = "symbolic link loop"
        if not candidate.explicit and not os.path.exists(path):
            raise Skipped(f"cannot read: {reason}") from None
        return unreadable(candidate.display, f"cannot read file: {reason}")


def unreadable(display: str, message: str) -> Document:
    """A file nothing could read, with the reason (reported by unreadable-file, DS003)."""
    source = SourceFile(path=display, text="")
    return Document(source=source, kind=UNREADABLE, root=None, problems=[ParseProblem(Span(source, 0, 0), message)])


def read_document(path: str, data: bytes, expect: str | None = None, explicit: bool = False) -> Document:
    """Parse ``data`` (the bytes of ``path``) into a Document, or raise Skipped.

    ``expect`` is the kind a launch says the file is (a `--deepspeed` argument names a
    DeepSpeed config whatever its keys look like); it wins over classification by content.
    A file that must be a config (named on the command line, named by a launch, or named like
    a DeepSpeed config) and that no reader can read (empty, binary, UTF-16/32, not UTF-8) is an
    error that names the readers, never a silent skip.
    """
    kind = suffix_kind(path)
    if kind is None and expect is not None:
        kind = "json" if expect == DEEPSPEED else "yaml"
    required = explicit or expect is not None or (kind == "json" and named_like_deepspeed(path))
    try:
        source = SourceFile.from_bytes(path, data)
    except DecodeError as exc:
        return _unreadable_config(path, data, kind, expect, required, exc)
    if kind in ("json", "yaml") and not source.text.strip():
        if required:
            return _unreadable_config(path, data, kind, expect, required, None, source)
        raise Skipped("empty file")
    if kind == "json":
        return _expected(_read_json, source, expect)
    if kind == "yaml":
        return _expected(_read_yaml, source, expect)
    if kind == "script" or looks_like_script(source.text):
        return _read_script(source)
    raise Skipped("not a JSON, YAML or shell file")


def read_written(source: SourceFile, kind: str, expect: str | None) -> Document:
    """A config a script writes (dslint.documents.written), read as ``kind`` ("json"/"yaml"); raises Skipped."""
    if not source.text.strip():
        raise Skipped("empty file")
    return _expected(_read_json if kind == "json" else _read_yaml, source, expect)


def _expected(read, source: SourceFile, expect: str | None) -> Document:
    try:
        document = read(source)
    except Skipped:
        if expect is None:
            raise
        document = None
    if expect is None or (document is not None and document.kind == expect):
        return document
    if expect == DEEPSPEED and source.path.lower().endswith(JSON_SUFFIXES):
        from dslint.documents.json_doc import parse_json

        root, problems, strict = parse_json(source)
        return Document(source=source, kind=DEEPSPEED, root=root, problems=problems, strict_json=strict)
    if expect in (TRAINING_YAML, ACCELERATE):
        if document is not None and document.kind in (TRAINING_YAML, TRAINING_JSON, ACCELERATE):
            return document
        if source.path.lower().endswith(JSON_SUFFIXES):
            from dslint.documents.json_doc import parse_json

            root, problems, _ = parse_json(source)
            return Document(source=source, kind=TRAINING_JSON, root=root, problems=problems)
        from dslint.documents.yaml_doc import parse_yaml

        root, problems = parse_yaml(source)
        flavor = training_flavor(set(root.keys())) if expect == TRAINING_YAML and hasattr(root, "keys") else "accelerate"
        return Document(source=source, kind=expect, root=root, problems=problems, flavor=flavor)
    if document is None:
        raise Skipped("not the kind of file the launch says it is")
    return document


def _read_json(source: SourceFile) -> Document:
    from dslint.documents.json_doc import parse_json

    root, problems, strict = parse_json(source)
    if root is None:
        kind = classify_unparsable_json(source.text, source.path)
        if kind is None:
            raise Skipped("does not parse and does not look like a DeepSpeed config")
        return Document(source=source, kind=kind, root=None, problems=problems, strict_json=False)
    kind = classify_json(root)
    if kind is None:
        raise Skipped("JSON, but neither a DeepSpeed config nor training arguments")
    flavor = training_flavor(set(root.keys())) if kind == TRAINING_JSON else None
    return Document(source=source, kind=kind, root=root, problems=problems, strict_json=strict, flavor=flavor)


def _read_yaml(source: SourceFile) -> Document:
    from dslint.documents.yaml_doc import parse_yaml

    root, problems = parse_yaml(source)
    kind, flavor = classify_yaml(root)
    if kind is None:
        if problems and root is None and _mentions_training_keys(source.text):
            from dslint.documents.model import TRAINING_YAML

            return Document(source=source, kind=TRAINING_YAML, root=None, problems=problems)
        if problems and root is None and _mentions_accelerate_keys(source.text):  # a syntax error, or past the limits
            return Document(source=source, kind=ACCELERATE, root=None, problems=problems)
        raise Skipped("YAML, but neither a training config nor an accelerate config")
    if flavor == "hydra":
        from dslint.documents.omegaconf import reread

        problems = problems + reread(root)
    return Document(source=source, kind=kind, root=root, problems=problems, flavor=flavor)


# Launch scripts are a few hundred lines; past these limits a script gets a diagnostic (DS003)
# instead of a parse and a link whose cost grows with its size times its launch commands.
MAX_SCRIPT_BYTES = 256 * 1024
MAX_SCRIPT_LINES = 5_000
MAX_SCRIPT_COMMANDS = 1_000  # statements, after parsing (one line can hold thousands)


def _read_script(source: SourceFile) -> Document:
    if classify_script(source.path, source.text) is None:
        raise Skipped("not a shell script")
    from dslint.documents.shell import parse_script

    size, lines = len(source.utf8), source.text.count("\n") + 1
    if size > MAX_SCRIPT_BYTES:
        return _too_long(source, f"script is {size / 1024:,.0f} KB; dslint reads launch scripts up to {MAX_SCRIPT_BYTES // 1024} KB")
    if lines > MAX_SCRIPT_LINES:
        return _too_long(source, f"script has {lines:,} lines; dslint reads launch scripts up to {MAX_SCRIPT_LINES:,} lines")
    script = parse_script(source)
    if len(script.commands) > MAX_SCRIPT_COMMANDS:
        return _too_long(source, f"script has {len(script.commands):,} commands; dslint reads launch scripts of up to {MAX_SCRIPT_COMMANDS:,}")
    document = Document(source=source, kind=SCRIPT, root=None, problems=list(script.problems), script=script)
    if script.redirects:
        from dslint.documents.written import written_files

        document.written = written_files(script)
    return document


def _too_long(source: SourceFile, message: str) -> Document:
    """A script past the limits: reported by unreadable-file (DS003), not linted."""
    return Document(source=source, kind="unreadable", root=None, problems=[ParseProblem(Span(source, 0, min(1, len(source.text))), message)])


def _mentions_training_keys(text: str) -> bool:
    from dslint.documents.classify import TRAINING_KEYS

    return len(_top_keys(text) & TRAINING_KEYS) >= 2


def _mentions_accelerate_keys(text: str) -> bool:
    from dslint.documents.classify import ACCELERATE_KEYS

    return ACCELERATE_KEYS <= _top_keys(text)


def _top_keys(text: str) -> set[str]:
    """The keys that start a line of a YAML text that cannot be parsed."""
    import re

    return set(re.findall(r"^([A-Za-z_][\w.]*)\s*:", text, re.MULTILINE))


# What each kind of file is read with, for the message of a file none of them can read.
_JSON_READERS = "DeepSpeed's hjson and HF's json.load"
_YAML_READERS = "HF, LLaMA-Factory, ms-swift and accelerate"


def _unreadable_config(path: str, data: bytes, kind: str | None, expect: str | None, required: bool, exc: DecodeError | None,
                       source: SourceFile | None = None) -> Document:
    """A config its readers cannot read (empty, binary, UTF-16/32, not UTF-8), or Skipped when it need not be a config.

    A DS001 on the kind the file has to be (a launch names it, its name or text says DeepSpeed
    config or training YAML); a DS003 when it was only named on the command line.
    """
    text = data.decode("utf-8", "replace") if exc is not None else ""
    document_kind = _unreadable_kind(path, data, text, kind, expect, required, exc)
    if exc is None:  # empty
        if kind == "json":
            note = "HF's json.load raises 'Expecting value'; DeepSpeed's hjson reads {} and finds no batch size"
        else:
            note = "yaml.safe_load gives None, which HfArgumentParser and accelerate's config loader fail on"
        return Document(source=source, kind=document_kind, root=None, problems=[ParseProblem(Span(source, 0, 0), "empty file", note)])
    source, span, message, note = _undecodable(path, data, text, kind, exc)
    return Document(source=source, kind=document_kind, root=None, problems=[ParseProblem(span, message, note)], strict_json=False)


def _unreadable_kind(path: str, data: bytes, text: str, kind: str | None, expect: str | None, required: bool,
                     exc: DecodeError | None) -> str:
    """The kind of document an unreadable config has to be; Skipped when it need not be a config."""
    if expect is not None:
        return expect if kind == "yaml" or expect == DEEPSPEED else TRAINING_JSON
    if kind == "json" and (named_like_deepspeed(path) or classify_unparsable_json(text, path)):
        return DEEPSPEED
    if kind == "yaml" and _mentions_training_keys(text):
        return TRAINING_YAML
    if required and kind in ("json", "yaml", "script"):
        return UNREADABLE
    if exc is None:
        raise Skipped("empty file")
    raise Skipped(f"cannot be read as text: {describe_encoding(data) or exc.message}")


def _undecodable(path: str, data: bytes, text: str, kind: str | None, exc: DecodeError):
    """(source, span, message, note) of a file that is not UTF-8 text."""
    encoding = describe_encoding(data)
    if kind == "script":  # bash runs bytes; dslint reads launch scripts as UTF-8 text
        source = SourceFile(path=path, text="")
        why = encoding or exc.message
        return source, Span(source, 0, 0), f"not read: {why}", "dslint reads launch scripts as UTF-8 text; this one was not checked"
    readers = _JSON_READERS if kind == "json" else _YAML_READERS
    if encoding is None:  # text that is not UTF-8: show the line with the bad byte
        source = SourceFile(path=path, text=text)
        offset = source.offset(exc.line, exc.column)
        span = Span(source, offset, min(offset + 1, len(text)))
        return source, span, exc.message, f"{readers} {'read YAML as UTF-8 and ' if kind == 'yaml' else ''}raise UnicodeDecodeError"
    source = SourceFile(path=path, text="")
    if encoding.startswith("binary"):
        note = f"not text {readers} can read"
    elif "without a BOM" in encoding:
        note = f"as UTF-8 it is letters between NULs, which {readers} reject"
    else:
        note = f"{readers} read {'YAML as ' if kind == 'yaml' else ''}UTF-8 and raise UnicodeDecodeError"
    return source, Span(source, 0, 0), encoding, note

"""Generate ``schemas/transformers*.schema.json`` from an installed ``transformers``.

Usage::

    python -m dslint.schemagen.transformers                    # current: schemas/transformers.schema.json
    python -m dslint.schemagen.transformers --check            # exit 1 if the file is stale
    python -m dslint.schemagen.transformers --path DIR         # an older copy: schemas/transformers-4.45.schema.json

The sets are what ``HfArgumentParser`` accepts for ``TrainingArguments`` and
``Seq2SeqTrainingArguments``: every option string, ``--no_*`` complement, type, choice, default,
help text and deprecation, read from the parser transformers builds and the dataclass fields.
Older generations: ``pip install --no-deps --target DIR transformers==4.45.2
huggingface_hub==0.25.2 tokenizers==0.20.3`` (see ``dslint.schemagen.generations``).
"""

from __future__ import annotations

import sys

from dslint.schemagen import _hfargs as common

PACKAGE = "transformers"
CURRENT = "5."
#: Optional heavy imports that transformers' import chain may reach.
STUBS = ("PIL", "torchvision", "av", "cv2", "sklearn", "scipy", "sentencepiece", "tiktoken")


def installed_version() -> str:
    import transformers

    return transformers.__version__


def build_schema() -> dict:
    common.install_stubs(STUBS)
    import transformers
    from transformers import HfArgumentParser, Seq2SeqTrainingArguments, TrainingArguments

    root = common.Path(transformers.__file__).resolve().parent.parent
    sets, members = {}, {}
    for name, klass in (("TrainingArguments", TrainingArguments), ("Seq2SeqTrainingArguments", Seq2SeqTrainingArguments)):
        parser = HfArgumentParser([klass])
        sets[name] = common.parser_schema(parser, [klass], root=root)
        sets[name]["x-dslint-parser"] = "HfArgumentParser"
        members[name] = [klass.__name__]
    return common.document(
        package=PACKAGE, version=transformers.__version__, generator="dslint.schemagen.transformers",
        title=f"transformers {transformers.__version__} TrainingArguments", sets=sets, members=members,
        primary="TrainingArguments",
        extra={"x-dslint-stubbed": common.stubbed()},
    )


def main(argv: list[str] | None = None) -> int:
    return common.main(argv, package=PACKAGE, module="dslint.schemagen.transformers", build=build_schema,
                       installed_version=installed_version, doc=__doc__, current_major_minor=CURRENT)


if __name__ == "__main__":
    sys.exit(main())

"""Generate ``schemas/accelerate*.schema.json`` (the ``accelerate launch --config_file`` file).

Usage::

    python -m dslint.schemagen.accelerate              # current: schemas/accelerate.schema.json
    python -m dslint.schemagen.accelerate --check      # exit 1 if the file is stale
    python -m dslint.schemagen.accelerate --path DIR   # an older copy: schemas/accelerate-0.34.schema.json

accelerate reads the file with ``yaml.safe_load`` (``.json``: ``json.load``), converts a few
legacy keys (``BaseConfig.process_config``) and raises ``ValueError: The config file at ... had
unknown keys`` for any key that is not a field of ``ClusterConfig`` (``SageMakerConfig`` when
``compute_environment: AMAZON_SAGEMAKER``). Sets: ``cluster`` and ``sagemaker``; fields from
the dataclasses, legacy keys from ``process_config``'s source.
"""

from __future__ import annotations

import inspect
import re
import sys

from dslint.schemagen import _hfargs as common

PACKAGE = "accelerate"
CURRENT = "1."


def installed_version() -> str:
    import accelerate

    return accelerate.__version__


def build_schema() -> dict:
    import accelerate
    from accelerate.commands.config import config_args

    root = common.Path(accelerate.__file__).resolve().parent.parent
    sets, members = {}, {}
    for name, klass in (("cluster", config_args.ClusterConfig), ("sagemaker", config_args.SageMakerConfig)):
        sets[name] = common.dataclass_schema(klass, root=root)
        sets[name]["x-dslint-parser"] = f"{klass.__name__}.from_yaml_file"
        members[name] = [klass.__name__]
    source = inspect.getsource(config_args.BaseConfig.process_config)
    legacy = sorted(set(re.findall(r'config_dict\.pop\(\s*"(\w+)"', source))
                    | set(re.findall(r'del config_dict\["(\w+)"\]', source)))
    load_source = inspect.getsource(config_args.load_config_from_file)
    reader = {
        "unknown-keys": "error" if "unknown keys" in inspect.getsource(config_args.BaseConfig.from_yaml_file) else "ignored",
        "json-suffix": ".json" if '".json"' in load_source else None,
        "loader": "pyyaml" if "yaml.safe_load" in load_source else "unknown",
        "legacy-keys": legacy,
        "required": sorted(set(re.findall(r'if "(\w+)" not in config_dict:\s*\n\s*raise', source))),
    }
    return common.document(
        package=PACKAGE, version=accelerate.__version__, generator="dslint.schemagen.accelerate",
        title=f"accelerate {accelerate.__version__} config file", sets=sets, members=members, primary="cluster",
        extra={"x-dslint-reader": reader},
    )


def main(argv: list[str] | None = None) -> int:
    return common.main(argv, package=PACKAGE, module="dslint.schemagen.accelerate", build=build_schema,
                       installed_version=installed_version, doc=__doc__, current_major_minor=CURRENT)


if __name__ == "__main__":
    sys.exit(main())

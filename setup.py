"""Packaging glue that pyproject.toml cannot express; everything else is in pyproject.toml.

The JSON Schemas live in the top-level ``schemas/`` folder, where editors and users point at
them (``schemas/deepspeed.schema.json``), yet an installed dslint must find them as well. The
wheel ships that folder as package data of an extra package, ``dslint.schemas``, mapped onto
it by ``[tool.setuptools.package-dir]`` (``dslint/schemas.py`` looks in both places). A
``[tool.setuptools.packages.find]`` table only finds directories under ``dslint/``, so the
package list is computed here: every package under ``dslint/`` (as that table found them,
namespace packages included) plus ``dslint.schemas``.
"""

from setuptools import find_namespace_packages, setup

setup(packages=[*find_namespace_packages(include=["dslint", "dslint.*"], exclude=["*.__pycache__"]), "dslint.schemas"])

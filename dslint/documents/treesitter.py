"""tree-sitter grammars (bash, JSON), each loaded on first use: importing one costs every run that
reads no file of its kind."""

from __future__ import annotations

import importlib

_LANGUAGES: dict = {}
_PARSERS: dict = {}


def language(grammar: str):
    """The tree-sitter Language of ``grammar``: "bash" or "json" (the package tree_sitter_<grammar>)."""
    found = _LANGUAGES.get(grammar)
    if found is None:
        import tree_sitter

        found = _LANGUAGES[grammar] = tree_sitter.Language(_binding(f"tree_sitter_{grammar}").language())
    return found


def _binding(package: str):
    """The compiled grammar of ``package`` (its ``_binding`` extension module).

    The package's ``__init__`` imports importlib.resources (and with it tempfile, random and
    more: 2 ms of a one-file run) for highlight queries dslint never reads, so the extension
    module is loaded straight from the package's folder; anything else about the package (not
    found on sys.path, no such file, a failing load) falls back to importing it as usual.
    """
    import os
    from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader, ModuleSpec, PathFinder

    try:
        spec = PathFinder.find_spec(package)
        folders = list(spec.submodule_search_locations or ()) if spec is not None else []
        for suffix in EXTENSION_SUFFIXES:
            path = os.path.join(folders[0], "_binding" + suffix) if folders else ""
            if path and os.path.isfile(path):
                name = f"{package}._binding"
                loader = ExtensionFileLoader(name, path)
                module = loader.create_module(ModuleSpec(name, loader, origin=path))
                loader.exec_module(module)
                return module
    except (ImportError, OSError):
        pass
    return importlib.import_module(package)


def parser(grammar: str):
    """The tree-sitter parser of ``grammar``, one a process."""
    found = _PARSERS.get(grammar)
    if found is None:
        import tree_sitter

        found = _PARSERS[grammar] = tree_sitter.Parser(language(grammar))
    return found

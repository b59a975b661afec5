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

        found = _LANGUAGES[grammar] = tree_sitter.Language(importlib.import_module(f"tree_sitter_{grammar}").language())
    return found


def parser(grammar: str):
    """The tree-sitter parser of ``grammar``, one a process."""
    found = _PARSERS.get(grammar)
    if found is None:
        import tree_sitter

        found = _PARSERS[grammar] = tree_sitter.Parser(language(grammar))
    return found

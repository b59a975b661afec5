"""tree-sitter-bash, loaded on first use (importing it costs every run that reads no script)."""

from __future__ import annotations

_PARSER = None


def parser():
    global _PARSER
    if _PARSER is None:
        import tree_sitter
        import tree_sitter_bash

        _PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
    return _PARSER

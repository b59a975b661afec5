"""dslint: a static linter for LLM training launches."""

__version__ = "0.1.0"

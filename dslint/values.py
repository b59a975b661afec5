"""Reading numbers and booleans out of values from any file kind (YAML, hjson, shell words)."""

from __future__ import annotations

from typing import Any

# The words distutils' strtobool reads as true and as false.
TRUE_WORDS = ("yes", "true", "t", "y", "1", "on")
FALSE_WORDS = ("no", "false", "f", "n", "0", "off")


def bool_word(value: Any, true: tuple = TRUE_WORDS, false: tuple = FALSE_WORDS) -> bool | None:
    """A boolean written as a word (`yes`, `Off`, `1`): what str(value) says, None for other text."""
    text = str(value).strip().lower()
    if text in true:
        return True
    if text in false:
        return False
    return None


def as_int(value: Any, argparse_text: bool = False) -> int | None:
    """A whole number, or None. Whole floats count (`8.0`, JSON's `5e8`); booleans do not.

    Text is read as a number (`"8"`, `"8.0"`, `"1e3"`), or with ``argparse_text`` the way an
    argparse ``type=int`` option reads it (`"8"` only), for launcher flags.
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if not isinstance(value, str):
        return None
    text = value.strip()
    try:
        return int(text)
    except ValueError:
        if argparse_text:
            return None
    try:
        number = float(text)
    except ValueError:
        return None
    return int(number) if number.is_integer() else None

"""What a user or an agent wrote, made safe to print on one line of a projection."""

from __future__ import annotations

import re

from .. import values

__all__ = ["escape"]

_MARKS = re.compile(r"([\\\[\]])")


def escape(text: str) -> str:
    """Text a user or an agent wrote, safe on one line: backslash and brackets
    escaped with a backslash (no text can forge or close a stamp), then every
    control and format character as `\\uXXXX` (`ordinance.values.escape`)."""
    return values.escape(_MARKS.sub(r"\\\1", str(text)))

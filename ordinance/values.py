"""Time literals: one integer unit (seconds) inside.

Instants are seconds since the Unix epoch (UTC); durations are seconds;
`forever` is a sentinel larger than any instant a user can write.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

__all__ = [
    "FOREVER",
    "parse_instant",
    "format_instant",
    "parse_duration",
    "format_duration",
    "to_value",
]

FOREVER = 2**53  # exact in JSON numbers and floats; beyond year 285 million
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"^(\d+)(s|m|h|d|w)$")


def parse_instant(text: str) -> int:
    """`2026-08-14T23:00:00Z` (or `forever`) to seconds since the epoch."""
    if text == "forever":
        return FOREVER
    if not text.endswith("Z"):
        raise ValueError(f"instant `{text}` must be UTC and end in `Z`")
    dt = datetime.fromisoformat(text[:-1] + "+00:00")
    return int(dt.timestamp())


def format_instant(value: int) -> str:
    if value >= FOREVER:
        return "forever"
    return datetime.fromtimestamp(value, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_duration(text: str) -> int:
    m = _DURATION.match(text)
    if not m:
        raise ValueError(f"duration `{text}` must be digits and one of s m h d w")
    return int(m.group(1)) * _UNITS[m.group(2)]


def format_duration(value: int) -> str:
    for unit in ("w", "d", "h", "m"):
        if value and value % _UNITS[unit] == 0:
            return f"{value // _UNITS[unit]}{unit}"
    return f"{value}s"


def to_value(value: Any, type_: str) -> str | int:
    """A TOML value as the engine value of a column of `type_`."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return int(value.timestamp())
    if type_ == "time" and isinstance(value, str):
        return parse_instant(value)
    if type_ == "duration" and isinstance(value, str):
        return parse_duration(value)
    if isinstance(value, bool):
        raise ValueError(f"booleans are not values: {value!r}")
    if isinstance(value, (int, str)):
        return value
    raise ValueError(f"unsupported value {value!r}")

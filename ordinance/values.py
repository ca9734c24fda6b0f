"""Values: one way to read and print every value.

Inside, everything is a symbol (`str`) or an integer: instants are seconds
since the Unix epoch (UTC), durations are seconds, and `forever` is a
sentinel larger than any instant a user can write. A value's *type*
(`symbol`, `number`, `time`, `duration`, from the policy's declarations) says
how it prints:

- `format_value`: as the rule language writes it (symbols quoted with
  escapes, times as `2026-08-14T23:00:00Z`, durations as `4h`, unknown as `_`);
- `show_value`: as a person reads it in a table (symbols unquoted, but with
  control characters escaped);
- `json_value`: as JSON output carries it (times and durations as the same
  strings, numbers and symbols as themselves).
- `json_text`: JSON text as the CLI prints it, with what JSON leaves raw (C1
  controls, bidi overrides) escaped.

Records are `Record`s, tuples of their fields (`nil` is the empty tuple), and
values of an algebraic data type are `Branch`es; both are hashable, equal to
the tuples they hold, and ordered (records field by field, branches by name
as Soufflé numbers them, then arguments). Each hashes once, so a deep value
(a list of thousands of cells) hashes in constant time, as Soufflé's
interned records compare by their ids.
They print as Soufflé writes them, `[1, "a"]`, `nil`, `$A(1)`, `$B`; JSON
carries a record as an array (`nil` as `[]`) and a branch as an object
`{"branch": "A", "args": [1]}`.

`escape` makes any text safe for a terminal: control characters (C0, DEL,
C1, so ANSI/OSC escape sequences too) and the Unicode format characters that
reorder or hide text are written as `\\u001b`-style escapes. Every text
output of the CLI passes user-written strings (ids, agents, authors, sources,
names, paths) through one of these.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from typing import Any

__all__ = [
    "Value",
    "Facts",
    "FOREVER",
    "MIN_INT",
    "MAX_INT",
    "MIN_INSTANT",
    "MAX_INSTANT",
    "string_problem",
    "json_text",
    "value_problem",
    "parse_instant",
    "format_instant",
    "parse_duration",
    "format_duration",
    "to_value",
    "escape",
    "quote",
    "format_value",
    "show_value",
    "json_value",
    "Branch",
    "Record",
]

Value = str | int
"""A value inside: a symbol, or an integer (numbers, instants, durations)."""

Facts = dict[str, set[tuple[Value, ...]]]
"""Facts by relation name: what a store holds, a request carries and the
engine evaluates."""

FOREVER = 2**53  # exact in JSON numbers and floats; beyond year 285 million
MIN_INT, MAX_INT = -(2**63), 2**63 - 1  # every integer is a signed 64-bit one
MIN_INSTANT = -62135596800  # 0001-01-01T00:00:00Z
MAX_INSTANT = 253402300799  # 9999-12-31T23:59:59Z; beyond it only `forever`
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"^(\d+)(s|m|h|d|w)$")
# C0 controls, DEL, C1 controls; bidi embeddings/overrides/isolates, zero-width
# and other format characters that make text read differently than it is
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
_QUOTED = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}
_QUOTE = re.compile('["\\\\\n\t\r]|' + _UNSAFE.pattern)


def parse_instant(text: str) -> int:
    """`2026-08-14T23:00:00Z` (or `forever`) to seconds since the epoch."""
    if text == "forever":
        return FOREVER
    if not text.endswith("Z"):
        raise ValueError(f"instant `{text}` must be UTC and end in `Z`")
    try:
        dt = datetime.fromisoformat(text[:-1] + "+00:00")
    except ValueError:
        raise ValueError(f"instant `{text:.40}` is not a date and time in years 1 to 9999") from None
    return int(dt.timestamp())


def format_instant(value: int) -> str:
    if value >= FOREVER:
        return "forever"
    try:
        return datetime.fromtimestamp(value, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):  # outside the years datetime knows
        return str(value)


def parse_duration(text: str) -> int:
    m = _DURATION.match(text)
    if not m:
        raise ValueError(f"duration `{text}` must be digits and one of s m h d w")
    return int(m.group(1)) * _UNITS[m.group(2)]


def format_duration(value: int) -> str:
    """`4h`; a negative duration as `-4h`."""
    if value < 0:
        return "-" + format_duration(-value)
    for unit in ("w", "d", "h", "m"):
        if value and value % _UNITS[unit] == 0:
            return f"{value // _UNITS[unit]}{unit}"
    return f"{value}s"


def _u(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group(0)):04x}"


# what `json.dumps(ensure_ascii=False)` leaves raw: DEL, the C1 controls (U+009B is
# a CSI), and the format characters (bidi overrides); below U+0020 JSON escapes itself
_UNSAFE_IN_JSON = re.compile(_UNSAFE.pattern.replace("\x00-\x1f", "", 1))


def json_text(value: Any, **options: Any) -> str:
    """`value` as JSON text (non-ASCII kept) with every control and format
    character escaped, so that printing it cannot drive a terminal."""
    return _UNSAFE_IN_JSON.sub(_u, json.dumps(value, ensure_ascii=False, **options))


def escape(text: str) -> str:
    """`text` with every control and format character as a `\\u00XX` escape."""
    return _UNSAFE.sub(_u, text)


def quote(text: str) -> str:
    """A string literal of the rule language (`"a\\"b"`), safe to print."""
    return '"' + _QUOTE.sub(lambda m: _QUOTED.get(m.group(0)) or _u(m), text) + '"'


def _timed(value: Any, type_: str | None) -> str | None:
    if type(value) is int and type_ == "time":
        return format_instant(value)
    if type(value) is int and type_ == "duration":
        return format_duration(value)
    return None


class _Hashed(tuple):  # type: ignore[type-arg]
    """A tuple whose hash is computed once (its fields' hashes are too)."""

    def __hash__(self) -> int:
        cached = self.__dict__.get("hash")
        if cached is None:
            cached = self.__dict__["hash"] = tuple.__hash__(self)
        return cached  # type: ignore[no-any-return]


class Record(_Hashed):
    """A record value: its fields (`Record((1, "a"))` is `[1, "a"]`)."""


class Branch(_Hashed):
    """A value of an algebraic data type: the branch's name, then its
    arguments (`Branch(("A", 1))` is `$A(1)`)."""

    @property
    def name(self) -> str:
        return self[0]  # type: ignore[no-any-return]

    @property
    def args(self) -> tuple[Any, ...]:
        return self[1:]


def _structured(value: tuple[Any, ...], inner: Any) -> str:
    if isinstance(value, Branch):
        args = ", ".join(inner(v) for v in value.args)
        return f"${value.name}({args})" if args else f"${value.name}"
    return f"[{', '.join(inner(v) for v in value)}]" if value else "nil"


def format_value(value: Any, type_: str | None = None) -> str:
    """A value as the rule language writes it; None (unknown) is `_`."""
    if value is None:
        return "_"
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, tuple):
        return _structured(value, format_value)
    return _timed(value, type_) or str(value)


def show_value(value: Any, type_: str | None = None) -> str:
    """A value as a person reads it: symbols unquoted (escaped), times as
    ISO-8601, durations as `4h`, None as `_`."""
    if value is None:
        return "_"
    if isinstance(value, str):
        return escape(value)
    if isinstance(value, tuple):
        return _structured(value, show_value)
    return _timed(value, type_) or str(value)


def json_value(value: Any, type_: str | None = None) -> Any:
    """A value as JSON output carries it: times and durations as the strings
    `format_value` prints, a record as an array, a branch as an object
    `{"branch": name, "args": [...]}`, everything else as itself."""
    if isinstance(value, Branch):
        return {"branch": value.name, "args": [json_value(v) for v in value.args]}
    if isinstance(value, tuple):
        return [json_value(v) for v in value]
    return _timed(value, type_) or value


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


def string_problem(text: str) -> tuple[str, str] | None:
    """(code, what is wrong) if `text` cannot be stored and printed as UTF-8
    text: a NUL byte, or a lone surrogate (what undecodable bytes become)."""
    if "\x00" in text:
        return _problem(code="nul_byte", what="holds a NUL byte")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _problem(code="lone_surrogate", what="holds a lone surrogate (not valid UTF-8 text)")
    return None


def _problem(*, code: str, what: str) -> tuple[str, str]:
    return code, what


_INTEGRAL = frozenset({"number", "time", "duration"})  # the declared types whose values are integers


def value_problem(value: object, type_: str = "any") -> tuple[str, str] | None:
    """(code, what is wrong) if `value` is not a value of a column of
    `type_`: a string (see `string_problem`), or a signed 64-bit integer;
    a `time` lies in years 1..9999 or is `forever`. None if it is fine.
    A value not of the declared kind (an integer for a `symbol`, a string for
    a `number`, `time` or `duration`) is a `type_mismatch`. The one check
    every path into the store and the gate applies."""
    if isinstance(value, str):
        if type_ in _INTEGRAL:
            return "type_mismatch", f"is {quote(value[:40])}, declared `{type_}`"
        return string_problem(value)
    if type_ == "symbol" and isinstance(value, int) and not isinstance(value, bool):
        return "type_mismatch", f"is {value!r:.40}, declared `symbol`"
    if isinstance(value, bool) or not isinstance(value, int):
        return "type_mismatch", f"is {value!r:.40}, not a string or an integer"
    if not MIN_INT <= value <= MAX_INT:
        return _problem(
            code="integer_range", what=f"is an integer of {value.bit_length()} bits, outside signed 64 bits"
        )
    if type_ == "time" and value != FOREVER and not MIN_INSTANT <= value <= MAX_INSTANT:
        return _problem(code="time_range", what=f"is {value}, not an instant in years 1 to 9999 nor `forever`")
    return None

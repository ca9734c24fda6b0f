"""The regular expressions of `match(Regex, S)`: Soufflé's dialect (a full
match, ECMAScript's syntax) on RE2, an engine whose matching is linear in the
subject, so no pattern and no subject can stall a decision
(`match("(a|aa)*b", X)` backtracks for minutes in Python's `re`).

- A pattern RE2 compiles runs on RE2, POSIX classes (`[[:digit:]]`) included.
- A `{` that begins no repetition (`a{x}`) is invalid, as in ECMAScript
  (RE2 and Python would read it as text).
- A pattern only a backtracking engine can run (a backreference `\\1`, a
  lookaround `(?=`, `(?!`, `(?<=`, `(?<!`) raises `Backtracking`: written as
  a constant, the rules run it on Python's `re` and lint warns
  (`backtracking_regex`); held by a variable, from data, it is invalid.
- Any other pattern is invalid (`invalid_regex`). From data, an invalid
  pattern decides nothing: `match` and `!match` are both false, with a
  warning (`InvalidPatternWarning`), as in Soufflé.
"""

from __future__ import annotations

import functools
import re
import warnings
from typing import Any

import re2

from ..diagnostics import Diagnostic

__all__ = [
    "Backtracking",
    "InvalidPattern",
    "InvalidPatternWarning",
    "compile_regex",
    "backtracking_regex",
    "clip",
    "warn_invalid",
]

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would print every refused pattern on stderr
_OPTIONS.max_mem = 8 << 20  # a compiled pattern's memory (RE2's default); larger ones are refused

# what a backtracking engine has and RE2 has not
_BACKTRACKING = re.compile(r"\\[1-9]|\(\?<?[=!]")
_REPEAT = re.compile(r"\{[0-9]+(?:,[0-9]*)?\}")


def clip(s: str, limit: int = 24) -> str:
    """`s` as a message shows it: printable, at most `limit` characters."""
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in s)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


class InvalidPattern(ValueError):
    """A pattern that is not a regular expression; `message` says why."""

    code = "invalid_regex"

    def __init__(self, pattern: str, why: str):
        self.message = f"invalid regular expression `{clip(pattern)}`: {why}"
        super().__init__(self.message)


class Backtracking(InvalidPattern):
    """A pattern that needs a backtracking engine (RE2 cannot express it)."""

    code = "backtracking_regex"

    def __init__(self, pattern: str):
        ValueError.__init__(self)
        self.message = (
            f"regular expression `{clip(pattern)}` needs a backtracking engine "
            "(a backreference or a lookaround): it runs on Python's `re`, in time that can grow "
            "exponentially with the subject"
        )


class InvalidPatternWarning(UserWarning):
    """Evaluation met a pattern from data that is not a regular expression:
    `match` and `!match` are both false. `diagnostic` is the warning as data."""

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic

    def __reduce__(self) -> tuple[type["InvalidPatternWarning"], tuple[Diagnostic]]:
        # rebuilt from its diagnostic, not its message: a warning crossing
        # processes (pytest-xdist, multiprocessing) arrives whole
        return (type(self), (self.diagnostic,))


def _stray_brace(pattern: str) -> int | None:
    """Where a `{` begins no `{n}`, `{n,}` or `{n,m}` (outside a class, not escaped)."""
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
        elif c == "[":  # skip the class: `[]...]` and `[^]...]` hold `]`, `[:digit:]` its own
            j = i + 1 + pattern.startswith("^", i + 1)
            j += pattern.startswith("]", j)
            while j < len(pattern) and pattern[j] != "]":
                end = pattern.find(":]", j + 2) if pattern.startswith("[:", j) else -1
                j = end + 2 if end >= 0 else j + 1 + (pattern[j] == "\\")
            i = j + 1
        elif c == "{" and not _REPEAT.match(pattern, i):
            return i
        else:
            i += 1
    return None


@functools.lru_cache(maxsize=1024)
def compile_regex(pattern: str) -> Any:
    """The RE2 program of `pattern`; InvalidPattern (Backtracking when only
    Python's `re` could run it) otherwise."""
    at = _stray_brace(pattern)
    if at is not None:
        raise InvalidPattern(pattern, f"`{{` at offset {at} begins no repetition (write `\\{{` for the character)")
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as e:
        text = e.args[0].decode("utf-8", "replace") if e.args and isinstance(e.args[0], bytes) else str(e)
        why = text.split(": ", 1)[0]  # RE2 says `missing ]: [a-z`: the reason, then the pattern again
    if _BACKTRACKING.search(pattern):
        try:
            re.compile(pattern)
        except re.error:
            pass
        else:
            raise Backtracking(pattern)
    raise InvalidPattern(pattern, why)


@functools.lru_cache(maxsize=256)
def backtracking_regex(pattern: str) -> re.Pattern[str]:
    """`pattern` on Python's `re`: only for a constant pattern RE2 cannot express."""
    try:
        return compile_regex(pattern)  # type: ignore[no-any-return]
    except Backtracking:
        return re.compile(pattern)


_WARNED: set[str] = set()  # the patterns warned of (bounded: data may hold any number of them)
_MOST_WARNED = 100


def warn_invalid(e: InvalidPattern) -> None:
    """Say that a pattern from data decided nothing: once per pattern, for the
    first hundred; then one warning for all the rest (Python's warnings
    registry keeps every distinct message: data must not grow it)."""
    if e.message in _WARNED:
        return
    if len(_WARNED) < _MOST_WARNED:
        _WARNED.add(e.message)
        message = f"{e.message}: `match` and `!match` are both false for it"
    else:
        message = "more invalid regular expressions from data: `match` and `!match` are both false for each"
    warnings.warn(InvalidPatternWarning(Diagnostic("invalid_regex", message, severity="warning")), stacklevel=3)

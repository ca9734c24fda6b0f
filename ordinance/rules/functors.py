"""What every operator, functor and built-in constraint means: its name, the
kinds of value it takes and gives, and the Python function computing it.

This module is the one place arithmetic and functors are defined. The type
pass reads the signatures; the code generator calls the functions (inlining
the operators Python has as they are); program facts, explanations and the
reference evaluator go through `evaluate`.

Soufflé's conventions: `/` and `%` truncate toward zero; a constraint takes its
pattern first (`contains(Sub, S)`, `match(Regex, S)`). `match` is Python's
`re.fullmatch` (Soufflé's full match). `glob(Pattern, Path)` matches a path:
`*` and `?` never cross `/`, `**` does (`a/**/b` also matches `a/b`), every
other character stands for itself.

A functor with no value for its arguments (`to_number("x")`, an invalid
regular expression held by a variable) raises `FunctorError`, which the engine
reports as an evaluation error naming the rule: a policy never silently drops
a constraint it cannot decide.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from . import ast

__all__ = [
    "Builtin",
    "FunctorError",
    "FUNCTORS",
    "PREDICATES",
    "OPERATORS",
    "INLINE",
    "OPERATOR_NAMES",
    "EVAL_ERRORS",
    "c_div",
    "c_mod",
    "evaluate",
    "holds",
    "regex",
    "glob_regex",
    "namespace",
]


class FunctorError(ValueError):
    """A functor without a value for its arguments; `code` names the problem."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


# what evaluating a term can raise: mixed kinds, division by zero, no value
EVAL_ERRORS = (TypeError, ZeroDivisionError, FunctorError)


@dataclass(frozen=True, slots=True)
class Builtin:
    """`params` are kinds: `symbol`, `number`, or `numeric` (any number);
    a variadic builtin repeats its last parameter. `result` is a kind, or
    None for a constraint (a test that holds or not)."""

    name: str
    params: tuple[str, ...]
    result: str | None
    fn: Callable[..., Any]
    variadic: bool = False

    def arity_ok(self, n: int) -> bool:
        return n >= len(self.params) if self.variadic else n == len(self.params)

    def param(self, i: int) -> str:
        return self.params[min(i, len(self.params) - 1)]

    @property
    def shape(self) -> str:
        """How it is called, for messages: `substr(symbol, number, number)`."""
        more = ", ..." if self.variadic else ""
        return f"{self.name}({', '.join(self.params)}{more})"


# ---------------------------------------------------------------- arithmetic


def c_div(a: Any, b: Any) -> Any:
    """Integer division truncating toward zero, as in C and Soufflé."""
    if isinstance(a, float) or isinstance(b, float):
        return a / b
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def c_mod(a: Any, b: Any) -> Any:
    if isinstance(a, float) or isinstance(b, float):
        raise TypeError("`%` on a float")
    return a - b * c_div(a, b)


def _add(a: Any, b: Any) -> Any:
    return a + b


def _sub(a: Any, b: Any) -> Any:
    return a - b


def _mul(a: Any, b: Any) -> Any:
    return a * b


# op -> function; INLINE[op] is the Python operator generated code uses instead
OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "+": _add,
    "-": _sub,
    "*": _mul,
    "/": c_div,
    "%": c_mod,
}
INLINE: dict[str, str] = {"+": "+", "-": "-", "*": "*"}
# op -> its name in generated code (`op_div` for `/`)
OPERATOR_NAMES: dict[str, str] = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod"}


# ---------------------------------------------------------------- strings


def _cat(*parts: str) -> str:
    for p in parts:
        if not isinstance(p, str):
            raise TypeError("`cat` of a number")
    return "".join(parts)


def _strlen(s: str) -> int:
    if not isinstance(s, str):
        raise TypeError("`strlen` of a number")
    return len(s)


def _substr(s: str, i: int, n: int) -> str:
    """Soufflé's substr: "" when `i` is outside the string, the rest of it
    when `n` runs past the end (or is negative)."""
    if not isinstance(s, str) or isinstance(i, str) or isinstance(n, str):
        raise TypeError("`substr` takes a symbol and two numbers")
    if not 0 <= i <= len(s):
        return ""
    return s[i:] if n < 0 else s[i : i + n]


def _ord(s: str) -> int:
    """The code point of the first character (0 for the empty string)."""
    if not isinstance(s, str):
        raise TypeError("`ord` of a number")
    return ord(s[0]) if s else 0


def _to_string(n: Any) -> str:
    if isinstance(n, str):
        raise TypeError("`to_string` of a symbol")
    return str(n)


_NUMERAL = re.compile(r"[+-]?(?:[0-9]+|0x[0-9a-fA-F]+)")


def _to_number(s: Any) -> int:
    if isinstance(s, str):
        text = s.strip()
        if not _NUMERAL.fullmatch(text):
            raise FunctorError("invalid_number", f"`to_number` of `{_clip(s)}`: not a number")
        return int(text, 0) if "x" in text else int(text)
    if isinstance(s, float):
        return int(s)
    return int(s)


def _clip(s: str, limit: int = 24) -> str:
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in s)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


@functools.lru_cache(maxsize=1024)
def regex(pattern: str) -> re.Pattern[str]:
    """A compiled regular expression; FunctorError when it does not compile."""
    try:
        return re.compile(pattern)
    except re.error as e:
        raise FunctorError("invalid_regex", f"invalid regular expression `{_clip(pattern)}`: {e.msg}") from None


@functools.lru_cache(maxsize=1024)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A path glob as a regular expression: `**/` is any number of whole
    directories, `**` anything, `*` anything but `/`, `?` one character but `/`."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out), re.S)


def _strings(name: str, a: Any, b: Any) -> None:
    if not (isinstance(a, str) and isinstance(b, str)):
        raise TypeError(f"`{name}` of a number")


def _contains(sub: str, s: str) -> bool:
    _strings("contains", sub, s)
    return sub in s


def _match(pattern: str, s: str) -> bool:
    _strings("match", pattern, s)
    return regex(pattern).fullmatch(s) is not None


def _starts_with(prefix: str, s: str) -> bool:
    _strings("starts_with", prefix, s)
    return s.startswith(prefix)


def _glob(pattern: str, path: str) -> bool:
    _strings("glob", pattern, path)
    return glob_regex(pattern).fullmatch(path) is not None


FUNCTORS: dict[str, Builtin] = {
    b.name: b
    for b in (
        Builtin("cat", ("symbol",), "symbol", _cat, variadic=True),
        Builtin("strlen", ("symbol",), "number", _strlen),
        Builtin("substr", ("symbol", "number", "number"), "symbol", _substr),
        Builtin("ord", ("symbol",), "number", _ord),
        Builtin("to_string", ("numeric",), "symbol", _to_string),
        Builtin("to_number", ("symbol",), "number", _to_number),
    )
}

PREDICATES: dict[str, Builtin] = {
    b.name: b
    for b in (
        Builtin("contains", ("symbol", "symbol"), None, _contains),
        Builtin("match", ("symbol", "symbol"), None, _match),
        Builtin("starts_with", ("symbol", "symbol"), None, _starts_with),
        Builtin("glob", ("symbol", "symbol"), None, _glob),
    )
}


def namespace() -> dict[str, Any]:
    """The names generated code calls: `op_div`, `f_cat`, `p_match`, ..."""
    names: dict[str, Any] = {f"op_{OPERATOR_NAMES[op]}": fn for op, fn in OPERATORS.items()}
    names.update({f"f_{name}": b.fn for name, b in FUNCTORS.items()})
    names.update({f"p_{name}": b.fn for name, b in PREDICATES.items()})
    return names


def evaluate(term: ast.Term, binding: Mapping[str, Any], now: int) -> Any:
    """The value of a term whose variables `binding` holds (KeyError if not)."""
    if isinstance(term, ast.Var):
        return binding[term.name]
    if isinstance(term, ast.Const):
        return term.value
    if isinstance(term, ast.Now):
        return now
    if isinstance(term, ast.BinOp):
        return OPERATORS[term.op](evaluate(term.left, binding, now), evaluate(term.right, binding, now))
    if isinstance(term, ast.Call):
        return FUNCTORS[term.func].fn(*(evaluate(a, binding, now) for a in term.args))
    raise KeyError(f"no value for {type(term).__name__}")


def holds(lit: ast.Predicate, binding: Mapping[str, Any], now: int) -> bool:
    """Whether a built-in constraint holds (negation applied)."""
    result = bool(PREDICATES[lit.name].fn(*(evaluate(a, binding, now) for a in lit.args)))
    return result != lit.negated

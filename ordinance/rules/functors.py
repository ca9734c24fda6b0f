"""What every operator, functor and built-in constraint means: its name, the
kinds of value it takes and gives, and the Python function computing it.

This module is the one place arithmetic and functors are defined. The type
pass reads the signatures; the code generator calls the functions (inlining
the operators Python has as they are); program facts, explanations and the
reference evaluator go through `evaluate`.

Soufflé's conventions: `/` and `%` truncate toward zero; a constraint takes its
pattern first (`contains(Sub, S)`, `match(Regex, S)`). `match` is a full
match on RE2 (regex.py says where the dialect is Soufflé's). `glob(Pattern, Path)` matches a path:
`*` and `?` never cross `/`, `**` does (`a/**/b` also matches `a/b`), every
other character stands for itself.

A functor with no value for its arguments (`to_number("x")`) raises
`FunctorError`, which the engine reports as an evaluation error naming the
rule. The one exception is Soufflé's: `match` of an invalid pattern held by a
variable is neither true nor false (both `match` and `!match` fail), with a
warning.
"""

from __future__ import annotations

import functools
import math
import re
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping

import re2

from ..values import FOREVER, MAX_INSTANT, MIN_INSTANT, Branch, Record, format_instant
from . import ast
from .regex import InvalidPattern, backtracking_regex, clip, compile_regex, warn_invalid

__all__ = [
    "Builtin",
    "FunctorError",
    "SYMBOL_LIMIT",
    "FUNCTORS",
    "PREDICATES",
    "OPERATORS",
    "OPERATOR_NAMES",
    "EVAL_ERRORS",
    "c_div",
    "c_mod",
    "evaluate",
    "match",
    "values",
    "constant",
    "holds",
    "Unsigned",
    "OPERAND",
    "regex",
    "glob_regex",
    "predicate_name",
    "mean",
    "namespace",
    "Ticket",
]


# the longest symbol `cat` builds in the running evaluation (the engine's
# `Limits.max_symbol`, set per evaluation; None: no limit)
SYMBOL_LIMIT: ContextVar[int | None] = ContextVar("SYMBOL_LIMIT", default=1_000_000)


class FunctorError(ValueError):
    """A functor without a value for its arguments; `code` names the problem."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


# what evaluating a term can raise: mixed kinds, division by zero, no value
EVAL_ERRORS = (TypeError, ZeroDivisionError, FunctorError, OverflowError)


@dataclass(frozen=True, slots=True)
class Builtin:
    """`params` are kinds: `symbol`, `number`, `numeric` (any number kind:
    number, unsigned, float; all alike), `integral` (number or unsigned) or
    `any`; a variadic builtin repeats its last parameter. `result` is a kind,
    `same` (the kind of the numeric arguments), or None for a constraint."""

    name: str
    params: tuple[str, ...]
    result: str | None
    fn: Callable[..., Any]
    variadic: bool = False
    most: int | None = None  # a variadic builtin's most arguments
    multi: bool = False  # gives several values (`range`): bound by `X = range(...)` (rules/ranges.py lifts it there)

    def arity_ok(self, n: int) -> bool:
        if not self.variadic:
            return n == len(self.params)
        return n >= len(self.params) and (self.most is None or n <= self.most)

    def param(self, i: int) -> str:
        return self.params[min(i, len(self.params) - 1)]

    @property
    def shape(self) -> str:
        """How it is called, for messages: `substr(symbol, number, number)`."""
        more = ", ..." if self.variadic else ""
        return f"{self.name}({', '.join(self.params)}{more})"


# ---------------------------------------------------------------- numbers

MASK = 2**64 - 1
MIN_INT, MAX_INT = -(2**63), 2**63 - 1


class Unsigned(int):
    """A 64-bit unsigned number: arithmetic wraps around, as in Soufflé. Mixed
    with a plain int (an untyped literal such as `1`) it stays unsigned."""

    __slots__ = ()

    def __new__(cls, value: Any = 0) -> "Unsigned":
        return int.__new__(cls, int(value) & MASK)

    def __add__(self, o: Any) -> Any:
        return Unsigned(int(self) + int(o)) if isinstance(o, int) else NotImplemented

    __radd__ = __add__

    def __sub__(self, o: Any) -> Any:
        return Unsigned(int(self) - int(o)) if isinstance(o, int) else NotImplemented

    def __rsub__(self, o: Any) -> Any:
        return Unsigned(int(o) - int(self)) if isinstance(o, int) else NotImplemented

    def __mul__(self, o: Any) -> Any:
        return Unsigned(int(self) * int(o)) if isinstance(o, int) else NotImplemented

    __rmul__ = __mul__

    def __and__(self, o: Any) -> Any:
        return Unsigned(int(self) & int(o))

    __rand__ = __and__

    def __or__(self, o: Any) -> Any:
        return Unsigned(int(self) | int(o))

    __ror__ = __or__

    def __xor__(self, o: Any) -> Any:
        return Unsigned(int(self) ^ int(o))

    __rxor__ = __xor__

    def __neg__(self) -> "Unsigned":
        return Unsigned(-int(self))

    def __invert__(self) -> "Unsigned":
        return Unsigned(~int(self))


def _like(a: Any, value: int) -> int:
    """`value` in the kind of `a` (unsigned stays unsigned)."""
    return Unsigned(value) if isinstance(a, Unsigned) else value


def _signed(value: int) -> int:
    """Wrap to a signed 64-bit number, as C shifts do."""
    return ((value + 2**63) & MASK) - 2**63


def c_div(a: Any, b: Any) -> Any:
    """Integer division truncating toward zero, as in C and Soufflé; floats divide."""
    if isinstance(a, float) or isinstance(b, float):
        return a / b
    if isinstance(a, Unsigned) or isinstance(b, Unsigned):
        return Unsigned(int(a) // int(b))
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def c_mod(a: Any, b: Any) -> Any:
    if isinstance(a, float) or isinstance(b, float):
        raise TypeError("`%` on a float")
    if isinstance(a, Unsigned) or isinstance(b, Unsigned):
        return Unsigned(int(a) % int(b))
    return a - b * c_div(a, b)


def _pow(a: Any, b: Any) -> Any:
    """`^`: floats as Python has them; integers stay integers (a negative
    exponent gives 0 unless the base is 1 or -1); outside 64 bits overflows."""
    if isinstance(a, float) or isinstance(b, float):
        return float(a) ** float(b)
    if isinstance(a, str) or isinstance(b, str):
        raise TypeError("`^` on a symbol")
    if b < 0:
        return _like(a, a**b if a in (1, -1) else 0)  # type: ignore[arg-type]
    if abs(a) > 1 and b * (abs(int(a)).bit_length() - 1) >= 64:
        if isinstance(a, Unsigned):
            return Unsigned(pow(int(a), int(b), 2**64))
        raise OverflowError("a number outside 64 bits")
    r = int(a) ** int(b)
    if isinstance(a, Unsigned):
        return Unsigned(r)
    if not MIN_INT <= r <= MAX_INT:
        raise OverflowError("a number outside 64 bits")
    return r


def _integral(name: str, *xs: Any) -> None:
    for x in xs:
        if not isinstance(x, int):
            raise TypeError(f"`{name}` takes integers")


def _shl(a: Any, b: Any) -> Any:
    _integral("bshl", a, b)
    if b < 0 or b >= 64:
        return _like(a, 0)
    return Unsigned(int(a) << b) if isinstance(a, Unsigned) else _signed(a << b)


def _shr(a: Any, b: Any) -> Any:
    _integral("bshr", a, b)
    b = min(max(int(b), 0), 64)
    return _like(a, int(a) >> b)


def _shru(a: Any, b: Any) -> Any:
    """Logical right shift of the 64-bit pattern."""
    _integral("bshru", a, b)
    b = min(max(int(b), 0), 64)
    r = (int(a) & MASK) >> b
    return Unsigned(r) if isinstance(a, Unsigned) else _signed(r)


def _band(a: Any, b: Any) -> Any:
    _integral("band", a, b)
    return a & b


def _bor(a: Any, b: Any) -> Any:
    _integral("bor", a, b)
    return a | b


def _bxor(a: Any, b: Any) -> Any:
    _integral("bxor", a, b)
    return a ^ b


def _land(a: Any, b: Any) -> Any:
    _integral("land", a, b)
    return _like(a, 1 if a and b else 0)


def _lor(a: Any, b: Any) -> Any:
    _integral("lor", a, b)
    return _like(a, 1 if a or b else 0)


def _lxor(a: Any, b: Any) -> Any:
    _integral("lxor", a, b)
    return _like(a, 1 if bool(a) != bool(b) else 0)


def _bnot(a: Any) -> Any:
    _integral("bnot", a)
    return ~a


def _lnot(a: Any) -> Any:
    _integral("lnot", a)
    return _like(a, 0 if a else 1)


def _in_range(r: Any) -> Any:
    """A `number` result outside 64 bits is an OverflowError (the engine
    reports `limit_exceeded`), so `p(X * X) :- p(X).` and `p(X + X) :- p(X).`
    stop; an `unsigned` one wraps around, a float is a float."""
    if type(r) is int and not MIN_INT <= r <= MAX_INT:
        raise OverflowError("a number outside 64 bits")
    return r


def _add(a: Any, b: Any) -> Any:
    if type(a) is str:  # `+` on symbols concatenates, as Soufflé's does
        return _cat(a, b)
    return _in_range(a + b)


def _sub(a: Any, b: Any) -> Any:
    return _in_range(a - b)


def _mul(a: Any, b: Any) -> Any:
    return _in_range(a * b)


# op -> function
OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "+": _add,
    "-": _sub,
    "*": _mul,
    "/": c_div,
    "%": c_mod,
    "^": _pow,
    "band": _band,
    "bor": _bor,
    "bxor": _bxor,
    "bshl": _shl,
    "bshr": _shr,
    "bshru": _shru,
    "land": _land,
    "lor": _lor,
    "lxor": _lxor,
}
# operand kinds: "integral" (number or unsigned) or "numeric" (floats too)
OPERAND: dict[str, str] = {op: "integral" if op[0] in "bl" or op == "%" else "numeric" for op in OPERATORS}
# op -> its name in generated code (`op_div` for `/`)
OPERATOR_NAMES: dict[str, str] = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod", "^": "pow"}
OPERATOR_NAMES.update({op: op for op in OPERATORS if op.isalpha()})


# ---------------------------------------------------------------- strings


def _cat(*parts: str) -> str:
    for p in parts:
        if not isinstance(p, str):
            raise TypeError("`cat` of a number")
    limit = SYMBOL_LIMIT.get()
    if limit is not None and sum(map(len, parts)) > limit:  # refused before it is built
        raise FunctorError(code="limit_exceeded", message=f"limit exceeded: a symbol longer than {limit:,} characters")
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
    if isinstance(n, float):
        return f"{n:f}"  # Soufflé's: C++ std::to_string, six decimals (3.14 -> 3.140000)
    return str(n)


_NUMERAL = re.compile(r"[+-]?(?:[0-9]+|0x[0-9a-fA-F]+)")


def _to_number(s: Any) -> int:
    if isinstance(s, str):
        text = s.strip()
        if not _NUMERAL.fullmatch(text):
            raise FunctorError(code="invalid_number", message=f"`to_number` of `{_clip(s)}`: not a number")
        return int(text, 0) if "x" in text else int(text)
    if isinstance(s, Unsigned):
        return _signed(int(s))
    if isinstance(s, float) and not math.isfinite(s):
        raise FunctorError(code="invalid_number", message=f"`to_number` of `{s}`: not a number")
    return int(s)


_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _to_float(s: Any) -> float:
    if isinstance(s, str):
        if not _FLOAT.fullmatch(s.strip()):
            raise FunctorError(code="invalid_number", message=f"`to_float` of `{_clip(s)}`: not a number")
        return float(s)
    return float(s)


def _to_unsigned(s: Any) -> int:
    if isinstance(s, str):
        return Unsigned(_to_number(s))
    if isinstance(s, float) and not math.isfinite(s):
        raise FunctorError(code="invalid_number", message=f"`to_unsigned` of `{s}`: not a number")
    return Unsigned(int(s))


def _min(*xs: Any) -> Any:
    return min(xs)


def _max(*xs: Any) -> Any:
    return max(xs)


def _range(a: Any, b: Any, step: Any = None) -> Iterator[Any]:
    """Soufflé's `range(A, B)` and `range(A, B, Step)`: from A up to (or
    down to) B, B excluded; the step defaults to 1 or -1."""
    if step is None:
        step = 1 if a <= b else -1
    if step == 0:
        return
    x = a
    while (x < b) if step > 0 else (x > b):
        yield x
        x = x + step


_clip = clip


def regex(pattern: str) -> Any:
    """A pattern's RE2 program; FunctorError when RE2 cannot run it (regex.py)."""
    try:
        return compile_regex(pattern)
    except InvalidPattern as e:
        raise FunctorError(code=e.code, message=e.message) from None


_GLOB_OPTIONS = re2.Options()
_GLOB_OPTIONS.dot_nl = True


@functools.lru_cache(maxsize=1024)
def glob_regex(pattern: str) -> Any:
    """A path glob as an RE2 program: `**/` is any number of whole
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
    return re2.compile("".join(out), _GLOB_OPTIONS)


def _strings(name: str, a: Any, b: Any) -> None:
    if not (isinstance(a, str) and isinstance(b, str)):
        raise TypeError(f"`{name}` of a number")


def _contains(sub: str, s: str) -> bool:
    _strings("contains", sub, s)
    return sub in s


def _match(pattern: str, s: str) -> bool | None:
    """None, neither true nor false, for a pattern that is no regular
    expression (only a pattern from data: lint refuses a constant one)."""
    _strings("match", pattern, s)
    try:
        compiled = compile_regex(pattern)
    except InvalidPattern as e:
        warn_invalid(e)
        return None
    return compiled.fullmatch(s) is not None


def _match_constant(pattern: str, s: str) -> bool:
    """`match` of a constant pattern, which lint checked: on RE2, or on
    Python's `re` where only a backtracking engine can run it."""
    _strings("match", pattern, s)
    return backtracking_regex(pattern).fullmatch(s) is not None


def _starts_with(prefix: str, s: str) -> bool:
    _strings("starts_with", prefix, s)
    return s.startswith(prefix)


def _glob(pattern: str, path: str) -> bool:
    _strings("glob", pattern, path)
    return glob_regex(pattern).fullmatch(path) is not None


# ---------------------------------------------------------------- time


def _instant(name: str, t: Any) -> int:
    if not isinstance(t, int) or isinstance(t, Unsigned):
        raise TypeError(f"`{name}` of a value that is not a time")
    if not MIN_INSTANT <= t <= MAX_INSTANT:
        shown = "forever" if t >= FOREVER else str(t)
        raise FunctorError(code="time_range", message=f"`{name}` of `{shown}`: not a time in years 1 to 9999")
    return t


def _weekday(t: Any) -> int:
    """The ISO day of the week, UTC: 1 Monday ... 5 Friday, 6 Saturday, 7 Sunday."""
    return (_instant("weekday", t) // 86400 + 3) % 7 + 1  # 1970-01-01 was a Thursday


def _hour(t: Any) -> int:
    """The hour of the day, UTC: 0 ... 23."""
    return _instant("hour", t) // 3600 % 24


def _date(t: Any) -> str:
    """The day, UTC, as a symbol: `2026-08-14`."""
    return format_instant(_instant("date", t))[:10]


class Ticket(tuple):  # type: ignore[type-arg]
    """What `autoinc()` gives while a round runs: the derivation it stands
    for, numbered once the round is over (engine/qualify.py)."""

    __slots__ = ()


def _ticket(*binding: Any) -> Ticket:
    return Ticket(binding)


FUNCTORS: dict[str, Builtin] = {
    b.name: b
    for b in (
        Builtin("cat", ("symbol",), "symbol", _cat, variadic=True),
        Builtin("strlen", ("symbol",), "number", _strlen),
        Builtin("substr", ("symbol", "number", "number"), "symbol", _substr),
        Builtin("ord", ("symbol",), "number", _ord),
        Builtin("to_string", ("numeric",), "symbol", _to_string),
        Builtin("to_number", ("any",), "number", _to_number),
        Builtin("to_float", ("any",), "float", _to_float),
        Builtin("to_unsigned", ("any",), "unsigned", _to_unsigned),
        Builtin("min", ("numeric", "numeric"), "same", _min, variadic=True),
        Builtin("max", ("numeric", "numeric"), "same", _max, variadic=True),
        Builtin("range", ("numeric", "numeric"), "same", _range, variadic=True, most=3, multi=True),
        Builtin("bnot", ("integral",), "same", _bnot),
        Builtin("lnot", ("integral",), "same", _lnot),
        Builtin("autoinc", (), "number", _ticket),
        Builtin("weekday", ("number",), "number", _weekday),
        Builtin("hour", ("number",), "number", _hour),
        Builtin("date", ("number",), "symbol", _date),
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


def mean(values: list[Any]) -> float | None:
    """The `mean` aggregate: a float, as in Soufflé; None (no value, the rule
    does not fire) over nothing."""
    if not values:
        return None
    for v in values:
        if isinstance(v, str):
            raise TypeError("`mean` of a symbol")
    return math.fsum(float(v) for v in values) / len(values)


def namespace() -> dict[str, Any]:
    """The names generated code calls: `op_div`, `f_cat`, `p_match`, `U`..."""
    names: dict[str, Any] = {f"op_{OPERATOR_NAMES[op]}": fn for op, fn in OPERATORS.items()}
    names["U"] = Unsigned
    names.update({f"f_{name}": b.fn for name, b in FUNCTORS.items()})
    names.update({f"p_{name}": b.fn for name, b in PREDICATES.items()})
    names["p_match_constant"] = _match_constant
    names["MEAN"] = mean
    return names


def predicate_name(lit: ast.Predicate) -> str:
    """The name generated code calls for a built-in constraint: a constant
    pattern of `match` has its own (`p_match_constant`)."""
    if lit.name == "match" and lit.args and isinstance(lit.args[0], ast.Const):
        return "p_match_constant"
    return f"p_{lit.name}"


def evaluate(term: ast.Term, binding: Mapping[str, Any], now: int) -> Any:
    """The value of a term whose variables `binding` holds (KeyError if not)."""
    if isinstance(term, ast.Var):
        return binding[term.name]
    if isinstance(term, ast.Const):
        return constant(term)
    if isinstance(term, ast.Now):
        return now
    if isinstance(term, ast.BinOp):
        return OPERATORS[term.op](evaluate(term.left, binding, now), evaluate(term.right, binding, now))
    if isinstance(term, ast.Call):
        builtin = FUNCTORS[term.func]
        if builtin.multi:
            raise TypeError(f"`{term.func}` gives several values")
        return builtin.fn(*(evaluate(a, binding, now) for a in term.args))
    if isinstance(term, ast.Record):
        return Record(evaluate(a, binding, now) for a in term.args) if term.args else ()
    if isinstance(term, ast.Branch):
        return Branch((term.name, *(evaluate(a, binding, now) for a in term.args)))
    raise KeyError(f"no value for {type(term).__name__}")


def match(term: ast.Term, value: Any, binding: Mapping[str, Any], now: int) -> dict[str, Any] | None:
    """`binding` extended so that `term` has `value`: the unbound variables of
    a record or constructor pattern take their fields' values. None if the
    value does not fit (another shape, branch or field)."""
    if isinstance(term, ast.Var) and term.name not in binding:
        return {**binding, term.name: value}
    if isinstance(term, ast.Wildcard):
        return dict(binding)
    if isinstance(term, (ast.Record, ast.Branch)):
        if isinstance(term, ast.Record):
            fits = isinstance(value, tuple) and not isinstance(value, Branch) and len(value) == len(term.args)
            fields = value
        else:
            fits = isinstance(value, Branch) and value.name == term.name and len(value.args) == len(term.args)
            fields = value.args if fits else ()
        out: dict[str, Any] | None = dict(binding) if fits else None
        for a, v in zip(term.args, fields):
            if out is None:
                return None
            out = match(a, v, out, now)
        return out
    return dict(binding) if evaluate(term, binding, now) == value else None


def values(term: ast.Term, binding: Mapping[str, Any], now: int) -> Any:
    """Every value of a term: a `range(...)` gives several, any other one."""
    if isinstance(term, ast.Call) and FUNCTORS[term.func].multi:
        return FUNCTORS[term.func].fn(*(evaluate(a, binding, now) for a in term.args))
    return (evaluate(term, binding, now),)


def constant(c: ast.Const) -> Any:
    """A constant's runtime value (an unsigned one is an `Unsigned`)."""
    return Unsigned(c.value) if c.type == "unsigned" else c.value


def holds(lit: ast.Predicate, binding: Mapping[str, Any], now: int) -> bool:
    """Whether a built-in constraint holds (negation applied). A constraint
    that decides nothing (`match` of an invalid pattern) holds neither way."""
    fn = _match_constant if predicate_name(lit) == "p_match_constant" else PREDICATES[lit.name].fn
    result = fn(*(evaluate(a, binding, now) for a in lit.args))
    return result is not None and bool(result) != lit.negated

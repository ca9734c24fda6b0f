"""A naive bottom-up reference evaluator, written for the tests.

Independent of ordinance.engine: it walks the AST with dict bindings and,
stratum by stratum, applies every rule to the whole database until nothing
new appears. Slow and obviously correct is the point.

Semantics shared with the engine: a variable of a negated atom that occurs
nowhere else in the rule is existential; an aggregate's variables that also
occur in the body outside every aggregate (not as the variable an aggregate
sets), except a target variable, are bound from outside (Soufflé's scoping); count and sum over nothing are 0,
min and max over nothing make the rule fail; `/` and `%` truncate toward zero.
Records are tuples and ADT values `Branch`es (ordinance.values); a record or
constructor with unbound variables is a pattern, matched field by field.
"""

from __future__ import annotations

import re
import statistics

from collections import Counter
from dataclasses import replace
from typing import Any, Iterable, Iterator, Mapping

from ordinance.rules.ast import (
    Aggregate,
    Atom,
    BinOp,
    Branch,
    Call,
    Comparison,
    Const,
    Literal,
    Negation,
    Now,
    Predicate,
    Record,
    Rule,
    Term,
    Var,
    Wildcard,
)
from ordinance.values import Branch as BranchValue
from ordinance.rules.functors import FUNCTORS, OPERATORS, PREDICATES, Unsigned, constant
from ordinance.rules.checked import CheckedProgram

__all__ = ["naive_evaluate"]

DB = dict[str, set[tuple[Any, ...]]]


def naive_evaluate(
    program: CheckedProgram, facts: Mapping[str, Iterable[tuple[Any, ...]]] | None = None, now: int = 0
) -> DB:
    db: DB = {name: set() for name in program.relations}
    for name, rows in (facts or {}).items():
        db.setdefault(name, set()).update(tuple(r) for r in rows)
    for rule in program.rules:
        if not rule.body:
            db[rule.head.relation].add(tuple(_value(a, {}, now) for a in rule.head.args))
    for stratum in program.strata:
        rules = [r for r in program.rules if r.body and r.head.relation in stratum]
        while True:
            derived = {(r.head.relation, t) for r in rules for t in _fire(r, db, now)}
            fresh = {(rel, t) for rel, t in derived if t not in db[rel]}
            if not fresh:
                break
            for rel, t in fresh:
                db[rel].add(t)
    return db


# ---------------------------------------------------------------- rules


def _rename_wildcards(rule: Rule) -> Rule:
    n = iter(range(1 << 30))

    def term(t: Term) -> Term:
        if isinstance(t, Wildcard):
            return Var(f"_w{next(n)}")
        if isinstance(t, BinOp):
            return BinOp(t.op, term(t.left), term(t.right))
        if isinstance(t, Call):
            return Call(t.func, tuple(term(a) for a in t.args))
        if isinstance(t, (Record, Branch)):
            return replace(t, args=tuple(term(a) for a in t.args))
        if isinstance(t, Aggregate):
            return Aggregate(t.func, None if t.target is None else term(t.target), tuple(lit(x) for x in t.body))
        return t

    def lit(x: Literal) -> Literal:
        if isinstance(x, Atom):
            return Atom(x.relation, tuple(term(a) for a in x.args))
        if isinstance(x, Negation):
            return Negation(Atom(x.atom.relation, tuple(term(a) for a in x.atom.args)))
        if isinstance(x, Predicate):
            return Predicate(x.name, tuple(term(a) for a in x.args), x.negated)
        return Comparison(x.op, term(x.left), term(x.right))

    return Rule(Atom(rule.head.relation, tuple(term(a) for a in rule.head.args)), tuple(lit(x) for x in rule.body))


def _vars(x: Any) -> Iterator[str]:
    if isinstance(x, Var):
        yield x.name
    elif isinstance(x, BinOp):
        yield from _vars(x.left)
        yield from _vars(x.right)
    elif isinstance(x, Aggregate):
        yield from _vars(x.target)
        for lit in x.body:
            yield from _vars(lit)
    elif isinstance(x, Atom):
        for a in x.args:
            yield from _vars(a)
    elif isinstance(x, (Call, Predicate, Record, Branch)):
        for a in x.args:
            yield from _vars(a)
    elif isinstance(x, Negation):
        yield from _vars(x.atom)
    elif isinstance(x, Comparison):
        yield from _vars(x.left)
        yield from _vars(x.right)


def _outside(x: Any) -> Iterator[str]:
    """Variables outside every aggregate."""
    if isinstance(x, Aggregate):
        return
    if isinstance(x, Var):
        yield x.name
    elif isinstance(x, BinOp):
        yield from _outside(x.left)
        yield from _outside(x.right)
    elif isinstance(x, (Call, Predicate, Atom, Record, Branch)):
        for a in x.args:
            yield from _outside(a)
    elif isinstance(x, Negation):
        yield from _outside(x.atom)
    elif isinstance(x, Comparison):
        yield from _outside(x.left)
        yield from _outside(x.right)


def _fire(rule: Rule, db: DB, now: int) -> Iterator[tuple[Any, ...]]:
    rule = _rename_wildcards(rule)
    # Soufflé's scoping: an aggregate sees the clause's variables that occur
    # outside every aggregate, except its target variable
    uses = _Uses(v for part in (rule.head, *rule.body) for v in _outside(part))
    # ... that the body gives a value outside every aggregate, other than as
    # the variable an aggregate sets and names (`Y = min Z + Y : {...}`: the
    # inner Y is local); `X = min ...` gives X to the other aggregates
    uses.feeds = {v for lit in rule.body if not _sets_aggregate(lit) for v in _outside(lit)}
    for lit in rule.body:
        if _sets_aggregate(lit):
            assert isinstance(lit, Comparison)
            var, agg = (lit.left, lit.right) if isinstance(lit.left, Var) else (lit.right, lit.left)
            if isinstance(var, Var) and var.name not in _vars(agg):
                uses.feeds.add(var.name)
    for b in _solve(list(rule.body), {}, db, now, uses):
        yield tuple(_value(a, b, now) for a in rule.head.args)


def _solve(lits: list[Literal], b: dict[str, Any], db: DB, now: int, uses: Counter[str]) -> Iterator[dict[str, Any]]:
    if not lits:
        yield b
        return
    for i, lit in enumerate(lits):
        rest = lits[:i] + lits[i + 1 :]
        if isinstance(lit, Atom) and all(_ground(a, b) or _pattern(a, b) for a in lit.args):
            for t in db.get(lit.relation, ()):
                nb = _match(lit, t, b, now)
                if nb is not None:
                    yield from _solve(rest, nb, db, now, uses)
            return
        if isinstance(lit, Negation):
            mine = Counter(_vars(lit.atom))
            if all(v in b or uses[v] == mine[v] for v in mine):
                if not any(_match(lit.atom, t, b, now) is not None for t in db.get(lit.atom.relation, ())):
                    yield from _solve(rest, b, db, now, uses)
                return
        if isinstance(lit, Predicate) and all(_ready(a, b, uses) for a in lit.args):
            values = [_value(a, b, now, db, uses) for a in lit.args]
            result = PREDICATES[lit.name].fn(*values)
            if result is None and lit.name == "match" and isinstance(lit.args[0], Const):
                result = re.fullmatch(values[0], values[1]) is not None  # lint allowed it: Python's `re`
            if result is not None and bool(result) != lit.negated:  # None: an invalid pattern decides nothing
                yield from _solve(rest, b, db, now, uses)
            return
        if isinstance(lit, Comparison):
            left, right = _ready(lit.left, b, uses), _ready(lit.right, b, uses)
            if left and right:
                xs, ys = _values(lit.left, b, now, db, uses), _values(lit.right, b, now, db, uses)
                if any(x is not None and y is not None and _compare(lit.op, x, y) for x in xs for y in ys):
                    yield from _solve(rest, b, db, now, uses)
                return
            for var, other, ready in ((lit.left, lit.right, right), (lit.right, lit.left, left)):
                if lit.op == "=" and isinstance(var, (Record, Branch)) and _pattern(var, b) and ready:
                    for v in _values(other, b, now, db, uses):
                        nb = _unify(var, v, b, now)
                        if nb is not None:
                            yield from _solve(rest, nb, db, now, uses)
                    return
                if lit.op == "=" and isinstance(var, Var) and ready:
                    for v in _values(other, b, now, db, uses):
                        if v is not None:
                            yield from _solve(rest, {**b, var.name: v}, db, now, uses)
                    return
    for i, lit in enumerate(lits):  # expression arguments waiting for each other: check them later
        if isinstance(lit, Atom):
            rest = lits[:i] + lits[i + 1 :]
            for t in db.get(lit.relation, ()):
                nb, later = dict(b), list(rest)
                for a, v in zip(lit.args, t):
                    if isinstance(a, Var) and a.name not in nb:
                        nb[a.name] = v
                    else:
                        later.append(Comparison("=", a, Const(v, "symbol" if isinstance(v, str) else "number")))
                if len(t) == len(lit.args):
                    yield from _solve(later, nb, db, now, uses)
            return
    raise ValueError(f"no literal can be evaluated next in {lits}")


class _Uses(Counter[str]):
    feeds: set[str] | None = None  # what may feed an aggregate (None: everything used)


def _sets_aggregate(lit: Literal) -> bool:
    if not (isinstance(lit, Comparison) and lit.op == "="):
        return False
    sides = (lit.left, lit.right)
    return any(isinstance(x, Var) for x in sides) and any(isinstance(x, Aggregate) for x in sides)


def _injected(t: Aggregate, uses: Counter[str]) -> set[str]:
    target = t.target.name if isinstance(t.target, Var) else None
    feeds = getattr(uses, "feeds", None)
    return {v for v in _vars(t) if uses[v] > 0 and v != target and (feeds is None or v in feeds)}


def _values(t: Term, b: dict[str, Any], now: int, db: DB, uses: Counter[str]) -> list[Any]:
    """A term's values: several for `range(...)`."""
    if isinstance(t, Call) and FUNCTORS[t.func].multi:
        return list(FUNCTORS[t.func].fn(*(_value(a, b, now, db, uses) for a in t.args)))
    return [_value(t, b, now, db, uses)]


def _ground(t: Term, b: dict[str, Any]) -> bool:
    return all(v in b for v in _vars(t)) and not isinstance(t, Aggregate)


def _ready(t: Term, b: dict[str, Any], uses: Counter[str]) -> bool:
    """A term can be computed: its variables are bound (an aggregate's outer ones)."""
    if isinstance(t, Aggregate):
        return all(v in b for v in _injected(t, uses))
    if isinstance(t, BinOp):
        return _ready(t.left, b, uses) and _ready(t.right, b, uses)
    if isinstance(t, Call):
        return all(_ready(a, b, uses) for a in t.args)
    return all(v in b for v in _vars(t))


def _pattern(t: Term, b: dict[str, Any]) -> bool:
    """A variable, or a record or constructor whose fields are ground or patterns."""
    if isinstance(t, Var):
        return True
    return isinstance(t, (Record, Branch)) and all(_ground(a, b) or _pattern(a, b) for a in t.args)


def _unify(a: Term, v: Any, b: dict[str, Any], now: int) -> dict[str, Any] | None:
    if isinstance(a, Var) and a.name not in b:
        return {**b, a.name: v}
    if isinstance(a, (Record, Branch)) and not _ground(a, b):
        if isinstance(a, Record):
            if isinstance(v, BranchValue) or not isinstance(v, tuple) or len(v) != len(a.args):
                return None
            fields = v
        else:
            if not isinstance(v, BranchValue) or v[0] != a.name or len(v) != len(a.args) + 1:
                return None
            fields = v[1:]
        out: dict[str, Any] | None = b
        for x, y in zip(a.args, fields):
            out = _unify(x, y, out, now)
            if out is None:
                return None
        return out
    return b if _same(_value(a, b, now), v) else None


def _match(atom: Atom, t: tuple[Any, ...], b: dict[str, Any], now: int) -> dict[str, Any] | None:
    if len(t) != len(atom.args):
        return None
    nb: dict[str, Any] | None = dict(b)
    for a, v in zip(atom.args, t):
        nb = _unify(a, v, nb, now)  # type: ignore[arg-type]
        if nb is None:
            return None
    return nb


def _same(x: Any, y: Any) -> bool:
    return isinstance(x, str) == isinstance(y, str) and x == y


def _compare(op: str, x: Any, y: Any) -> bool:
    if op == "=":
        return _same(x, y)
    if op == "!=":
        return not _same(x, y)
    if isinstance(x, str) != isinstance(y, str):
        raise TypeError("a number compared with a symbol")
    return {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op]


def _value(t: Term, b: dict[str, Any], now: int, db: DB | None = None, uses: Counter[str] | None = None) -> Any:
    if isinstance(t, Var):
        return b[t.name]
    if isinstance(t, Const):
        return constant(t)
    if isinstance(t, Now):
        return now
    if isinstance(t, BinOp):
        x, y = _value(t.left, b, now, db, uses), _value(t.right, b, now, db, uses)
        if x is None or y is None:
            return None
        if t.op == "+":
            return x + y
        if t.op == "-":
            return x - y
        if t.op == "*":
            return x * y
        if t.op == "/" and (isinstance(x, float) or isinstance(y, float)):
            return x / y
        if t.op in ("/", "%") and not isinstance(x, Unsigned) and not isinstance(y, Unsigned):
            q = abs(x) // abs(y) * (1 if (x >= 0) == (y >= 0) else -1)
            return q if t.op == "/" else x - y * q
        return OPERATORS[t.op](x, y)  # the others as the language defines them (functors.py)
    if isinstance(t, Call):  # the functions are the language's definition, in functors.py
        return FUNCTORS[t.func].fn(*(_value(a, b, now, db, uses) for a in t.args))
    if isinstance(t, Record):
        return tuple(_value(a, b, now, db, uses) for a in t.args)
    if isinstance(t, Branch):
        return BranchValue((t.name, *(_value(a, b, now, db, uses) for a in t.args)))
    if isinstance(t, Aggregate):
        assert db is not None and uses is not None
        inner = set(_vars(t))
        outer = {v: b[v] for v in _injected(t, uses)}
        local = sorted(v for v in inner if v not in outer)
        rows = set()
        inside = Counter(v for lit in t.body for v in _outside(lit)) + Counter(list(outer))
        if t.target is not None:
            inside += Counter(_outside(t.target))
        for sol in _solve(list(t.body), outer, db, now, inside):
            key = tuple(sol.get(v) for v in local)
            rows.add((key, None if t.target is None else _value(t.target, sol, now)))
        values = [v for _, v in rows]
        if t.func == "count":
            return len(rows)
        if t.func == "sum":
            return sum(values)
        if not values:
            return None
        if t.func == "mean":
            return statistics.fmean(values)
        return min(values) if t.func == "min" else max(values)
    raise ValueError(f"cannot evaluate {t!r}")

"""Witnesses of `min` and `max`, grounded as Soufflé grounds them.

A variable of a `min`/`max` aggregate's body that the rule also uses outside
every aggregate, where nothing outside grounds it, is a *witness*: it takes
its values from the rows that attain the minimum (maximum), every such row
when several tie. `youngest(P, N) :- N = min X : { family(P, X) }.` becomes

    youngest(P, N) :- N = min X : { family(P_1, X) }, family(P, X_1), X_1 = N.

the aggregate over a renamed copy, then its body again outside with the
target equal to the result (the loader rewrites each rule once, before the
checks, so the checks, the planner and proofs see the rewritten rule).
A variable of a compound target is a witness too: `Y = min X + W : { a(X, W) }`
gives the W of the rows where X + W is least. `count` and `sum` have no
witnesses: the checks report such a variable as unbound.
"""

from __future__ import annotations

from itertools import count
from typing import Mapping

from . import ast
from .scope import aggregate_vars, outside_vars

__all__ = ["ground_witnesses", "FreshNames", "rule_vars"]


def ground_witnesses(rule: ast.Rule) -> ast.Rule:
    """The rule with the witnesses of its `min`/`max` aggregates grounded
    (the rule itself when it has none)."""
    if not rule.body:
        return rule
    outside = outside_vars(rule.head.args, rule.body)
    grounded = _grounded(rule.body)
    free = outside - grounded
    if not free:
        return rule
    names = FreshNames(rule_vars(rule))
    extra: list[ast.Literal] = []

    def witnessed(t: ast.Term) -> ast.Term:
        """`t` with each top-level aggregate that has witnesses replaced."""
        if isinstance(t, ast.Aggregate):
            witnesses = _witnesses(t, free)
            if not witnesses:
                return t
            result = names.fresh("R")
            extra.extend(_ground(t, witnesses, outside, result, names))
            return ast.Var(result, t.span)
        return ast.map_children(t, witnessed)

    body: list[ast.Literal] = []
    for lit in rule.body:
        if (
            isinstance(lit, ast.Comparison)
            and lit.op == "="
            and isinstance(lit.left, (ast.Var, ast.Wildcard))
            and isinstance(lit.right, ast.Aggregate)
            and _witnesses(lit.right, free)
        ):
            # `N = max ...`, or `_ = max ...` (Soufflé's way to ask for the witnesses only)
            result = lit.left if isinstance(lit.left, ast.Var) else ast.Var(names.fresh("R"), lit.left.span)
            body.append(ast.Comparison("=", result, _inner(lit.right, _witnesses(lit.right, free), names), lit.span))
            extra.extend(_outer(lit.right, _witnesses(lit.right, free), outside, result.name, names))
        else:
            body.append(ast.map_terms(lit, witnessed))
    head = ast.Atom(rule.head.relation, tuple(witnessed(a) for a in rule.head.args), rule.head.span)
    if not extra:
        return rule
    return ast.Rule(head, (*body, *extra), rule.span, rule.more_heads)


class FreshNames:
    """Variable names not yet used by a rule: `base_1`, `base_2`, ..."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = set(taken)
        self.n = count(1)

    def fresh(self, base: str) -> str:
        while True:
            name = f"{base}_{next(self.n)}"
            if name not in self.taken:
                self.taken.add(name)
                return name


def rule_vars(rule: ast.Rule) -> set[str]:
    """Every variable name a rule writes, inside aggregates too."""
    return {v for lit in rule.body for t in ast.literal_terms(lit) for v in _all_vars(t)} | {
        v for t in rule.head.args for v in _all_vars(t)
    }


def _all_vars(t: ast.Term | None) -> set[str]:
    return aggregate_vars(ast.Aggregate("count", t, ())) if t is not None else set()


def _grounded(body: tuple[ast.Literal, ...]) -> set[str]:
    """Variables the body grounds outside every aggregate: plain arguments
    of positive atoms, then `X = expr` over grounded variables (an aggregate
    counts as grounded: its own variables are its business)."""
    found = {a.name for lit in body if isinstance(lit, ast.Atom) for a in lit.args if isinstance(a, ast.Var)}
    changed = True
    while changed:
        changed = False
        for lit in body:
            if not (isinstance(lit, ast.Comparison) and lit.op == "="):
                continue
            for var, expr in ((lit.left, lit.right), (lit.right, lit.left)):
                if isinstance(var, ast.Var) and var.name not in found and outside_vars((expr,), ()) <= found:
                    found.add(var.name)
                    changed = True
    return found


def _witnesses(agg: ast.Aggregate, free: set[str]) -> set[str]:
    if agg.func not in ("min", "max"):
        return set()
    # a variable of a compound target is a witness too (`min X + W : { a(X, W) }`);
    # the target itself is not (`min X : ...` with X used outside)
    target = {agg.target.name} if isinstance(agg.target, ast.Var) else set()
    return {v for v in aggregate_vars(agg) if v in free and v not in target}


def _ground(
    agg: ast.Aggregate, witnesses: set[str], outside: set[str], result: str, names: FreshNames
) -> list[ast.Literal]:
    return [
        ast.Comparison("=", ast.Var(result, agg.span), _inner(agg, witnesses, names), agg.span),
        *_outer(agg, witnesses, outside, result, names),
    ]


def _inner(agg: ast.Aggregate, witnesses: set[str], names: FreshNames) -> ast.Aggregate:
    """The aggregate with its witnesses renamed: local to it."""
    renamed = {w: names.fresh(w) for w in sorted(witnesses)}
    target = None if agg.target is None else ast.rename_vars(agg.target, lambda n: renamed.get(n, n))
    return ast.Aggregate(agg.func, target, tuple(_rename(lit, renamed) for lit in agg.body), agg.span)


def _outer(
    agg: ast.Aggregate, witnesses: set[str], outside: set[str], result: str, names: FreshNames
) -> list[ast.Literal]:
    """The aggregate's body outside, its local variables renamed, with the
    target equal to the result: the rows that attain it."""
    local = aggregate_vars(agg) - outside - witnesses
    renamed = {v: names.fresh(v) for v in sorted(local)}
    assert agg.target is not None
    target = ast.rename_vars(agg.target, lambda n: renamed.get(n, n))
    return [
        *(_rename(lit, renamed) for lit in agg.body),
        ast.Comparison("=", target, ast.Var(result, agg.span), agg.span),
    ]


def _rename(lit: ast.Literal, names: Mapping[str, str]) -> ast.Literal:
    return ast.map_terms(lit, lambda t: ast.rename_vars(t, lambda n: names.get(n, n)))

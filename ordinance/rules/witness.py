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

from ..diagnostics import Diagnostic
from . import ast
from .scope import aggregate_vars, outside_vars

__all__ = ["ground_witnesses", "ground_reaching_witnesses", "FreshNames", "rule_vars"]


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
            and isinstance(lit.left, ast.Var)
            and isinstance(lit.right, ast.Aggregate)
            and _witnesses(lit.right, free)
        ):
            # `N = max ...` (`_ = max ...`, Soufflé's way to ask for the witnesses only, is `A_1 = max ...` by lift.py)
            result = lit.left
            body.append(ast.Comparison("=", result, _inner(lit.right, _witnesses(lit.right, free), names), lit.span))
            extra.extend(_outer(lit.right, _witnesses(lit.right, free), outside, result.name, names))
        else:
            body.append(ast.map_terms(lit, witnessed))
    head = ast.Atom(rule.head.relation, tuple(witnessed(a) for a in rule.head.args), rule.head.span)
    if not extra:
        return rule
    return ast.Rule(head, (*body, *extra), rule.span, rule.more_heads)


def ground_reaching_witnesses(rule: ast.Rule, found: list[Diagnostic]) -> ast.Rule:
    """The rule with each witness of a `min`/`max` nested in another
    aggregate that the rule uses outside every aggregate grounded in the
    rule, as Soufflé grounds it (src/ast/transform/GroundWitnesses.cpp): the
    nested aggregate, its witness renamed, stays where it is, and the rule
    gets a copy of it and its body with the target equal to that copy's
    value. `r(N, W) :- N = count : { b(X, _), X > min Y : { d(Y, W) } }.`
    becomes

        r(N, W) :- N = count : { b(X, _), X > min Y : { d(Y, W_1) } },
                   R_2 = min Y : { d(Y, W_3) }, d(Y_4, W), Y_4 = R_2.

    The copy is computed in the rule's scope, so a nested aggregate reading
    a variable of an enclosing one (`X` in `min Y : { d(Y, W), Y > X }`)
    has no value there: refused (`nested_witness`; Soufflé finds such a
    variable ungrounded, or computes the copy over all its values where the
    nested body binds it too), as is a witness another aggregate of the rule
    uses too (Soufflé grounds all of them at once)."""
    if not rule.body:
        return rule
    outside = outside_vars(rule.head.args, rule.body)
    free = outside - _grounded(rule.body)
    if not free:
        return rule
    names = FreshNames(rule_vars(rule))
    extra: list[ast.Literal] = []
    tops = [
        s for lit in rule.body for t in ast.literal_terms(lit) for s in ast.subterms(t) if isinstance(s, ast.Aggregate)
    ]

    def reach(top: ast.Aggregate) -> ast.Aggregate:
        for w in sorted(free & aggregate_vars(top)):
            roots = [r for r in _roots(top, w) if r is not top]
            nested = [r for r in roots if r.func in ("min", "max") and w in _atom_bound(r)]
            if not nested:
                continue  # the checks report it (Soufflé's "witness problem" for `count`/`sum`)
            agg = nested[0]
            others = sum(1 for t in tops if w in aggregate_vars(t)) - 1
            if len(roots) > 1 or others:
                # Soufflé grounds each aggregate's witnesses in the rule at once;
                # here one nested aggregate's alone
                message = f"the witness `{w}` of a nested `{agg.func}` is used by another aggregate of the rule too"
                found.append(Diagnostic("nested_witness", message, agg.span))
                continue
            target = {agg.target.name} if isinstance(agg.target, ast.Var) else set()
            around = _vars_without(top, agg)
            read = sorted((aggregate_vars(agg) - target - {w} - outside) & around)
            if read:
                message = (
                    f"the witness `{w}` of a nested `{agg.func}` cannot reach the rule: "
                    f"the aggregate reads `{read[0]}` of the aggregate around it"
                )
                found.append(Diagnostic("nested_witness", message, agg.span))
                continue
            result = names.fresh("R")
            extra.extend(_ground(agg, {w}, outside, result, names))
            top = _swapped(top, agg, _inner(agg, {w}, names))
        return top

    def walk(t: ast.Term) -> ast.Term:
        if isinstance(t, ast.Aggregate):
            return reach(t)
        return ast.map_children(t, walk)

    body = [ast.map_terms(lit, walk) for lit in rule.body]
    head = ast.Atom(rule.head.relation, tuple(walk(a) for a in rule.head.args), rule.head.span)
    if not extra:
        return rule
    return ast.Rule(head, (*body, *extra), rule.span, rule.more_heads)


def _level_terms(agg: ast.Aggregate) -> list[ast.Term]:
    return [*([agg.target] if agg.target is not None else []), *(t for lit in agg.body for t in ast.literal_terms(lit))]


def _nested(agg: ast.Aggregate) -> list[ast.Aggregate]:
    """The aggregates directly inside `agg` (in its target or body)."""
    return [s for t in _level_terms(agg) for s in ast.subterms(t) if isinstance(s, ast.Aggregate)]


def _roots(agg: ast.Aggregate, w: str) -> list[ast.Aggregate]:
    """The outermost aggregates (`agg` itself included) whose own level names `w`."""
    if any(v == w for t in _level_terms(agg) for v in ast.var_names(t)):
        return [agg]
    return [r for inner in _nested(agg) for r in _roots(inner, w)]


def _atom_bound(agg: ast.Aggregate) -> set[str]:
    """Variables a positive atom of the aggregate's own body binds."""
    return {v for lit in agg.body if isinstance(lit, ast.Atom) for a in lit.args for v in ast.var_names(a)}


def _vars_without(top: ast.Aggregate, agg: ast.Aggregate) -> set[str]:
    """The variables of `top` outside `agg`."""
    return aggregate_vars(_swapped(top, agg, ast.Aggregate("count", None, ())))


def _swapped(top: ast.Aggregate, old: ast.Aggregate, new: ast.Aggregate) -> ast.Aggregate:
    """`top` with the aggregate `old` inside it replaced by `new`."""
    out = _swap(top, old, new)
    assert isinstance(out, ast.Aggregate)
    return out


def _swap(t: ast.Term, old: ast.Aggregate, new: ast.Term) -> ast.Term:
    """`t` with the aggregate `old` (that very object) replaced by `new`."""
    if t is old:
        return new
    if isinstance(t, ast.Aggregate):
        target = None if t.target is None else _swap(t.target, old, new)
        body = tuple(ast.map_terms(lit, lambda x: _swap(x, old, new)) for lit in t.body)
        return ast.Aggregate(t.func, target, body, t.span)
    return ast.map_children(t, lambda x: _swap(x, old, new))


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
    if isinstance(agg.target, ast.Var):  # always local (scope.py), even named as a variable of the rule
        local.add(agg.target.name)
    renamed = {v: names.fresh(v) for v in sorted(local)}
    assert agg.target is not None
    target = ast.rename_vars(agg.target, lambda n: renamed.get(n, n))
    return [
        *(_rename(lit, renamed) for lit in agg.body),
        ast.Comparison("=", target, ast.Var(result, agg.span), agg.span),
    ]


def _rename(lit: ast.Literal, names: Mapping[str, str]) -> ast.Literal:
    return ast.map_terms(lit, lambda t: ast.rename_vars(t, lambda n: names.get(n, n)))

"""Variable scope in aggregates, as Soufflé has it.

A variable inside an aggregate is *injected* (its value comes from the
enclosing clause, so the aggregate is computed per value) when it also occurs
in the enclosing clause's body outside every aggregate, other than as the
variable an aggregate sets that names it inside (`Y = min Z + Y : { a(Z), a(Y) }`:
the inner `Y` is local, as in Soufflé, since nothing outside gives `Y` a
value before the aggregate does; the variable of `X = min ...` set by a
sibling aggregate is injected; a variable of the head only is local too); otherwise it is *local*
(existential inside the aggregate body). A target that is a plain variable is
always local, even when its name occurs outside: in `m(A) :- A = max A : { r(A) }`
the inner `A` ranges over `r`. So sibling aggregates may reuse a local name,
and `X = count : { e(X, _) }` with `X` bound outside compares the count with
`X`, never assigns it.

The checker, the planner and the reference evaluator all ask this module.
"""

from __future__ import annotations

from typing import Iterable

from . import ast

__all__ = ["outside_vars", "feeding_vars", "aggregate_vars", "injected_vars", "local_vars"]


def outside_vars(head: Iterable[ast.Term], body: Iterable[ast.Literal]) -> set[str]:
    """Variables of a clause (or an aggregate body) outside every aggregate."""
    found = {v for t in head for v in ast.var_names(t)}
    for lit in body:
        found.update(v for t in ast.literal_terms(lit) for v in ast.var_names(t))
    return found


def feeding_vars(body: Iterable[ast.Literal]) -> set[str]:
    """The variables of a body that can feed its aggregates (`injected_vars`
    takes them): outside every aggregate, and the variable of `V = aggregate`
    unless that aggregate names `V` itself (there the inner `V` is its own,
    so `V` feeds no aggregate of the body). `X = min ...` feeds `X` to a
    sibling: `X = min A : { p(A) }, Y = max B : { q(X, B) }` reads q at X."""
    found: set[str] = set()
    for lit in body:
        if isinstance(lit, ast.Comparison) and lit.op == "=":
            sides = (lit.left, lit.right)
            var = next((s for s in sides if isinstance(s, ast.Var)), None)
            agg = next((s for s in sides if isinstance(s, ast.Aggregate)), None)
            if var is not None and agg is not None:
                if var.name not in aggregate_vars(agg):
                    found.add(var.name)
                continue
        found.update(v for t in ast.literal_terms(lit) for v in ast.var_names(t))
    return found


def aggregate_vars(agg: ast.Aggregate) -> set[str]:
    """Every variable written inside an aggregate (nested ones included)."""
    return set(ast.var_names(agg, True))


def injected_vars(agg: ast.Aggregate, outside: set[str]) -> set[str]:
    """The aggregate's variables whose values come from the enclosing clause
    (`outside`: its `feeding_vars`)."""
    target = agg.target.name if isinstance(agg.target, ast.Var) else None
    return {v for v in aggregate_vars(agg) if v in outside and v != target}


def local_vars(agg: ast.Aggregate, outside: set[str]) -> set[str]:
    return aggregate_vars(agg) - injected_vars(agg, outside)

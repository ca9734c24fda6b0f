"""Variable scope in aggregates, as Soufflé has it.

A variable inside an aggregate is *injected* (its value comes from the
enclosing clause, so the aggregate is computed per value) when it also occurs
in the enclosing clause outside every aggregate; otherwise it is *local*
(existential inside the aggregate body). A target that is a plain variable is
always local, even when its name occurs outside: in `m(A) :- A = max A : { r(A) }`
the inner `A` ranges over `r`. So sibling aggregates may reuse a local name,
and `X = count : { e(X, _) }` with `X` bound outside compares the count with
`X`, never assigns it.

The checker, the planner and the reference evaluator all ask this module.
"""

from __future__ import annotations

from typing import Iterable, Iterator

from . import ast

__all__ = ["outside_vars", "aggregate_vars", "injected_vars", "local_vars"]


def _term_vars(t: ast.Term | None, into_aggregates: bool) -> Iterator[str]:
    if isinstance(t, ast.Var):
        yield t.name
    elif isinstance(t, ast.BinOp):
        yield from _term_vars(t.left, into_aggregates)
        yield from _term_vars(t.right, into_aggregates)
    elif isinstance(t, ast.COMPOUND):
        for a in t.args:
            yield from _term_vars(a, into_aggregates)
    elif isinstance(t, ast.Aggregate) and into_aggregates:
        yield from _term_vars(t.target, True)
        for lit in t.body:
            yield from _literal_vars(lit, True)


def _literal_vars(lit: ast.Literal, into_aggregates: bool) -> Iterator[str]:
    if isinstance(lit, ast.Atom):
        terms: Iterable[ast.Term] = lit.args
    elif isinstance(lit, ast.Negation):
        terms = lit.atom.args
    elif isinstance(lit, ast.Predicate):
        terms = lit.args
    else:
        terms = (lit.left, lit.right)
    for t in terms:
        yield from _term_vars(t, into_aggregates)


def outside_vars(head: Iterable[ast.Term], body: Iterable[ast.Literal]) -> set[str]:
    """Variables of a clause (or an aggregate body) outside every aggregate."""
    found = {v for t in head for v in _term_vars(t, False)}
    for lit in body:
        found.update(_literal_vars(lit, False))
    return found


def aggregate_vars(agg: ast.Aggregate) -> set[str]:
    """Every variable written inside an aggregate (nested ones included)."""
    return set(_term_vars(agg, True))


def injected_vars(agg: ast.Aggregate, outside: set[str]) -> set[str]:
    """The aggregate's variables whose values come from the enclosing clause."""
    target = agg.target.name if isinstance(agg.target, ast.Var) else None
    return {v for v in aggregate_vars(agg) if v in outside and v != target}


def local_vars(agg: ast.Aggregate, outside: set[str]) -> set[str]:
    return aggregate_vars(agg) - injected_vars(agg, outside)

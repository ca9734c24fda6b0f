"""An aggregate where an argument stands, as Soufflé allows: lifted into `A = agg`.

`r(X, count : { a(_) }) :- a(X).` becomes
`r(X, A_1) :- a(X), A_1 = count : { a(_) }.`, and
`r(X) :- b(X, count : { a(Y), Y < X }).` becomes
`r(X) :- b(X, A_1), A_1 = count : { a(Y), Y < X }.`: the aggregate's value is
a variable the rest of the rule reads, and its variables keep their scope
(one the rule also uses outside is injected, see scope.py). Head arguments
and the arguments of atoms, negated ones too, are lifted, at any depth of an
expression (`r(1 + max X : { a(X) })`); an aggregate inside an aggregate's
body stays where it is (the checks report it). Runs before the witnesses are
grounded (witness.py), so `r(W, min X : { a(X, W) })` has its witness `W`.
`_ = agg` in a rule's body, as Soufflé writes it, is `A_1 = agg`: it holds
where the aggregate has a value (`count` and `sum` always, `min`, `max` and
`mean` over a body with a match), and `_ = max X : { a(X, W) }` asks for the
witnesses `W` only.
"""

from __future__ import annotations

from . import ast
from .witness import FreshNames, rule_vars

__all__ = ["lift_aggregates"]


def _has_aggregate(t: ast.Term) -> bool:
    return any(isinstance(s, ast.Aggregate) for s in ast.subterms(t))


def _atoms(rule: ast.Rule) -> list[ast.Atom]:
    """The head and the body's atoms, negated ones too (several heads are expanded before)."""
    return [
        rule.head,
        *(
            lit.atom if isinstance(lit, ast.Negation) else lit
            for lit in rule.body
            if isinstance(lit, (ast.Atom, ast.Negation))
        ),
    ]


def lifted(t: ast.Term, names: FreshNames, extra: list[ast.Literal]) -> ast.Term:
    """`t` with each aggregate in it a fresh variable `A_n`, and `A_n = agg`
    appended to `extra`."""
    if isinstance(t, ast.Aggregate):
        var = ast.Var(names.fresh("A"), t.span)
        extra.append(ast.Comparison("=", var, t, t.span))
        return var
    return ast.map_children(t, lambda c: lifted(c, names, extra))


def _discarded(lit: ast.Literal) -> bool:
    """`_ = agg` (or `agg = _`): the aggregate's value asked for nothing."""
    if not (isinstance(lit, ast.Comparison) and lit.op == "="):
        return False
    sides = {type(lit.left), type(lit.right)}
    return sides == {ast.Wildcard, ast.Aggregate}


def lift_aggregates(rule: ast.Rule) -> ast.Rule:
    """The rule with each aggregate in an argument bound by `A = agg` in its
    body, and `_ = agg` made `A = agg` (A used nowhere else)."""
    if not (
        any(_has_aggregate(a) for atom in _atoms(rule) for a in atom.args) or any(_discarded(lit) for lit in rule.body)
    ):
        return rule
    names = FreshNames(rule_vars(rule))
    extra: list[ast.Literal] = []

    def lift(t: ast.Term) -> ast.Term:
        return lifted(t, names, extra)

    def atom(a: ast.Atom) -> ast.Atom:
        return ast.Atom(a.relation, tuple(lift(t) for t in a.args), a.span)

    body: list[ast.Literal] = []
    for lit in rule.body:
        if isinstance(lit, ast.Atom):
            body.append(atom(lit))
        elif isinstance(lit, ast.Negation):
            body.append(ast.Negation(atom(lit.atom), lit.span))
        elif _discarded(lit):
            assert isinstance(lit, ast.Comparison)
            agg = lit.right if isinstance(lit.right, ast.Aggregate) else lit.left
            body.append(ast.Comparison("=", ast.Var(names.fresh("A"), lit.span), agg, lit.span))
        else:
            body.append(lit)
    return ast.Rule(atom(rule.head), (*body, *extra), rule.span, rule.more_heads)

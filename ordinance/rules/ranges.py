"""`range(...)` where a value stands, as Soufflé allows: lifted into `X = range(...)`.

`digit(range(0, 10)).` becomes `digit(R_1) :- R_1 = range(0, 10).`, and
`p(X, range(0, X) + 1) :- n(X).` becomes `p(X, R_1 + 1) :- n(X), R_1 = range(0, X).`:
one tuple per value. Head arguments, positive atoms and comparisons other
than `X = range(...)` are lifted; inside a negation, an aggregate or a
built-in constraint `range` stays where it is and the checks report it
(`range_position`).
"""

from __future__ import annotations

from . import ast
from .functors import FUNCTORS
from .witness import FreshNames, rule_vars

__all__ = ["lift_ranges"]


def _multi(t: ast.Term) -> bool:
    return isinstance(t, ast.Call) and t.func in FUNCTORS and FUNCTORS[t.func].multi


def _has_multi(t: ast.Term) -> bool:
    if _multi(t):
        return True
    if isinstance(t, ast.BinOp):
        return _has_multi(t.left) or _has_multi(t.right)
    if isinstance(t, ast.Call):
        return any(_has_multi(a) for a in t.args)
    return False


def lift_ranges(rule: ast.Rule) -> ast.Rule:
    """The rule with each `range(...)` in a lifted place bound by `R = range(...)`."""
    places = [*rule.head.args, *(a for lit in rule.body if isinstance(lit, ast.Atom) for a in lit.args)]
    places += [
        side
        for lit in rule.body
        if isinstance(lit, ast.Comparison) and not _assignment(lit)
        for side in (lit.left, lit.right)
    ]
    if not any(_has_multi(t) for t in places):
        return rule
    names = FreshNames(rule_vars(rule))
    extra: list[ast.Literal] = []

    def lift(t: ast.Term) -> ast.Term:
        if _multi(t):
            assert isinstance(t, ast.Call)
            var = ast.Var(names.fresh("R"), t.span)
            extra.append(ast.Comparison("=", var, ast.map_children(t, lift), t.span))
            return var
        return ast.map_children(t, lift)

    body: list[ast.Literal] = []
    for lit in rule.body:
        if isinstance(lit, ast.Atom):
            body.append(ast.Atom(lit.relation, tuple(lift(a) for a in lit.args), lit.span))
        elif isinstance(lit, ast.Comparison) and not _assignment(lit):
            body.append(ast.Comparison(lit.op, lift(lit.left), lift(lit.right), lit.span))
        else:
            body.append(lit)
    head = ast.Atom(rule.head.relation, tuple(lift(a) for a in rule.head.args), rule.head.span)
    return ast.Rule(head, (*extra, *body), rule.span, rule.more_heads)


def _assignment(lit: ast.Comparison) -> bool:
    """`X = range(...)` (either way round): already where `range` may stand."""
    return lit.op == "=" and (_multi(lit.left) or _multi(lit.right))

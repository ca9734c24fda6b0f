"""What a `count`, `sum` or `mean` ranges over, as Soufflé computes it.

Soufflé evaluates an aggregate whose body is one atom over that atom's
tuples, `_` columns included, and every other body over a relation of the
body's named variables (src/ast/transform/MaterializeAggregationQueries.cpp,
`needsMaterializedRelation`): a body of several positive atoms, one holding
another aggregate or a `range`, or one whose only atom repeats a variable
(`e(X, X, _)`, or `e(X, Y, _), X = Y`: Soufflé resolves that alias first).
Such an aggregate ranges over the distinct bindings of its named variables:
`_` adds no rows. With `b(1, 1). b(1, 2).` and four tuples of `d`,

    count : { b(X, _), d(_, _) }     is 1 (the one X)
    count : { b(X, _) }              is 2 (the tuples of b)
    count : { b(X, _), X > 0 }       is 2 (one atom: its tuples)

Here each positive atom holding `_` in such a body is read from a relation
`agg#...` of its named variables (`agg#...(X) :- b(X, _).`), so the body's
bindings are those distinct bindings and the evaluator, the SQL backend and
proofs need nothing of their own. For `min` and `max` the distinct bindings
change nothing, so they are left as written.
"""

from __future__ import annotations

import hashlib
from collections import Counter

from ..diagnostics import Span
from . import ast
from .printer import format_rule
from .witness import FreshNames

__all__ = ["materialized", "projected", "relation_rule", "SET_AGGREGATES"]

SET_AGGREGATES = ("count", "sum", "mean")  # the aggregates whose answer distinct bindings change


def materialized(agg: ast.Aggregate, rule: ast.Rule, names: FreshNames, made: list[ast.Rule]) -> ast.Aggregate:
    """`agg` with its body read as Soufflé materializes it, when it does;
    `made` gets the relations' rules. `agg` holds no aggregate (nested.py
    materializes such a body), nor a `range` (refused there)."""
    if agg.func not in SET_AGGREGATES or not _materializes(agg, rule):
        return agg
    body = projected(agg.body, names, made)
    return agg if body == agg.body else ast.Aggregate(agg.func, agg.target, body, agg.span)


def _materializes(agg: ast.Aggregate, rule: ast.Rule) -> bool:
    atoms = [lit for lit in agg.body if isinstance(lit, ast.Atom)]
    if len(atoms) != 1:
        return len(atoms) > 1
    same = _aliases(agg, rule)
    seen = [same.get(v, v) for a in atoms[0].args for v in ast.var_names(a)]
    return len(seen) != len(set(seen))


def _aliases(agg: ast.Aggregate, rule: ast.Rule) -> dict[str, str]:
    """The name each variable of the aggregate stands for once Soufflé's
    ResolveAliases has run: `V = W` between two variables of the rule's body,
    or between two of the aggregate's body that nothing outside it uses."""
    everywhere: Counter[str] = Counter(
        v
        for t in (*rule.head.args, *(t for lit in rule.body for t in ast.literal_terms(lit)))
        for v in ast.var_names(t, True)
    )
    inside: Counter[str] = Counter(v for v in ast.var_names(agg, True))
    outside = {v for v, n in everywhere.items() if n > inside[v]}
    parent: dict[str, str] = {}

    def find(v: str) -> str:
        while parent.get(v, v) != v:
            v = parent[v]
        return v

    pairs = [(lit, True) for lit in rule.body] + [(lit, False) for lit in agg.body]
    for lit, top in pairs:
        if isinstance(lit, ast.Comparison) and lit.op == "=":
            left, right = lit.left, lit.right
            if isinstance(left, ast.Var) and isinstance(right, ast.Var):
                if top or not ({left.name, right.name} & outside):
                    parent[find(left.name)] = find(right.name)
    return {v: find(v) for v in parent}


def projected(body: tuple[ast.Literal, ...], names: FreshNames, made: list[ast.Rule]) -> tuple[ast.Literal, ...]:
    """A materialized body with each positive atom holding `_` read from a
    relation `agg#...` of its named variables: the body then ranges over the
    distinct bindings of its named variables. An argument computed from
    variables (`b(X + 1, _)`) becomes a fresh variable equal to it, so the
    relation's rule binds what it reads."""
    out: list[ast.Literal] = []
    for lit in body:
        if not (
            isinstance(lit, ast.Atom) and any(isinstance(s, ast.Wildcard) for a in lit.args for s in ast.subterms(a))
        ):
            out.append(lit)
            continue
        args: list[ast.Term] = []
        equal: list[ast.Literal] = []
        for a in lit.args:
            if isinstance(a, (ast.BinOp, ast.Call, ast.Aggregate)):
                fresh = ast.Var(names.fresh("P"), a.span)
                equal.append(ast.Comparison("=", fresh, a, a.span))
                a = fresh
            args.append(a)
        cols = tuple(ast.Var(v, lit.span) for v in dict.fromkeys(v for a in args for v in ast.var_names(a)))
        rule = relation_rule(cols, (ast.Atom(lit.relation, tuple(args), lit.span),), lit.span)
        made.append(rule)
        out.extend((rule.head, *equal))
    return tuple(out)


def relation_rule(cols: tuple[ast.Term, ...], body: tuple[ast.Literal, ...], span: Span) -> ast.Rule:
    """`agg#...(cols) :- body.`, a relation of its own named by the rule's
    text: the same rule made twice derives one relation."""
    text = format_rule(ast.Rule(ast.Atom("agg#", cols, span), body, span))
    return ast.Rule(ast.Atom("agg#" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:10], cols, span), body, span)

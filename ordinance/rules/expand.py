"""Disjunction, multiple heads and `eqrel`, expanded as Soufflé does: into plain rules.

`a(X), b(X) :- c(X), (d(X) ; e(X)).` becomes four rules, one per head and per
branch of the body's disjunctive normal form. Each keeps the clause's span,
so diagnostics point at the source. `;` inside an aggregate body cannot be
expanded this way and is reported (`unsupported`).
"""

from __future__ import annotations

from itertools import product
from typing import Iterator

from ..diagnostics import Diagnostic, Span
from . import ast

__all__ = ["expand_rule", "expand_invariant", "eqrel_rules", "MAX_BRANCHES"]

MAX_BRANCHES = 4096  # rules one clause may expand into
_IN_AGGREGATE = "`;` inside an aggregate body is not supported; use a relation for the alternatives"


def _conjunctions(body: tuple[ast.Literal, ...]) -> list[tuple[ast.Literal, ...]]:
    """The body's disjunctive normal form: a list of plain conjunctions."""
    choices: list[list[tuple[ast.Literal, ...]]] = []
    for lit in body:
        if isinstance(lit, ast.Disjunction):
            choices.append([conj for branch in lit.branches for conj in _conjunctions(branch)])
        else:
            choices.append([(lit,)])
    total = 1
    for c in choices:
        total *= len(c)
        if total > MAX_BRANCHES:
            raise OverflowError(total)
    return [tuple(x for part in combo for x in part) for combo in product(*choices)]


def _aggregates(t: ast.Term) -> Iterator[ast.Aggregate]:
    if isinstance(t, ast.Aggregate):
        yield t
        for lit in t.body:
            for term in ast.literal_terms(lit):
                yield from _aggregates(term)
    elif isinstance(t, ast.BinOp):
        yield from _aggregates(t.left)
        yield from _aggregates(t.right)
    elif isinstance(t, ast.COMPOUND):
        for a in t.args:
            yield from _aggregates(a)


def _in_aggregates(body: tuple[ast.Literal, ...]) -> Iterator[ast.Disjunction]:
    for lit in body:
        if isinstance(lit, ast.Disjunction):
            for branch in lit.branches:
                yield from _in_aggregates(branch)
            continue
        for term in ast.literal_terms(lit):
            for agg in _aggregates(term):
                yield from (d for d in agg.body if isinstance(d, ast.Disjunction))  # type: ignore[misc]


def _bodies(body: tuple[ast.Literal, ...], span: Span, found: list[Diagnostic]) -> list[tuple[ast.Literal, ...]] | None:
    for d in _in_aggregates(body):
        found.append(Diagnostic("unsupported", _IN_AGGREGATE, d.span))
        return None
    try:
        return _conjunctions(body)
    except OverflowError:
        found.append(Diagnostic("too_large", f"the clause's disjunctions expand into more than {MAX_BRANCHES} rules", span))
        return None


def expand_rule(rule: ast.Rule, found: list[Diagnostic]) -> list[ast.Rule]:
    """The plain rules a clause stands for (itself when it is one)."""
    if not rule.more_heads and not any(isinstance(lit, ast.Disjunction) for lit in rule.body):
        for d in _in_aggregates(rule.body):
            found.append(Diagnostic("unsupported", _IN_AGGREGATE, d.span))
            return []
        return [rule]
    bodies = _bodies(rule.body, rule.span, found)
    if bodies is None:
        return []
    return [ast.Rule(head, body, rule.span) for head in (rule.head, *rule.more_heads) for body in bodies]


def expand_invariant(inv: ast.Invariant, found: list[Diagnostic]) -> list[ast.Invariant]:
    """An invariant with a disjunction is broken when any branch is satisfiable."""
    if not any(isinstance(lit, ast.Disjunction) for lit in inv.body):
        for d in _in_aggregates(inv.body):
            found.append(Diagnostic("unsupported", _IN_AGGREGATE, d.span))
            return []
        return [inv]
    bodies = _bodies(inv.body, inv.span, found)
    return [] if bodies is None else [ast.Invariant(inv.name, body, inv.span) for body in bodies]


def eqrel_rules(decl: ast.Decl) -> list[ast.Rule]:
    """An `eqrel` relation is the least equivalence relation holding its
    facts and rules: reflexive on what it mentions, symmetric, transitive."""
    if "eqrel" not in decl.qualifiers or decl.arity != 2 or len(set(decl.types)) != 1:
        return []  # the arity pass reports it
    x, y, z = (ast.Var(n, decl.span) for n in ("X", "Y", "Z"))

    def r(a: ast.Term, b: ast.Term) -> ast.Atom:
        return ast.Atom(decl.name, (a, b), decl.span)

    anon = ast.Wildcard(decl.span)
    return [
        ast.Rule(r(x, x), (r(x, anon),), decl.span),
        ast.Rule(r(y, y), (r(anon, y),), decl.span),
        ast.Rule(r(y, x), (r(x, y),), decl.span),
        ast.Rule(r(x, z), (r(x, y), r(y, z)), decl.span),
    ]

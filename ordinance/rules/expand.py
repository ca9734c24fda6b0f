"""Disjunction, multiple heads and `eqrel`, expanded as Soufflé does: into plain rules.

`a(X), b(X) :- c(X), (d(X) ; e(X)).` becomes four rules, one per head and per
branch of the body's disjunctive normal form. Each keeps the clause's span,
so diagnostics point at the source. An aggregate with `;` in its body ranges
over a relation with one rule per branch (`_materialize`); in an invariant,
or nested inside another aggregate, it is reported (`unsupported`).
"""

from __future__ import annotations

import hashlib
from itertools import product
from typing import Iterator

from ..diagnostics import Diagnostic, Span
from . import ast
from .printer import format_term
from .scope import aggregate_vars, injected_vars, outside_vars

__all__ = ["expand_rule", "expand_invariant", "expand_subsumption", "eqrel_rules", "MAX_BRANCHES"]

MAX_BRANCHES = 4096  # rules one clause may expand into
_IN_AGGREGATE = (
    "`;` inside an aggregate body is supported in a rule's own aggregates only; use a relation for the alternatives"
)


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
    return (s for s in ast.subterms(t, True) if isinstance(s, ast.Aggregate))


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
    try:
        return _conjunctions(body)
    except OverflowError:
        found.append(
            Diagnostic("too_large", f"the clause's disjunctions expand into more than {MAX_BRANCHES} rules", span)
        )
        return None


def expand_rule(rule: ast.Rule, found: list[Diagnostic]) -> list[ast.Rule]:
    """The plain rules a clause stands for (itself when it is one)."""
    if not rule.more_heads and not any(isinstance(lit, ast.Disjunction) for lit in rule.body):
        return _materialize(rule, found)
    bodies = _bodies(rule.body, rule.span, found)
    if bodies is None:
        return []
    return [
        r
        for head in (rule.head, *rule.more_heads)
        for body in bodies
        for r in _materialize(ast.Rule(head, body, rule.span), found)
    ]


def _materialize(rule: ast.Rule, found: list[Diagnostic]) -> list[ast.Rule]:
    """A rule whose aggregates have `;` in their bodies, as Soufflé
    materializes them: each such aggregate ranges over a relation
    `agg#...` with one rule per branch, holding the variables every branch
    uses (a variable that comes from the rule must be one of them); the
    relation is named by the aggregate's text, so the same aggregate twice
    is one relation."""
    if not any(True for _ in _in_aggregates(rule.body)) and not any(
        isinstance(d, ast.Disjunction) for t in rule.head.args for a in _aggregates(t) for d in a.body
    ):
        return [rule]
    outside = outside_vars(rule.head.args, rule.body)
    made: list[ast.Rule] = []
    failed = False

    def union(t: ast.Term) -> ast.Term:
        nonlocal failed
        if not isinstance(t, ast.Aggregate):
            return ast.map_children(t, union)
        if not any(isinstance(d, ast.Disjunction) for d in t.body):
            return t
        try:
            branches = _conjunctions(t.body)
        except OverflowError:
            found.append(
                Diagnostic(
                    "too_large", f"the aggregate's disjunctions expand into more than {MAX_BRANCHES} rules", t.span
                )
            )
            failed = True
            return t
        common = set.intersection(*(outside_vars((), b) for b in branches))
        flat = ast.Aggregate(t.func, t.target, tuple(lit for b in branches for lit in b))
        bound = set.intersection(
            *(
                {a.name for lit in b if isinstance(lit, ast.Atom) for a in lit.args if isinstance(a, ast.Var)}
                for b in branches
            )
        )
        for v in sorted(injected_vars(flat, outside) - bound):
            found.append(
                Diagnostic(
                    "unsupported",
                    f"`{v}` comes from the rule: every branch of the `;` inside the aggregate must bind it in an atom",
                    t.span,
                )
            )
            failed = True
        target = aggregate_vars(ast.Aggregate("count", t.target, ())) if t.target is not None else set()
        cols = tuple(ast.Var(v, t.span) for v in sorted(common | target))
        name = "agg#" + hashlib.sha256(format_term(t).encode("utf-8")).hexdigest()[:10]
        made.extend(ast.Rule(ast.Atom(name, cols, t.span), b, t.span) for b in branches)
        return ast.Aggregate(t.func, t.target, (ast.Atom(name, cols, t.span),), t.span)

    body = tuple(ast.map_terms(lit, union) for lit in rule.body)
    head = ast.Atom(rule.head.relation, tuple(union(a) for a in rule.head.args), rule.head.span)
    for d in _in_aggregates(body):  # nested inside an aggregate, or a branch's own aggregate
        found.append(Diagnostic("unsupported", _IN_AGGREGATE, d.span))
        failed = True
        break
    if failed:
        return []
    return [ast.Rule(head, body, rule.span), *(r for m in made for r in _materialize(m, found))]


def expand_invariant(inv: ast.Invariant, found: list[Diagnostic]) -> list[ast.Invariant]:
    """An invariant with a disjunction is broken when any branch is satisfiable."""
    if not any(isinstance(lit, ast.Disjunction) for lit in inv.body):
        for d in _in_aggregates(inv.body):
            found.append(Diagnostic("unsupported", _IN_AGGREGATE, d.span))
            return []
        return [inv]
    for d in _in_aggregates(inv.body):
        found.append(Diagnostic("unsupported", _IN_AGGREGATE, d.span))
        return []
    bodies = _bodies(inv.body, inv.span, found)
    return [] if bodies is None else [ast.Invariant(inv.name, body, inv.span) for body in bodies]


def expand_subsumption(sub: ast.Subsumption, found: list[Diagnostic]) -> list[ast.Subsumption]:
    """A subsumption clause with a disjunction: one clause per branch."""
    rules = expand_rule(ast.Rule(sub.dominated, (sub.dominating, *sub.body), sub.span), found)
    return [ast.Subsumption(r.head, r.body[0], r.body[1:], sub.span) for r in rules]  # type: ignore[arg-type]


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

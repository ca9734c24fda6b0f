"""Disjunction, multiple heads, negated groups and `eqrel`, expanded as
Soufflé does: into plain rules.

`a(X), b(X) :- c(X), (d(X) ; e(X)).` becomes four rules, one per head and per
branch of the body's disjunctive normal form. Each keeps the clause's span,
so diagnostics point at the source. An aggregate with `;` in its body ranges
over a relation with one rule per branch (`_materialize`); in an invariant,
or nested inside another aggregate, it is reported (`unsupported`).

A negated group `!(b(X, Y), c(Y))` is the negation of a relation of its own,
`not#...(X)` over the variables the group shares with the rest of the rule,
with one rule per branch of the group (`_negate_groups`): its other variables
are existential, as a negated atom's are. A shared variable that a branch
binds in no atom of its own (`!(b(X), X < Y)`) is bound there by the rule's
other positive atoms, which the branch's rule then reads too. A negated group
inside an aggregate or an invariant is reported (`unsupported`).
"""

from __future__ import annotations

import hashlib
from itertools import product
from typing import Iterator

from ..diagnostics import Diagnostic, Span
from . import ast
from .printer import format_literal, format_term
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


_GROUP_WHERE = "a negated group `!( ... )` stands in a rule's body only, not in {}; use a relation for it"


def _misplaced_groups(body: tuple[ast.Literal, ...], top: bool) -> Iterator[ast.NegatedGroup]:
    """The negated groups inside the body's aggregates (and, if `top`, the body's own)."""
    for lit in body:
        if isinstance(lit, ast.Disjunction):
            for branch in lit.branches:
                yield from _misplaced_groups(branch, top)
        elif isinstance(lit, ast.NegatedGroup):
            if top:
                yield lit
            yield from _misplaced_groups(lit.body, False)
        else:
            for term in ast.literal_terms(lit):
                for agg in _aggregates(term):
                    yield from (g for g in _misplaced_groups(agg.body, True))


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
    terms = [*rule.head.args, *(t for h in rule.more_heads for t in h.args)]
    for group in _misplaced_groups(rule.body, False):
        found.append(Diagnostic("unsupported", _GROUP_WHERE.format("an aggregate"), group.span))
        return []
    if any(True for t in terms for a in _aggregates(t) for _ in _misplaced_groups(a.body, True)):
        found.append(Diagnostic("unsupported", _GROUP_WHERE.format("an aggregate"), rule.span))
        return []
    if not rule.more_heads and not any(isinstance(lit, ast.Disjunction) for lit in rule.body):
        return [r for m in _negate_groups(rule, found) for r in _materialize(m, found)]
    bodies = _bodies(rule.body, rule.span, found)
    if bodies is None:
        return []
    return [
        r
        for head in (rule.head, *rule.more_heads)
        for body in bodies
        for m in _negate_groups(ast.Rule(head, body, rule.span), found)
        for r in _materialize(m, found)
    ]


def _negate_groups(rule: ast.Rule, found: list[Diagnostic]) -> list[ast.Rule]:
    """A rule (its body a plain conjunction) with each negated group the
    negation of a relation of its own, and that relation's rules."""
    if not any(isinstance(lit, ast.NegatedGroup) for lit in rule.body):
        return [rule]
    made: list[ast.Rule] = []
    body: list[ast.Literal] = []
    for i, lit in enumerate(rule.body):
        if not isinstance(lit, ast.NegatedGroup):
            body.append(lit)
            continue
        rest = [x for j, x in enumerate(rule.body) if j != i]
        shared = outside_vars(rule.head.args, (x for x in rest if not isinstance(x, ast.NegatedGroup)))
        shared |= {v for x in rest if isinstance(x, ast.NegatedGroup) for v in _group_vars(x)}
        branches = _bodies(lit.body, lit.span, found)
        if branches is None:
            return []
        cols = tuple(ast.Var(v, lit.span) for v in sorted(shared & _group_vars(lit)))
        context = tuple(x for x in rest if isinstance(x, ast.Atom))
        rules = []
        for branch in branches:
            bound = {a.name for x in branch if isinstance(x, ast.Atom) for a in x.args if isinstance(a, ast.Var)}
            guard = context if any(c.name not in bound for c in cols) else ()
            rules.append((*guard, *branch))
        text = " ; ".join(", ".join(format_literal(x) for x in b) for b in rules)
        name = "not#" + hashlib.sha256(f"{[c.name for c in cols]} {text}".encode("utf-8")).hexdigest()[:10]
        atom = ast.Atom(name, cols, lit.span)
        made.extend(r for b in rules for r in expand_rule(ast.Rule(atom, b, lit.span), found))
        body.append(ast.Negation(atom, lit.span))
    return [ast.Rule(rule.head, tuple(body), rule.span), *made]


def _group_vars(group: ast.NegatedGroup) -> set[str]:
    """The variables of a negated group outside its aggregates, nested groups' too."""
    found: set[str] = set()
    todo: list[ast.Literal] = list(group.body)
    while todo:
        lit = todo.pop()
        if isinstance(lit, ast.Disjunction):
            todo.extend(x for b in lit.branches for x in b)
        elif isinstance(lit, ast.NegatedGroup):
            todo.extend(lit.body)
        else:
            found |= outside_vars((), (lit,))
    return found


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
    for group in _misplaced_groups(inv.body, True):
        found.append(Diagnostic("unsupported", _GROUP_WHERE.format("an invariant"), group.span))
        return []
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

"""Join plans: the order in which a rule's body is matched.

A rule compiles to one plan per *variant*: `delta=None` reads every body
relation in full (the first round of a stratum), `delta=i` reads body literal
`i` from its relation's frontier (`recent`) and everything else in full (the
semi-naive rounds, and incremental maintenance).

Order: the delta literal first (an argument expression waiting for a
variable bound later is matched by a fresh variable and checked then, as
in `_unnest`: a frontier is never read inside another loop); then, greedily, the positive literal expected
to match the fewest tuples: 0 for a membership test (all arguments bound),
size^(1 - bound/arity) for an index probe, the size for a scan (sizes of the
moment the plan is compiled; unknown sizes count as huge), then more bound
arguments, then source order. A literal sharing no variable with those
bound (a cross product) comes after every one that shares some: the sizes
a plan is compiled with are those of its first round (a magic relation is
planned as one tuple), and a cross product placed early multiplies the
work of every later step. Comparisons, assignments
(`X = expr` with X unbound), negations (anti-joins) and aggregates are placed
as soon as their variables are bound.

Wildcards become fresh variables (`_#n`) and every aggregate term becomes a
fresh variable (`_agg#n`) bound by an `AggStep`, whose body is planned as a
sub-plan with the outer variables bound. A variable of a negated atom that
occurs nowhere else in the rule is existential ("local").

Records and constructors with variables are patterns: an atom argument
`[X, Y]` becomes a fresh variable `_rec#n` and `_rec#n = [X, Y]`, which is an
`Unpack` once `_rec#n` is bound and `X` or `Y` is not (else a `Filter`).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import count
from typing import Iterable, Iterator, Mapping, Union

from ..diagnostics import Diagnostic, EvaluationError
from ..rules.ast import (
    COMPOUND,
    Aggregate,
    Atom,
    BinOp,
    Branch,
    Comparison,
    Literal,
    Negation,
    Predicate,
    Record,
    Rule,
    Term,
    Var,
    Wildcard,
    literal_terms,
    var_names,
    map_children,
    rename_vars,
)
from ..rules.printer import format_literal, format_rule
from ..rules.scope import feeding_vars, local_vars

__all__ = ["Scan", "AntiJoin", "Filter", "Assign", "AggStep", "Unpack", "Step", "JoinPlan", "plan_rule"]


@dataclass(frozen=True, slots=True)
class Scan:
    """Match a positive atom: `key` lists the argument positions bound before it."""

    pos: int  # the literal's position in the rule body (source order)
    atom: Atom
    recent: bool
    key: tuple[int, ...]
    exists: bool = False  # nothing it binds is used again (`a(_, _)`): a test suffices


@dataclass(frozen=True, slots=True)
class AntiJoin:
    """`!atom`: no tuple matches on the bound positions `key` (locals are existential)."""

    pos: int
    atom: Atom
    key: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Filter:
    """A comparison or built-in constraint over bound variables."""

    pos: int
    literal: Comparison | Predicate


@dataclass(frozen=True, slots=True)
class Assign:
    pos: int
    var: str
    expr: Term


@dataclass(frozen=True, slots=True)
class AggStep:
    """Bind `var` to the aggregate over `plan`, for the outer variables' values."""

    var: str
    aggregate: Aggregate
    outer: tuple[str, ...]
    plan: "JoinPlan"


@dataclass(frozen=True, slots=True)
class Unpack:
    """`value = pattern`: match the bound `value` against a record or
    constructor `pattern`, binding the pattern's unbound variables."""

    pos: int
    value: Term
    pattern: Record | Branch


Step = Union[Scan, AntiJoin, Filter, Assign, AggStep, Unpack]


@dataclass(frozen=True, slots=True)
class JoinPlan:
    rule_id: int
    label: str  # the rule text, printed above the compiled join
    delta: int | None
    steps: tuple[Step, ...]
    head: tuple[Term, ...]  # what a match emits
    bound_in: tuple[str, ...] = ()  # variables bound on entry (aggregate bodies)


def _literal_vars(lit: Literal) -> Iterator[str]:
    """The names of a literal's variables, inside its aggregates too."""
    return (v for t in literal_terms(lit) for v in var_names(t, True))


# ---------------------------------------------------------------- normalisation


class _Fresh:
    def __init__(self) -> None:
        self.n = count()

    def var(self, prefix: str) -> Var:
        return Var(f"{prefix}#{next(self.n)}")


def _no_wildcards(term: Term, fresh: _Fresh) -> Term:
    if isinstance(term, Wildcard):
        return fresh.var("_")
    return map_children(term, lambda a: _no_wildcards(a, fresh))


def _lift(term: Term, fresh: _Fresh, aggs: list[tuple[str, Aggregate]], outside: set[str]) -> Term:
    """Replace aggregate terms by fresh variables (recorded in `aggs`); an
    aggregate's local variables get fresh names (see rules/scope.py)."""
    if isinstance(term, Aggregate):
        v = fresh.var("_agg")
        names = {name: fresh.var(name).name for name in sorted(local_vars(term, outside))}
        term = rename_vars(term, lambda n: names.get(n, n))
        assert isinstance(term, Aggregate)
        nested: list[tuple[str, Aggregate]] = []
        body = tuple(_normal_literal(lit, fresh, nested, outside) for lit in term.body)
        target = None if term.target is None else _lift(term.target, fresh, nested, outside)
        if nested:
            raise EvaluationError([Diagnostic("unsupported", "an aggregate inside an aggregate is not supported")])
        aggs.append((v.name, Aggregate(term.func, target, body)))
        return v
    if isinstance(term, (BinOp, *COMPOUND)):
        return map_children(term, lambda a: _lift(a, fresh, aggs, outside))
    return _no_wildcards(term, fresh)


def _normal_literal(lit: Literal, fresh: _Fresh, aggs: list[tuple[str, Aggregate]], outside: set[str]) -> Literal:
    if isinstance(lit, Atom):
        return Atom(lit.relation, tuple(_lift(a, fresh, aggs, outside) for a in lit.args), lit.span)
    if isinstance(lit, Negation):
        return Negation(_normal_literal(lit.atom, fresh, aggs, outside), lit.span)  # type: ignore[arg-type]
    if isinstance(lit, Predicate):
        return Predicate(lit.name, tuple(_lift(a, fresh, aggs, outside) for a in lit.args), lit.negated, lit.span)
    return Comparison(lit.op, _lift(lit.left, fresh, aggs, outside), _lift(lit.right, fresh, aggs, outside), lit.span)


# ---------------------------------------------------------------- planning


def plan_rule(
    rule: Rule,
    rule_id: int,
    delta: int | None = None,
    sizes: Mapping[str, int] | None = None,
    source_order: bool = False,
) -> JoinPlan:
    """`source_order` keeps positive literals in the order written (explanations)."""
    fresh = _Fresh()
    aggs: list[tuple[str, Aggregate]] = []
    outside = feeding_vars(rule.body)
    head = tuple(_lift(a, fresh, aggs, outside) for a in rule.head.args)
    body = [_normal_literal(lit, fresh, aggs, outside) for lit in rule.body]
    return _plan(
        format_rule(rule), rule_id, body, head, aggs, delta, {} if sizes is None else sizes, (), fresh, source_order
    )


def _plan(
    label: str,
    rule_id: int,
    body: list[Literal],
    head: tuple[Term, ...],
    aggs: list[tuple[str, Aggregate]],
    delta: int | None,
    sizes: Mapping[str, int],
    bound_in: tuple[str, ...],
    fresh: _Fresh,
    source_order: bool = False,
) -> JoinPlan:
    body = _split_patterns(body, fresh)
    # how often each variable occurs outside a given literal decides locality
    occurrences: dict[str, int] = {}
    everything: list[Iterable[str]] = [_literal_vars(lit) for lit in body]
    everything += [var_names(t, True) for t in head]
    everything += [var_names(a, True) for _, a in aggs]
    everything.append(bound_in)
    for vs in everything:
        for v in vs:
            occurrences[v] = occurrences.get(v, 0) + 1

    bound: set[str] = set(bound_in)
    steps: list[Step] = []
    pending: dict[int, Literal] = dict(enumerate(body))
    pending_aggs = list(aggs)

    def place_ready() -> None:
        progress = True
        while progress:
            progress = False
            results = {var for var, _ in pending_aggs}
            for i, lit in list(pending.items()):
                step = _ready_filter(i, lit, bound, occurrences, results)
                if step is not None:
                    steps.append(step)
                    del pending[i]
                    if isinstance(step, Assign):
                        bound.add(step.var)
                    elif isinstance(step, Unpack):
                        bound.update(var_names(step.pattern, True))
                    progress = True
            for var, agg in list(pending_aggs):
                outer = _outer_vars(agg, var, occurrences)
                if set(outer) <= bound:
                    sub = _plan_aggregate(label, rule_id, agg, outer, sizes, fresh, source_order)
                    steps.append(AggStep(var, agg, outer, sub))
                    bound.add(var)
                    pending_aggs.remove((var, agg))
                    progress = True

    if delta is not None and isinstance(pending.get(delta), Atom):
        _unnest(pending, bound, fresh, delta)  # the frontier is read first, whatever its arguments wait for
    place_ready()
    while True:
        best: tuple[tuple[float, ...], int] | None = None
        for i, lit in pending.items():
            if not isinstance(lit, Atom):
                continue
            score = _score(i, lit, bound, sizes, delta)
            if score is not None and source_order:
                score = (i,)
            if score is not None and (best is None or score < best[0]):
                best = (score, i)
        if best is None:
            if not _unnest(pending, bound, fresh):
                break
            place_ready()
            continue
        i = best[1]
        atom = pending.pop(i)
        assert isinstance(atom, Atom)
        key = tuple(p for p, a in enumerate(atom.args) if _is_bound(a, bound))
        exists = all(
            isinstance(a, Var) and occurrences.get(a.name, 0) == 1 for p, a in enumerate(atom.args) if p not in key
        )
        steps.append(Scan(i, atom, i == delta, key, exists and not source_order))
        for a in atom.args:
            if isinstance(a, Var):
                bound.add(a.name)
        place_ready()

    if pending or pending_aggs:
        left = [format_literal(lit) for lit in pending.values()] + [v for v, _ in pending_aggs]
        raise EvaluationError(
            [
                Diagnostic(
                    "unbound_variable", f"cannot order `{', '.join(left)}` in rule `{label}`: a variable is never bound"
                )
            ]
        )
    unbound = {v for t in head for v in var_names(t, True)} - bound
    if unbound:
        raise EvaluationError(
            [Diagnostic("unbound_variable", f"head variable `{sorted(unbound)[0]}` of rule `{label}` is never bound")]
        )
    return JoinPlan(rule_id, label, delta, tuple(steps), head, bound_in)


def _plan_aggregate(
    label: str,
    rule_id: int,
    agg: Aggregate,
    outer: tuple[str, ...],
    sizes: Mapping[str, int],
    fresh: _Fresh,
    source_order: bool,
) -> JoinPlan:
    local = sorted({v for lit in agg.body for v in _literal_vars(lit)} - set(outer))
    emit: tuple[Term, ...] = tuple(Var(v) for v in local)
    if agg.target is not None:
        emit += (agg.target,)
    return _plan(label, rule_id, list(agg.body), emit, [], None, sizes, outer, fresh, source_order)


def _outer_vars(agg: Aggregate, var: str, occurrences: Mapping[str, int]) -> tuple[str, ...]:
    inner: dict[str, int] = {}
    for v in var_names(agg, True):
        inner[v] = inner.get(v, 0) + 1
    return tuple(sorted(v for v, n in inner.items() if occurrences.get(v, 0) > n))


def _unnest(pending: dict[int, Literal], bound: set[str], fresh: _Fresh, only: int | None = None) -> bool:
    """No atom can be matched because each one's expression arguments wait
    for variables another binds (`t(X - 1, Y), t(Y - 1, X)`): match the first
    such atom (or literal `only`) with fresh variables in those positions, and
    check each `fresh = expression` once its variables are bound. False if none."""
    for i, lit in sorted(pending.items()):
        if not isinstance(lit, Atom) or only is not None and i != only:
            continue
        own = {a.name for a in lit.args if isinstance(a, Var)}
        args: list[Term] = []
        checks: list[Comparison] = []
        for a in lit.args:
            if isinstance(a, Var) or _is_bound(a, bound | own):
                args.append(a)
            else:
                v = fresh.var("_arg")
                args.append(v)
                checks.append(Comparison("=", v, a, a.span))
        if not checks:
            continue
        pending[i] = Atom(lit.relation, tuple(args), lit.span)
        top = max(pending) + 1
        for k, check in enumerate(checks):
            pending[top + k] = check
        return True
    return False


def _split_patterns(body: list[Literal], fresh: _Fresh) -> list[Literal]:
    """`p([X, Y])` as `p(_rec#n), _rec#n = [X, Y]` (a pattern with variables)."""
    out: list[Literal] = []
    checks: list[Literal] = []
    for lit in body:
        if isinstance(lit, Atom) and any(isinstance(a, (Record, Branch)) and any(var_names(a, True)) for a in lit.args):
            args: list[Term] = []
            for a in lit.args:
                if isinstance(a, (Record, Branch)) and any(var_names(a, True)):
                    v = fresh.var("_rec")
                    args.append(v)
                    checks.append(Comparison("=", v, a, a.span))
                else:
                    args.append(a)
            lit = Atom(lit.relation, tuple(args), lit.span)
        out.append(lit)
    return out + checks


def _is_bound(term: Term, bound: set[str]) -> bool:
    return all(v in bound for v in var_names(term, True))


def _fields(pattern: Record | Branch) -> Iterator[Term]:
    """The fields of a pattern that are neither variables nor patterns, nested ones too."""
    for a in pattern.args:
        if isinstance(a, (Record, Branch)):
            yield from _fields(a)
        elif not isinstance(a, Var):
            yield a


def _direct(pattern: Record | Branch) -> Iterator[Var]:
    """The variable fields of a pattern, nested ones too: what matching binds."""
    for a in pattern.args:
        if isinstance(a, (Record, Branch)):
            yield from _direct(a)
        elif isinstance(a, Var):
            yield a


def _unpacks(pattern: Record | Branch, bound: set[str]) -> bool:
    """Whether matching a bound value against `pattern` can run now: a field
    that is an expression (`[X + 0, 1]`) binds nothing, so its variables are
    bound already or by a variable field of the same pattern."""
    own = {a.name for a in _direct(pattern)}
    return all(_is_bound(e, bound | own) for e in _fields(pattern))


def _score(
    i: int, atom: Atom, bound: set[str], sizes: Mapping[str, int], delta: int | None
) -> tuple[float, ...] | None:
    own = {a.name for a in atom.args if isinstance(a, Var)}
    if not all(_is_bound(a, bound | own) for a in atom.args):
        return None  # an argument expression needs a variable bound later
    nbound = sum(1 for a in atom.args if _is_bound(a, bound))
    size = sizes.get(atom.relation, 1 << 40)
    # expected matches: all of a scan, size^(1 - bound/arity) for a probe, 0 for a check
    cost = 0.0 if nbound == atom.arity else float(size) ** (1 - nbound / atom.arity)
    # a literal sharing nothing with what is bound is a cross product: it comes after every connected one
    cross = 1 if bound and nbound == 0 else 0
    return (0 if i == delta else 1, cross, cost, -nbound, i)


def _ready_filter(
    i: int,
    lit: Literal,
    bound: set[str],
    occurrences: Mapping[str, int],
    results: set[str] = frozenset(),  # type: ignore[assignment]
) -> Step | None:
    """The step a non-scan literal becomes once its variables allow; `X = e`
    assigns X only when X is no aggregate's result (an aggregate binds its own)."""
    if isinstance(lit, Negation):
        atom = lit.atom
        mine: dict[str, int] = {}
        for v in _literal_vars(atom):
            mine[v] = mine.get(v, 0) + 1
        if all(v in bound or occurrences.get(v, 0) == n for v, n in mine.items()):
            return AntiJoin(i, atom, tuple(p for p, a in enumerate(atom.args) if _is_bound(a, bound)))
        return None
    if isinstance(lit, Predicate):
        return Filter(i, lit) if all(_is_bound(a, bound) for a in lit.args) else None
    if isinstance(lit, Comparison):
        left_ok, right_ok = _is_bound(lit.left, bound), _is_bound(lit.right, bound)
        if left_ok and right_ok:
            return Filter(i, lit)
        if lit.op == "=" and isinstance(lit.right, (Record, Branch)) and left_ok and _unpacks(lit.right, bound):
            return Unpack(i, lit.left, lit.right)
        if lit.op == "=" and isinstance(lit.left, (Record, Branch)) and right_ok and _unpacks(lit.left, bound):
            return Unpack(i, lit.right, lit.left)
        if lit.op == "=":
            if isinstance(lit.left, Var) and right_ok and lit.left.name not in results:
                return Assign(i, lit.left.name, lit.right)
            if isinstance(lit.right, Var) and left_ok and lit.right.name not in results:
                return Assign(i, lit.right.name, lit.left)
    return None

"""The clock as a delta: how far `now` may move before a model changes, and
moving a model to another `now` by recomputing only what the move changes.

A `$now` comparison all of whose variables the rest of its rule binds is a
*filter* (`From <= $now`, `$now - At <= D`). Where `$now` occurs only under
`+` and `-`, a filter's outcome for one binding changes at one instant at
most: where `L - R` crosses zero. The bindings the evaluation can present to
a rule's filters are among those its *relaxed* body (the body without its
`$now` filters) admits over the finished model: premises of lower strata are
complete, and those of its own stratum only ever grow. So a rule's *watch*
evaluates the relaxed body once over the model and keeps the sorted
instants at which a filter may flip. If no instant of any rule lies between
`now` and `t`, every filter decides as before at every step, so evaluating
at `t` would repeat the evaluation at `now` step for step: same tuples, same
proof notes. The model then holds at `t` as it is (`Horizon.holds`). When
facts change (or a move changes relations), a watch reading only positively
what changed keeps its instants up to date from the change alone
(`_maintain`: as incremental.py adds and deletes); any other is evaluated again.

Otherwise `advance` moves the model (a copy sharing what the move leaves
unchanged): for each rule whose instants
were crossed, the instances with the crossed filter bindings are re-decided
(those that no longer hold are deleted unless rederived, those that now hold
are added: incremental.py), the change flows up through incremental
maintenance, and only the watches whose relaxed body reads a changed
relation are evaluated again. A rule that uses
`$now` any other way (as a value in its head, an atom, an assignment or an
aggregate, or non-linearly) is *moving*: its stratum is recomputed on every
move. Program facts that mention `$now` make the whole model moving
(`Clockwork.fixed` is False): it holds only at its own `now`, and the caller
evaluates anew.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterable, Mapping

from ..rules.ast import COMPOUND, Aggregate, Atom, BinOp, Comparison, Literal, Negation, Now, Rule, Term, Var
from ..rules.ast import literal_terms, subterms, var_names
from ..rules.functors import evaluate
from .codegen import Compiled, compile_plan
from .evaluate import aggregator
from .incremental import Changes, recompute
from .limits import Limits
from .model import Model
from .plan import AggStep, Assign, Filter, plan_rule
from .prepare import Prepared
from .relation import Layer, Rel

__all__ = ["Clockwork", "Horizon", "Watch", "clockwork", "horizon", "advance", "refresh"]

Instant = int | Fraction | float


@dataclass(frozen=True, slots=True)
class Watch:
    """A rule's `$now` filters and its relaxed body, which emits the filters'
    variables (`names`) for every binding it admits."""

    rule: int
    filters: tuple[Comparison, ...]
    names: tuple[str, ...]
    relaxed: Rule
    reads: frozenset[str]
    plain: frozenset[str]  # of `reads`, those read only by positive atoms (not under `!` nor in aggregates)


@dataclass(slots=True)
class Clockwork:
    """What of a program depends on `now`, and how (computed once per program)."""

    watches: tuple[Watch, ...]
    moving: frozenset[int]  # rule ids recomputed on every move
    fixed: bool  # False: program facts mention `$now`
    compiled: dict[tuple[int, int | None], Compiled]  # (rule id, the body position read from `recent`, if any)

    def run(
        self, watch: Watch, model: Model, delta: int | None = None, rels: Mapping[str, Rel] | None = None
    ) -> set[tuple[Any, ...]]:
        """The relaxed body's bindings of the filters' variables over `model`
        (or over `rels`), with the atom at body position `delta` reading its
        relation's `recent` tuples only."""
        if not watch.relaxed.body:
            return {()}
        rels = model.rels if rels is None else rels
        compiled = self.compiled.get((watch.rule, delta))
        if compiled is None:
            sizes = {name: len(r.stable) for name, r in rels.items()}
            plan = plan_rule(watch.relaxed, watch.rule, delta, sizes)
            compiled = self.compiled[watch.rule, delta] = compile_plan(plan)
        out: set[tuple[Any, ...]] = set()
        compiled.fn(rels, aggregator(model.prepared, rels, model.now), out, model.now)
        return out

    def admitted(self, watch: Watch, model: Model, bindings: set[tuple[Any, ...]]) -> set[tuple[Any, ...]]:
        """Those of `bindings` the relaxed body still admits over `model`."""
        if not watch.relaxed.body:
            return bindings & {()}
        compiled = self.compiled.get((watch.rule, -1))
        if compiled is None:
            sizes = {name: len(r.stable) for name, r in model.rels.items()}
            sizes["__bound"] = 1
            head = watch.relaxed.head
            bound = Rule(head, (Atom("__bound", head.args),) + watch.relaxed.body, watch.relaxed.span)
            compiled = self.compiled[watch.rule, -1] = compile_plan(plan_rule(bound, watch.rule, None, sizes))
        rels = dict(model.rels)
        rels["__bound"] = Rel("__bound", len(watch.names), False, bindings)
        out: set[tuple[Any, ...]] = set()
        compiled.fn(rels, aggregator(model.prepared, rels, model.now), out, model.now)
        return out


@dataclass(slots=True)
class Horizon:
    """Per watched rule, the sorted instants at which a filter may flip; the
    model holds at `t` iff no instant lies between `now` and `t`."""

    now: int
    instants: dict[int, list[Instant]]
    moving: frozenset[int]  # moving rules, and watched rules whose instants are unknown
    at: dict[int, dict[Instant, list[tuple[Any, ...]]]]  # rule id -> instant -> filter bindings
    lo: Instant
    hi: Instant
    bounds: dict[frozenset[int], tuple[Instant, Instant] | None] = field(default_factory=dict)  # holds_for's

    def holds(self, t: int) -> bool:
        """Whether the model at `now` is also the model at `t`."""
        return t == self.now or (self.lo < t < self.hi and not self.moving)

    def holds_for(self, t: int, rules: frozenset[int]) -> bool:
        """Whether the tuples that `rules` derive in the model at `now` are
        also those at `t` (the rules reading only what such rules derive)."""
        if t == self.now:
            return True
        try:
            bounds = self.bounds[rules]
        except KeyError:
            bounds = self.bounds[rules] = self._bounds(rules)
        return bounds is not None and bounds[0] < t < bounds[1]

    def _bounds(self, rules: frozenset[int]) -> tuple[Instant, Instant] | None:
        """`lo` and `hi` over the instants of `rules` only; None if one of
        them is moving (or the program is)."""
        if -1 in self.moving or not self.moving.isdisjoint(rules):
            return None
        return _around(self.now, (self.instants[rid] for rid in rules & self.instants.keys()))

    def crossed(self, t: int) -> dict[int, set[tuple[Any, ...]] | None]:
        """The rules whose filters may decide differently at `t` than at
        `now`, with the bindings concerned (None: any, for moving rules)."""
        if t == self.now:
            return {}
        a, b = (self.now, t) if self.now < t else (t, self.now)
        out: dict[int, set[tuple[Any, ...]] | None] = {rid: None for rid in self.moving if rid >= 0}
        for rid, xs in self.instants.items():
            i, j = bisect_left(xs, a), bisect_right(xs, b)
            if i < j:
                at = self.at[rid]
                out[rid] = {binding for x in xs[i:j] for binding in at[x]}
        return out


def clockwork(prep: Prepared) -> Clockwork:
    """The program's watches and moving rules (cached on `prep`)."""
    found: Clockwork | None = prep.clock
    if found is not None:
        return found
    watches: list[Watch] = []
    moving: set[int] = set()
    fixed = True
    for rid, rule in enumerate(prep.program.rules):
        if not rule.body:
            fixed = fixed and not any(_has_now(a) for a in rule.head.args)
            continue
        if not _mentions_now(rule):
            continue
        watch = _watch(rid, rule)
        if watch is None:
            moving.add(rid)
        else:
            watches.append(watch)
    found = prep.clock = Clockwork(tuple(watches), frozenset(moving), fixed, {})
    return found


def _watch(rid: int, rule: Rule) -> Watch | None:
    """The rule's watch, None if it uses `$now` other than in linear filters."""
    if any(_has_now(a) for a in rule.head.args):
        return None
    positions: list[int] = []
    for i, lit in enumerate(rule.body):
        if isinstance(lit, Comparison):
            if _has_now(lit.left) or _has_now(lit.right):
                if _has_aggregate(lit.left) or _has_aggregate(lit.right):
                    return None
                if not (_linear(lit.left) and _linear(lit.right)):
                    return None
                positions.append(i)
            elif _aggregate_mentions_now(lit.left) or _aggregate_mentions_now(lit.right):
                return None
        elif _literal_mentions_now(lit):
            return None
    plan = plan_rule(rule, rid)
    for step in plan.steps:
        if isinstance(step, Assign) and step.pos in positions:
            return None  # `X = $now ...` binds X: a value, not a filter
        if isinstance(step, AggStep) and _has_now(step.aggregate):
            return None
    if not all(any(isinstance(s, Filter) and s.pos == p for s in plan.steps) for p in positions):
        return None
    filters = tuple(rule.body[p] for p in positions)
    names: list[str] = []
    for f in filters:
        assert isinstance(f, Comparison)
        for v in _vars(f.left) + _vars(f.right):
            if v not in names:
                names.append(v)
    body = tuple(lit for i, lit in enumerate(rule.body) if i not in positions)
    relaxed = Rule(Atom("__clock", tuple(Var(v) for v in names)), body, rule.span)
    reads = frozenset(name for lit in body for name in _literal_relations(lit))
    deep = {name for lit in body for name in list(_literal_relations(lit))[isinstance(lit, Atom) :]}
    return Watch(rid, filters, tuple(names), relaxed, reads, reads - deep)  # type: ignore[arg-type]


def horizon(model: Model, keep: Horizon | None = None, touched: Iterable[str] = ()) -> Horizon:
    """The model's horizon (cached on the model). With `keep`, reuse its
    instants for watches that read none of the `touched` relations, and,
    where `touched` says tuple by tuple how those relations changed
    (incremental.Changes), maintain them for the others (`_maintain`)."""
    if keep is None and model.horizon is not None:
        found: Horizon = model.horizon
        return found
    work = clockwork(model.prepared)
    changed = set(touched)
    instants: dict[int, list[Instant]] = {}
    at: dict[int, dict[Instant, list[tuple[Any, ...]]]] = {}
    unknown: set[int] = set(work.moving)
    for watch in work.watches:
        if keep is not None and watch.reads.isdisjoint(changed) and watch.rule not in keep.moving:
            if watch.rule in keep.instants:
                instants[watch.rule] = keep.instants[watch.rule]
                at[watch.rule] = keep.at[watch.rule]
            continue
        try:
            if keep is not None and watch.rule not in keep.moving and _maintainable(watch, touched):
                assert isinstance(touched, Changes)
                xs, found_at = _maintain(work, watch, model, keep, touched)
            else:
                found_at = _instants(watch, work.run(watch, model))
                xs = sorted(found_at)
        except (TypeError, ZeroDivisionError, ArithmeticError):
            unknown.add(watch.rule)  # the evaluation fails or compares symbols: no reuse
            continue
        if found_at:
            instants[watch.rule] = xs
            at[watch.rule] = found_at
    if not work.fixed:
        unknown.add(-1)
    lo, hi = _around(model.now, instants.values())
    found = model.horizon = Horizon(model.now, instants, frozenset(unknown), at, lo, hi)
    return found


def _around(now: int, lists: Iterable[list[Instant]]) -> tuple[Instant, Instant]:
    """The newest instant at or before `now` and the oldest at or after it,
    over sorted lists of instants (-inf and inf where there is none)."""
    lo: Instant = float("-inf")
    hi: Instant = float("inf")
    for xs in lists:
        i = bisect_right(xs, now)  # xs[:i] <= now
        if i:
            lo = max(lo, xs[i - 1])
        j = bisect_left(xs, now)  # xs[j:] >= now
        if j < len(xs):
            hi = min(hi, xs[j])
    return lo, hi


def _maintainable(watch: Watch, touched: Iterable[str]) -> bool:
    """Whether the relations `touched` changed tuple by tuple where `watch`
    reads them, and only through positive atoms (what `_maintain` follows)."""
    if not isinstance(touched, Changes):
        return False
    changed = watch.reads & touched
    return changed <= watch.plain and changed.isdisjoint(touched.unknown)


def _maintain(
    work: Clockwork, watch: Watch, model: Model, keep: Horizon, changes: Changes
) -> tuple[list[Instant], dict[Instant, list[tuple[Any, ...]]]]:
    """`keep`'s instants of `watch` after `changes`, in work proportional to
    them: the bindings that the tuples gained admit are added (the relaxed
    body's delta variants over them), those that only the tuples lost
    admitted are dropped (candidates from the delta variants over the model
    with the lost tuples put back, less those the body still admits: as
    incremental.py deletes). `keep` is left as it was (another model may
    share it)."""
    rels = model.rels
    gained: dict[str, set[Any]] = {}
    lost: dict[str, set[Any]] = {}
    for r in watch.reads & changes:
        rel = rels.get(r)
        if rel is None:
            continue
        more = {t for t in changes.grown.get(r, ()) if t in rel.stable}
        less = {t for t in changes.removed.get(r, ()) if t not in rel.stable}
        if more:
            gained[r] = more
        if less:
            lost[r] = less
    atoms = [(p, lit.relation) for p, lit in enumerate(watch.relaxed.body) if isinstance(lit, Atom)]
    added: set[tuple[Any, ...]] = set()
    for p, r in atoms:
        if r in gained:
            view = dict(rels)
            view[r] = Layer(rels[r])
            view[r].recent = gained[r]
            added |= work.run(watch, model, p, view)
    dropped: set[tuple[Any, ...]] = set()
    if lost:
        old = dict(rels)
        for r, tuples in lost.items():
            old[r] = Layer(rels[r])
            old[r].insert(tuples)
        for p, r in atoms:
            if r in lost:
                old[r].recent = lost[r]
                dropped |= work.run(watch, model, p, old)
                old[r].recent = ()
        dropped -= work.admitted(watch, model, dropped)
    xs = list(keep.instants.get(watch.rule, ()))
    at = dict(keep.at.get(watch.rule, {}))
    for x in _instants(watch, dropped):
        held = at.get(x)
        if held is None:
            continue
        left = [b for b in held if b not in dropped]
        if left:
            at[x] = left
        else:
            del at[x]
            del xs[bisect_left(xs, x)]
    for x, bs in _instants(watch, added).items():
        held = at.get(x)
        if held is None:
            at[x] = bs
            insort(xs, x)
        else:
            new = [b for b in bs if b not in held]
            if new:
                at[x] = held + new
    return xs, at


def refresh(model: Model, touched: Iterable[str]) -> None:
    """Bring a computed horizon up to date after facts changed the `touched`
    relations in place (one not computed yet is computed when first asked for)."""
    if model.horizon is not None:
        horizon(model, model.horizon, touched)


def advance(model: Model, t: int, limits: Limits | None = None) -> Model:
    """The model at `now = t`: where `model`'s horizon holds at `t`, a new one
    sharing every relation; otherwise `model` itself moved in place if no
    overlay over it is alive, else a new one that copies a relation before
    it changes it, so `model` and the overlays over it (earlier decisions'
    lazy proofs) stay as they are."""
    if model.base is not None:
        raise ValueError("cannot move an overlay")
    old = horizon(model)
    held = old.holds(t)
    if not held and not clockwork(model.prepared).fixed:
        raise ValueError("program facts mention `$now`: evaluate anew at the new `now`")
    before = model.now
    if held or model.overlays:
        moved = Model(model.prepared, dict(model.rels), t, model.limits)
        moved.rounds, moved.inexact = dict(model.rounds), set(model.inexact)
        if held:  # the same tuples and notes, read at `t`
            moved.horizon = Horizon(t, old.instants, old.moving, old.at, old.lo, old.hi)
            return moved
        moved.borrowed = set(model.rels)
    else:  # nothing reads `model` but its owner: move it in place
        moved = model
        model.now = t
    crossed = old.crossed(t)
    heads = model.prepared.heads
    touched = recompute(
        moved,
        {heads[r] for r, b in crossed.items() if b is None},
        limits,
        {r: b for r, b in crossed.items() if b is not None},
        before,
    )
    moved.borrowed = set()  # nothing is written after the move: what is still shared stays shared
    horizon(moved, old, touched)
    return moved


# ---------------------------------------------------------------- instants


def _instants(watch: Watch, bindings: set[tuple[Any, ...]]) -> dict[Instant, list[tuple[Any, ...]]]:
    """Where any filter of `watch` may flip, over `bindings`: instant -> the
    bindings that may flip there."""
    out: dict[Instant, list[tuple[Any, ...]]] = {}
    for b in bindings:
        env = dict(zip(watch.names, b))
        for f in watch.filters:
            d0 = _value(f.left, env, 0) - _value(f.right, env, 0)
            d1 = _value(f.left, env, 1) - _value(f.right, env, 1)
            slope = d1 - d0
            if slope == 0:
                continue
            x: Instant
            if isinstance(d0, int) and isinstance(slope, int):
                q, r = divmod(-d0, slope)
                x = q if r == 0 else Fraction(-d0, slope)
            else:
                x = -d0 / slope
            out.setdefault(x, []).append(b)
    return out


def _value(term: Term, env: dict[str, Any], now: int) -> Any:
    return evaluate(term, env, now)


# ---------------------------------------------------------------- syntax


def _has_now(term: Any) -> bool:
    """`$now` occurs in `term`, inside its aggregates too."""
    return any(isinstance(t, Now) for t in subterms(term, True))


def _literal_mentions_now(lit: Literal) -> bool:
    return any(_has_now(t) for t in literal_terms(lit))


def _mentions_now(rule: Rule) -> bool:
    return any(_has_now(a) for a in rule.head.args) or any(_literal_mentions_now(lit) for lit in rule.body)


def _has_aggregate(term: Any) -> bool:
    return any(isinstance(t, Aggregate) for t in subterms(term))


def _aggregate_mentions_now(term: Any) -> bool:
    return any(isinstance(t, Aggregate) and _has_now(t) for t in subterms(term))


def _linear(term: Any) -> bool:
    """`$now` occurs only under `+` and `-` (so L - R moves with slope +-k)."""
    if isinstance(term, BinOp):
        if term.op in ("+", "-"):
            return _linear(term.left) and _linear(term.right)
        return not (_has_now(term.left) or _has_now(term.right))
    return not (isinstance(term, COMPOUND) and _has_now(term))


def _vars(term: Any) -> list[str]:
    return list(var_names(term, True))


def _literal_relations(lit: Literal) -> Iterable[str]:
    """The relations a literal reads: its own, and those of the aggregates in
    its terms (nested ones too)."""
    if isinstance(lit, (Atom, Negation)):
        yield lit.relation if isinstance(lit, Atom) else lit.atom.relation
    for term in literal_terms(lit):
        for t in subterms(term, True):
            if isinstance(t, Aggregate):
                for inner in t.body:
                    if isinstance(inner, (Atom, Negation)):
                        yield inner.relation if isinstance(inner, Atom) else inner.atom.relation

"""The gate: a request passes iff some permit holds and no forbid does.

The gate keeps one warm model per store revision and checks each request in
a scratch overlay of it (`overlay(model, request facts, now=now)`), brought
up to date only where the decision reads, so a check costs work
proportional to the request. The warm model serves every `now` within its
horizon (engine/clock.py: no `$now` comparison of the model can decide
differently there), and a decision every `now` within the horizon of the
rules it reads (`Horizon.holds_for`: a lease expiring changes what the
state projection shows, not what a decision reads); a `now` beyond it moves the model,
re-deciding only the comparisons the move crossed (a copy sharing the
relations the move leaves unchanged, so earlier decisions keep theirs),
unless the move would cross many: a decision at a jump of the clock is made
on demand over the warm model instead (jump.py).
Revisions that add only log events (decisions) keep the model warm; new
facts extend it in place, a purge retracts what it removed in place
(engine/incremental.py: deletion is incremental too). A gate with
`snapshot=True` starts from the snapshot of the warm model a previous process
wrote, when it matches the store and the policy (gate/snapshot.py). Proofs
are built when first asked for. Any exception while evaluating
denies, with the error as data: the gate never silently allows, and never
raises for a policy outcome.
"""

from __future__ import annotations

import os
import time
from bisect import bisect_right
from collections import OrderedDict
from dataclasses import replace
from functools import cached_property, partial
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TypeVar

from ..diagnostics import GateError, StaleEpochError, arity_message, diagnostic_of
from ..engine import GATE_DEADLINE_S, Limits, evaluate, extend, overlay, prepared, retract, warm, why, why_not
from ..engine.clock import advance, clockwork, horizon, refresh
from ..engine.heap import paused, settle
from ..facts import FACT_KINDS, Event, RevisionMoved, Store, decision_event
from ..rules.checked import CheckedProgram
from ..values import Facts
from .decision import ERROR, FLAG, FORBID, MISSING_PERMIT, Decision, Reason, error_pair
from .guard import GuardResult, Guarded, guard
from .jump import Jumps
from .layers import Layers
from .request import REQUEST_RELATIONS, Request, request_relations
from .snapshot import read_snapshot, snapshot_path, write_snapshot

__all__ = ["Gate", "GATE_RELATIONS", "OWNER_CLOCK", "SERVER_CLOCK", "LOG_TRIES", "REQUEST_TUPLES"]

GATE_RELATIONS = ("permit", "forbid")  # what a policy derives for the gate to decide on
OWNER_CLOCK = "owner"  # a decision's `clock` when its caller (the library, the CLI) gave `now`
SERVER_CLOCK = "server"  # when the server's clock did
LOG_TRIES = 4  # decisions made again when the facts moved before they were logged
MOVED = "revision-moved"  # the denial of an allow the store kept moving under

# events and the fence they are written under (`Store.append_each`)
Batch = tuple[Sequence[Event], tuple[str, int] | None]

T = TypeVar("T")
_WARM = 4  # warm models kept (one per revision)
_CHANGES = (*FACT_KINDS, "purge")  # the events that change a model
SNAPSHOT_WORTH_S = 0.2  # `snapshot_due` once this much work would be saved by writing one
# the tuples one request's own evaluation (its overlay) may derive: a request
# deriving millions would hold the interpreter for seconds as they are made
# and again as they are freed (C code holding the GIL: every other thread,
# /health too, waits), while the store's own evaluations keep the engine's limit
REQUEST_TUPLES = 250_000


def _moved(decision: Decision) -> Decision:
    """An allow the store kept moving under, denied (fail closed)."""
    reason = Reason(MOVED, "the facts kept changing before the decision could be logged", ERROR)
    return replace(decision, allowed=False, reasons=decision.reasons + (reason,))


def _rows(model: Any, relation: str, key: str) -> list[tuple[Any, ...]]:
    """The tuples of `relation` whose first argument is `key`, sorted (by
    the index on it, as `model.query` would: this runs on every decision)."""
    rel = model.rels.get(relation)
    if rel is None:
        return []
    if rel.arity == 1:
        return [(key,)] if (key,) in rel.stable else []
    return sorted(rel.index((0,)).get(key, ()))


class Gate:
    """`Gate(policy, store).check(request, now) -> Decision`."""

    def __init__(
        self,
        policy: CheckedProgram,
        store: Store,
        *,
        limits: Limits | None = None,
        snapshot: bool | str | os.PathLike[str] = False,
        eager: bool = True,
        settle: bool = False,
        build_deadline: bool = False,
    ) -> None:
        """`limits` bound each evaluation the gate runs; the default keeps the
        engine's tuple and round limits and adds a deadline of
        GATE_DEADLINE_S seconds, so a decision always ends (a request that
        makes the rules diverge is denied with `limit_exceeded`), and a
        request's own evaluation (its overlay) derives at most
        REQUEST_TUPLES tuples (`request_limits`). Building
        the warm model of the store's facts, which no request takes part in,
        is bounded by the tuple and round limits but not by the deadline: it
        grows with the store (about 25 s at 1M facts), and a gate whose
        build the deadline cut short would build again on every decision
        and never decide. `build_deadline=True` (a command that decides once,
        under its own deadline) bounds the build by the deadline too: the
        decision is then denied with `limit_exceeded` in time.

        `snapshot=True` starts from the store's snapshot (gate/snapshot.py:
        beside a SQLite file, in the cache directory for PostgreSQL) when it
        matches the store and policy, and `save_snapshot` writes one there;
        a path names another file; False (the default) uses none.

        `eager` (the default) builds every index and compiles every round
        that overlays may need whenever the warm model changes, so the first
        checks cost what later ones do; `eager=False` (a command that decides
        once) leaves each to the first overlay that needs it.

        `settle=True` (a long-running gate: `ordinance serve`) runs a full
        garbage collection right after it builds or restores a warm model,
        so the collector's first walk of the model is part of building it,
        not a stall of some later decision (half a second at 100k facts; see
        engine/heap.py)."""
        for rel in GATE_RELATIONS:
            if rel not in policy.relations:
                raise GateError(f'policy has no `{rel}` relation; include "continuity"')
        self.policy = policy
        self.store = store
        self.limits = limits if limits is not None else Limits(deadline=GATE_DEADLINE_S)
        self._warm: OrderedDict[int, Any] = OrderedDict()
        self._fact_revision = -1  # newest revision whose facts the cache reflects
        self._seen_revision = -1  # newest revision known to have those same facts
        self._generation = 0  # bumped whenever a warm model changes in place
        self._changes: list[int] = []  # seqs of the fact-changing events up to _changes_upto (replay)
        self._changes_upto = 0
        self._purged: set[int] | None = None  # the seqs purged up to _seen_revision, once a purge was seen
        self._flags = "flag" in policy.relations
        self._wanted = frozenset(GATE_RELATIONS + (("flag",) if self._flags else ()))  # what a decision reads
        # the relations a request's facts can fill: what overlays add to a warm model
        self.request_relations = request_relations(policy)
        self._request_names = tuple(self.request_relations)
        if snapshot is True:
            self.snapshot_path: Path | None = snapshot_path(store)
        else:
            self.snapshot_path = Path(snapshot) if snapshot else None
        self.unsaved_s = 0.0  # seconds spent building or updating models a snapshot would save
        self.restored_from: int | None = None  # the revision of the snapshot this gate started from
        self.eager = eager
        self._settle = settle
        self._build_limits = self.limits if build_deadline else replace(self.limits, deadline=None)
        tuples = self.limits.max_tuples
        self.request_limits = replace(self.limits, max_tuples=min(tuples or REQUEST_TUPLES, REQUEST_TUPLES))
        self._restore_s = 0.0  # how long reading the snapshot took
        self.jumps = Jumps(policy, frozenset(self.request_relations), self._flags, self.limits)

    @cached_property
    def _read(self) -> frozenset[int]:
        """The ids of the rules a decision reads: those of the strata its
        relations depend on."""
        prep = prepared(self.policy)
        return frozenset(rid for i in prep.needed(self._wanted) for rid in prep.strata[i].rules)

    @cached_property
    def layers(self) -> Layers:
        """The policy's privacy layers; the gate writes its decisions and
        `guard`'s receipts in their default layer."""
        return Layers.of(self.policy)

    # ---------------------------------------------------------------- models

    def _current_revision(self) -> int:
        """The store revision; new facts since the last look extend the warm
        models in place, purged ones are retracted (work proportional to what
        changed)."""
        rev = self.store.revision()
        if rev == self._seen_revision:
            return rev
        if self._seen_revision < 0:
            self._warm.clear()
            self._fact_revision = rev
            if self.snapshot_path is not None:
                self._restore(rev)
        if self._seen_revision >= 0:
            started = time.perf_counter()
            events = self.store.events(self._seen_revision, rev, _CHANGES)
            purges = {int(s) for e in events if e.kind == "purge" for s in e.args}
            asserted: dict[str, set[tuple[Any, ...]]] = {}
            for e in events:
                if e.kind in FACT_KINDS and e.seq not in purges:
                    asserted.setdefault(e.relation, set()).add(tuple(e.args))
            if purges:
                self._purge(sorted(purges), asserted, rev)
            elif asserted:
                self._extend(asserted, rev)
            if self._warm:
                self.unsaved_s += time.perf_counter() - started
        self._seen_revision = rev
        return rev

    def _ready(self, model: Any, built: bool = False) -> None:
        """After a warm model was built (or restored) or changed."""
        if self.eager:
            warm(model, self._request_names)
        if built and self._settle:
            settle()

    def _restore(self, rev: int) -> None:
        """Start from the snapshot if it matches the store at some revision
        up to `rev` (the caller then extends it to `rev`)."""
        assert self.snapshot_path is not None
        started = time.perf_counter()
        found = read_snapshot(
            self.snapshot_path, self.store, prepared(self.policy), self.policy.source_hash, rev, self.limits
        )
        if found is None:
            return
        model, at = found
        self._ready(model, built=True)
        self._restore_s = time.perf_counter() - started
        self._warm[at] = model
        self._fact_revision = self._seen_revision = self.restored_from = at

    def restored(self) -> bool:
        """Whether the warm model of the store's newest revision is at hand
        from the snapshot (restored, and extended to that revision), so a
        question it answers costs no evaluation of the whole store."""
        self._current_revision()
        return self.restored_from is not None and self._fact_revision in self._warm

    def save_snapshot(self) -> bool:
        """Write the newest warm model to the snapshot file (see
        gate/snapshot.py); False if there is none to write or it cannot be."""
        model = self._warm.get(self._fact_revision)
        if self.snapshot_path is None or model is None:
            return False
        if clockwork(model.prepared).fixed:
            horizon(model)  # so the next gate moves it to its `now` without working it out
        if not write_snapshot(self.snapshot_path, self.store, model, self.policy.source_hash, self._fact_revision):
            return False
        self.unsaved_s = 0.0
        return True

    @property
    def snapshot_due(self) -> bool:
        """Whether writing a snapshot now would spare the next fresh gate at
        least SNAPSHOT_WORTH_S seconds of building or updating its model, and
        more than reading the snapshot it started from took (writing costs
        about as much again)."""
        return self.snapshot_path is not None and self.unsaved_s >= max(SNAPSHOT_WORTH_S, self._restore_s)

    def _purge(self, seqs: list[int], asserted: dict[str, set[tuple[Any, ...]]], rev: int) -> None:
        """Retract what purged events asserted (unless another event still
        does) from the warm models, then add the `asserted` facts; incremental
        both ways."""
        if self._purged is None:  # read once; then each purge adds its own (not every purge event again)
            self._purged = self.store.purged(rev)
        self._purged.update(seqs)
        gone: dict[str, set[tuple[Any, ...]]] = {}
        for e in self.store.events_at(seqs):
            if e.kind in FACT_KINDS and not self.store.asserting(e.relation, e.args, rev, purged=self._purged):
                gone.setdefault(e.relation, set()).add(tuple(e.args))
        self._generation += 1
        kept: OrderedDict[int, Any] = OrderedDict()
        for r, model in self._warm.items():
            if r == self._fact_revision:
                refresh(model, retract(model, gone))
                kept[rev] = model
        self._warm = kept
        self._fact_revision = rev
        if asserted:
            self._extend(asserted, rev)
        for model in self._warm.values():
            self._ready(model)

    def _extend(self, asserted: dict[str, set[tuple[Any, ...]]], rev: int) -> None:
        self._generation += 1
        kept: OrderedDict[int, Any] = OrderedDict()
        for r, model in self._warm.items():
            if r == self._fact_revision:
                refresh(model, extend(model, asserted))
                self._ready(model)  # a recomputed stratum drops its indexes
                kept[rev] = model
        self._warm = kept
        self._fact_revision = rev

    def _cached(self, revision: int) -> tuple[int, Any]:
        """The key of the warm model of the store at `revision`, and the model (None if not warm)."""
        if revision > self._seen_revision:
            self._current_revision()
        same = self._fact_revision <= revision <= self._seen_revision
        key = self._fact_revision if same else revision
        return key, self._warm.get(key)

    def model(self, revision: int, now: int) -> Any:
        """The warm model of the store at `revision`, moved to `now` if its
        horizon does not reach it (the overlay evaluates at `now` either way)."""
        key, model = self._cached(revision)
        if model is not None and model.now != now and not horizon(model).holds(now):
            try:  # earlier decisions keep the model they were made on
                if not clockwork(model.prepared).fixed:
                    raise LookupError("program facts mention `$now`")
                started = time.perf_counter()
                model = self._warm[key] = advance(model, now)
                self._ready(model)
                if key == self._fact_revision:
                    self.unsaved_s += time.perf_counter() - started
            except Exception:  # evaluate anew (and report the error from there)
                del self._warm[key]
                model = None
        if model is None:
            started = time.perf_counter()
            with paused():  # decoding the facts makes as many tuples as evaluating them
                facts = self.store.facts(revision)
            # the store's work, not a request's: no deadline unless `build_deadline` (see __init__)
            model = evaluate(self.policy, facts, now=now, limits=self._build_limits)
            model.limits = self.limits  # what it is then asked (overlays, moves, new facts) has the deadline
            self._ready(model, built=True)  # the first checks are as fast as later ones
            self._warm[key] = model
            if key == self._fact_revision:
                self.unsaved_s += time.perf_counter() - started
            while len(self._warm) > _WARM:
                self._warm.popitem(last=False)
        else:
            self._warm.move_to_end(key)
        return model

    def overlay(
        self, request: Request | None, now: int, revision: int | None = None, *, given: Facts | None = None
    ) -> Any:
        """A scratch model: the warm model plus the request's facts, at `now`
        (the model a decision is made on; `why(model, "forbid", t)` explains
        it). `given` adds facts of other relations beside them, as if stored
        (what `ordinance why --given` asks about)."""
        rev = self._current_revision() if revision is None else revision
        facts = self._facts(request)
        for rel, rows in (given or {}).items():
            facts[rel] = facts[rel] | rows if rel in facts else rows
        return overlay(self.model(rev, now), facts, self.request_limits, now=now)

    def _facts(self, request: Request | None) -> dict[str, Any]:
        """The request's facts, of the request-side relations this policy reads."""
        facts = {} if request is None else request.facts()
        for rel, rows in list(facts.items()):
            arity = self.request_relations.get(rel)
            if arity is None and rel in REQUEST_RELATIONS:  # a stdlib field this policy never reads
                del facts[rel]
                continue
            if arity is None:
                raise GateError(f"`{rel}` is not a request-side relation of this policy")
            for row in rows:
                if len(row) != arity:
                    raise GateError(arity_message(rel, len(row), arity))
        return facts

    # ---------------------------------------------------------------- deciding

    def decide(self, request: Request, now: int, *, revision: int | None = None) -> Decision:
        """The decision for `request` at `now` (and `revision`, default the
        newest), without logging it."""
        rev = -1 if revision is None else revision
        digest = self.policy.source_hash
        try:
            if revision is None:
                rev = self._current_revision()
            facts = self._facts(request)
            key, warm = self._cached(rev)
            # where the clock moved only what the decision does not read, the warm model stays where it is;
            # a `now` far from its horizon is decided on demand, not by moving it (jump.py)
            held = warm is not None and (warm.now == now or horizon(warm).holds_for(now, self._read))
            if held:
                self._warm.move_to_end(key)  # (the newest used is the last evicted, as in `model`)
            model = None if held else self.jumps.model(warm, facts, request.id, now)
            if model is None:  # (brought up to date only where the gate's relations read)
                base = warm if held else self.model(rev, now)
                model = overlay(base, facts, self.request_limits, now=now, wanted=self._wanted)
            forbids = _rows(model, "forbid", request.id)
            permits = _rows(model, "permit", request.id)
            flags = _rows(model, "flag", request.id) if self._flags else []
            reasons: list[Reason] = []
            noted: tuple[Reason, ...] = ()
            if forbids or flags or not permits:  # most checks have no reason to give
                prove = partial(self._prove, model, self._generation, request, now, rev)
                reasons = [Reason(str(t[1]), str(t[2]), FORBID, partial(prove, why, "forbid", t)) for t in forbids]
                if not permits:
                    reasons.append(
                        Reason(
                            "no-grant",
                            request.authority_scope,
                            MISSING_PERMIT,
                            partial(prove, why_not, "permit", (request.id,)),
                        )
                    )
                noted = tuple(Reason(str(t[1]), str(t[2]), FLAG, partial(prove, why, "flag", t)) for t in flags)
        except Exception as exc:  # an error denies, as data
            code, message = error_pair(exc)
            return Decision(
                request, False, (Reason(code, message, ERROR),), rev, digest, now, errors=(diagnostic_of(exc),)
            )
        return Decision(request, bool(permits) and not forbids, tuple(reasons), rev, digest, now, flags=noted)

    def _prove(
        self,
        model: Any,
        generation: int,
        request: Request,
        now: int,
        rev: int,
        explain: Callable[..., Any],
        relation: str,
        t: tuple[Any, ...],
    ) -> Any:
        """A proof from the decision's scratch model, or, if the warm model
        has been extended since, from a fresh one at the decision's revision."""
        if generation != self._generation:
            model = self.overlay(request, now, rev)
        return explain(model, relation, t)

    def check(self, request: Request, now: int, *, clock: str = OWNER_CLOCK) -> Decision:
        """Decide and append the decision to the store's decision log (`log`)."""
        return self.log([(request, now)], clock=clock)[0]

    def logged(self, decision: Decision, source: str = "gate") -> Event:
        """The event `log` logs `decision` as: by the gate, for the
        request's agent, in the policy's default layer."""
        return decision_event(
            decision.payload(), source=source, author=decision.request.agent, layer=self.layers.default
        )

    def log(self, asks: Sequence[tuple[Request, int]], *, clock: str = OWNER_CLOCK) -> list[Decision]:
        """Decide each (request, now) and log the decisions in one append (a
        group commit), in order, with consecutive seqs: the one way a
        decision is logged (see `log_then`)."""
        return self.log_then(asks, clock=clock)[0]

    def log_then(
        self,
        asks: Sequence[tuple[Request, int]],
        *,
        clock: str | Sequence[str] = OWNER_CLOCK,
        then: Callable[[list[Decision]], Sequence[Batch]] | None = None,
        shown: Callable[[Decision, dict[str, Any]], dict[str, Any]] | None = None,
    ) -> tuple[list[Decision], list[int | StaleEpochError]]:
        """`log`, and the fenced batches `then` makes of the decisions (an
        intent receipt) appended in the same transaction; their revisions,
        or the StaleEpochError of each one its fence refused. `shown` makes
        the logged payload of a decision and its payload (a host marks an
        ask, keeps file contents as digests).

        A decision is logged only against the facts it was decided on: the
        append checks in its transaction that no fact or purge event was
        committed after the revision the allowed decisions were made at
        (another process's write, a stop); if one was, the gate decides
        again, up to LOG_TRIES times, and then logs every allow it could
        not pin as a denial (`revision-moved`)."""
        clocks = [clock] * len(asks) if isinstance(clock, str) else list(clock)
        if len(clocks) != len(asks):
            raise GateError("give one clock per ask")
        for attempt in range(LOG_TRIES + 1):
            decisions = [replace(self.decide(r, n), clock=c) for (r, n), c in zip(asks, clocks)]
            if not decisions:
                return [], []
            if attempt == LOG_TRIES:  # the store kept moving: nothing allowed rests on a stale read
                decisions = [_moved(d) if d.allowed else d for d in decisions]
            pinned = [d.revision for d in decisions if d.allowed]
            after = list(then(decisions)) if then is not None else []  # (before `shown`: it may note what it saw)
            logged = [self.logged(d) for d in decisions]
            if shown is not None:
                logged = [replace(e, payload=shown(d, dict(e.payload or {}))) for d, e in zip(decisions, logged)]
            batches: list[Batch] = [(logged, None), *after]
            try:
                seqs = self.store.append_each(batches, unchanged_since=min(pinned) if pinned else None)
            except RevisionMoved:
                continue
            last = seqs[0]
            assert isinstance(last, int)  # an unfenced batch is never refused
            first = last - len(decisions) + 1
            if first == self._seen_revision + 1 and len(seqs) == 1:  # only our decisions were added: no new facts
                self._seen_revision = last
            return [replace(d, seq=first + n) for n, d in enumerate(decisions)], seqs[1:]
        raise AssertionError("unreachable")  # the last attempt logs without a pinned allow

    def replay(
        self, logged: Event | Mapping[str, Any], *, revision: int | None = None, what_if: bool = False
    ) -> Decision:
        """Decide a logged decision (its event or payload) again, from its
        request and `now`, over the store at its revision, or at `revision`
        (the decision made again reports that revision); nothing is logged.

        Under this gate's policy, which must be the one the decision was
        made under, unless `what_if`: then it is what this policy would
        have decided (see `replay_log`, which replays the whole log)."""
        payload = logged.payload if isinstance(logged, Event) else logged
        if payload is None:
            raise GateError("the event carries no decision payload")
        if not what_if and payload.get("policy_hash") != self.policy.source_hash:
            raise GateError(
                f"decision was made under policy `{str(payload.get('policy_hash'))[:12]}`, "
                f"this gate runs `{self.policy.source_hash[:12]}` (what_if=True compares them)"
            )
        if revision is not None and (type(revision) is not int or not 0 <= revision <= self._seen_revision):
            self.store.as_of(revision)  # refuses a revision not in the log
        rev = int(payload["revision"]) if revision is None else revision
        request = Request.from_json(payload["request"])
        decision = self.decide(request, int(payload["now"]), revision=self._last_change(rev))
        clock = None if payload.get("clock") is None else str(payload["clock"])  # whose clock it was, as logged
        return replace(decision, revision=rev, clock=clock)

    def _last_change(self, revision: int) -> int:
        """The newest revision <= `revision` whose event changed the facts
        (a fact event or a purge; 0 if none): the store holds the same facts
        at both, so the decisions logged between two changes are replayed
        on one warm model (per `now`). The log below `revision` never changes."""
        if revision > self._changes_upto:
            kinds = FACT_KINDS + ("purge",)
            self._changes += [e.seq for e in self.store.events(self._changes_upto, revision, kinds)]
            self._changes_upto = revision
        i = bisect_right(self._changes, revision)
        return self._changes[i - 1] if i else 0

    def guard(
        self,
        request: Request,
        effect: Callable[[], T],
        now: int,
        *,
        resource: str | None = None,
    ) -> GuardResult[T]:
        """check -> intent receipt -> effect -> outcome receipt, fenced at
        `resource` (default: the request's target); see guard.py."""
        return guard(self, request, effect, now, resource=resource)

    def guarded(
        self, request: Request | Callable[..., Request], now: int | None = None, *, resource: str | None = None
    ) -> Guarded:
        """`guard` as a decorator or a context manager, fenced the same way:

            with gate.guarded(request, now):       # raises Blocked if denied
                push()
            @gate.guarded(lambda branch: Request(...))
            def push(branch): ...

        `request` may be a function of the decorated function's arguments;
        `now` defaults to the wall clock when the check runs."""
        return Guarded(self, request, now, resource)

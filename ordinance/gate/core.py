"""The gate: a request passes iff some permit holds and no forbid does.

`Gate(policy, store)` decides, overlays, checks (decides and logs) and
replays. Each request is decided in a scratch overlay of the warm model of
the store's revision (`Warm.decision_model`, warm.py: one model per
revision, kept current in place, moved along the clock or decided on
demand at a jump, restored from and saved to a snapshot), brought up to
date only where the decision reads, so a check costs work proportional to
the request. `Gate.log` is the one way a decision is logged: decided,
appended in one group commit against the facts it was decided on, and
returned with its seq. Proofs are built when first asked for. Any exception
while evaluating denies, with the error as data: the gate never silently
allows, and never raises for a policy outcome.
"""

from __future__ import annotations

import os
from dataclasses import replace
from functools import cached_property, partial
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TypeVar

from ..diagnostics import GateError, StaleEpochError, arity_message, diagnostic_of
from ..engine import GATE_DEADLINE_S, Limits, Model, overlay, why, why_not
from ..facts import Event, RevisionMoved, Store, decision_event
from ..rules.checked import CheckedProgram
from ..values import Facts
from .decision import ERROR, FLAG, FORBID, MISSING_PERMIT, Decision, Reason
from .guard import GuardResult, Guarded, guard
from .layers import Layers
from .request import REQUEST_RELATIONS, Request, request_relations
from .snapshot import snapshot_path
from .warm import Warm

__all__ = ["Batch", "Gate", "GATE_RELATIONS", "OWNER_CLOCK", "SERVER_CLOCK", "LOG_TRIES", "REQUEST_TUPLES"]

GATE_RELATIONS = ("permit", "forbid")  # what a policy derives for the gate to decide on
OWNER_CLOCK = "owner"  # a decision's `clock` when its caller (the library, the CLI) gave `now`
SERVER_CLOCK = "server"  # when the server's clock did
LOG_TRIES = 4  # decisions made again when the facts moved before they were logged
MOVED = "revision-moved"  # the denial of an allow the store kept moving under

# events and the fence they are written under (`Store.append_each`)
Batch = tuple[Sequence[Event], tuple[str, int] | None]  # events appended with a decision, and their fence

T = TypeVar("T")
# the tuples one request's own evaluation (its overlay) may derive: a request
# deriving millions would hold the interpreter for seconds as they are made
# and again as they are freed (C code holding the GIL: every other thread,
# /health too, waits), while the store's own evaluations keep the engine's limit
REQUEST_TUPLES = 250_000


def _moved(decision: Decision) -> Decision:
    """An allow the store kept moving under, denied (fail closed)."""
    reason = Reason(MOVED, "the facts kept changing before the decision could be logged", ERROR)
    return replace(decision, allowed=False, reasons=decision.reasons + (reason,))


def _rows(model: Model, relation: str, key: str) -> list[tuple[Any, ...]]:
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
        that overlays may need whenever the warm model changes, and when it
        is built, the policy's rewrite for a jump of the clock (jump.py) and
        the model's horizon, so the first checks and the first jump cost what
        later ones do; `eager=False` (a command that decides
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
        self._flags = "flag" in policy.relations
        self._wanted = frozenset(GATE_RELATIONS + (("flag",) if self._flags else ()))  # what a decision reads
        # the relations a request's facts can fill: what overlays add to a warm model
        self.request_relations = request_relations(policy)
        if snapshot is True:
            path: Path | None = snapshot_path(store)
        else:
            path = Path(snapshot) if snapshot else None
        tuples = self.limits.max_tuples
        self.request_limits = replace(self.limits, max_tuples=min(tuples or REQUEST_TUPLES, REQUEST_TUPLES))
        self.warm = Warm(
            policy,
            store,
            self.limits,
            self.request_limits,
            inputs=tuple(self.request_relations),
            wanted=self._wanted,
            snapshot_path=path,
            eager=eager,
            settle=settle,
            build_deadline=build_deadline,
        )

    @cached_property
    def layers(self) -> Layers:
        """The policy's privacy layers; the gate writes its decisions and
        `guard`'s receipts in their default layer."""
        return Layers.of(self.policy)

    # ---------------------------------------------------------------- models

    def model(self, revision: int, now: int) -> Model:
        """The warm model of the store at `revision`, moved to `now` if its
        horizon does not reach it (the overlay evaluates at `now` either way;
        see warm.py)."""
        return self.warm.model(revision, now)

    def overlay(
        self, request: Request | None, now: int, revision: int | None = None, *, given: Facts | None = None
    ) -> Model:
        """A scratch model: the warm model plus the request's facts, at `now`
        (the model a decision is made on; `why(model, "forbid", t)` explains
        it). `given` adds facts of other relations beside them, as if stored
        (what `ordinance why --given` asks about)."""
        rev = self.warm.revision() if revision is None else revision
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
                rev = self.warm.revision()
            facts = self._facts(request)
            model = self.warm.decision_model(rev, facts, request.id, now)
            forbids = _rows(model, "forbid", request.id)
            permits = _rows(model, "permit", request.id)
            flags = _rows(model, "flag", request.id) if self._flags else []
            reasons: list[Reason] = []
            noted: tuple[Reason, ...] = ()
            if forbids or flags or not permits:  # most checks have no reason to give
                prove = partial(self._prove, model, self.warm.generation, request, now, rev)
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
            error = diagnostic_of(exc)
            reason = Reason(error.code, error.line(), ERROR)
            return Decision(request, False, (reason,), rev, digest, now, errors=(error,))
        return Decision(request, bool(permits) and not forbids, tuple(reasons), rev, digest, now, flags=noted)

    def _prove(
        self,
        model: Model,
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
        if generation != self.warm.generation:
            model = self.overlay(request, now, rev)
        return explain(model, relation, t)

    def check(self, request: Request, now: int, *, clock: str = OWNER_CLOCK) -> Decision:
        """Decide and append the decision to the store's decision log (`log`)."""
        return self.log([(request, now)], clock=clock)[0]

    def _event(self, decision: Decision, source: str) -> Event:
        """The event `log` logs `decision` as: by `source`, for the
        request's agent, in the policy's default layer."""
        return decision_event(
            decision.payload(), source=source, author=decision.request.agent, layer=self.layers.default
        )

    def log(
        self,
        asks: Sequence[tuple[Request, int]],
        *,
        clock: str = OWNER_CLOCK,
        revision: int | None = None,
        source: str = "gate",
    ) -> list[Decision]:
        """Decide each (request, now) and log the decisions in one append (a
        group commit), in order, returned with their consecutive seqs: the
        one way a decision is logged (see `log_then`). `revision` decides
        over the store at that past revision (a scenario's labelled step),
        logged as it stands there; `source` names who logs them."""
        return self.log_then(asks, clock=clock, revision=revision, source=source)[0]

    def log_then(
        self,
        asks: Sequence[tuple[Request, int]],
        *,
        clock: str | Sequence[str] = OWNER_CLOCK,
        then: Callable[[list[Decision]], Sequence[Batch]] | None = None,
        shown: Callable[[Decision, dict[str, Any]], dict[str, Any]] | None = None,
        revision: int | None = None,
        source: str = "gate",
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
        not pin as a denial (`revision-moved`). Decisions at a given past
        `revision` are pinned to nothing: the facts after it are not theirs."""
        clocks = [clock] * len(asks) if isinstance(clock, str) else list(clock)
        if len(clocks) != len(asks):
            raise GateError("give one clock per ask")
        for attempt in range(LOG_TRIES + 1):
            decisions = [replace(self.decide(r, n, revision=revision), clock=c) for (r, n), c in zip(asks, clocks)]
            if not decisions:
                return [], []
            if attempt == LOG_TRIES:  # the store kept moving: nothing allowed rests on a stale read
                decisions = [_moved(d) if d.allowed else d for d in decisions]
            pinned = [d.revision for d in decisions if d.allowed and revision is None]
            after = list(then(decisions)) if then is not None else []  # (before `shown`: it may note what it saw)
            logged = [self._event(d, source) for d in decisions]
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
            if len(seqs) == 1:  # only decisions: no new facts
                self.warm.appended(first, last)
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
        if revision is not None and (type(revision) is not int or not 0 <= revision <= self.warm.seen):
            self.store.as_of(revision)  # refuses a revision not in the log
        rev = int(payload["revision"]) if revision is None else revision
        request = Request.from_json(payload["request"])
        decision = self.decide(request, int(payload["now"]), revision=self.warm.last_change(rev))
        clock = None if payload.get("clock") is None else str(payload["clock"])  # whose clock it was, as logged
        return replace(decision, revision=rev, clock=clock)

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

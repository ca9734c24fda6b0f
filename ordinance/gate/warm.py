"""The gate's warm models: one per store revision, kept current in place.

`Warm(policy, store, ...)` keeps up to WARM_MODELS evaluated models, one per
store revision (the newest used last evicted). Revisions that add only log
events (decisions) keep the model warm; new facts extend it in place, a
purge retracts what it removed in place (engine/incremental.py: deletion
is incremental too). A model serves every `now` within its horizon
(engine/clock.py); a `now` beyond it moves the model, re-deciding only the
comparisons the move crossed (a copy sharing the relations the move leaves
unchanged, so earlier decisions keep theirs), unless the move would cross
many: a decision at a jump of the clock is made on demand over the warm
model instead (`decision_model`, jump.py).

With a snapshot path it starts from the snapshot of the warm model a
previous process wrote, when it matches the store and the policy
(gate/snapshot.py), and `save_if_due` writes one when that would spare the
next process more work than it costs: the one snapshot-save policy of
every caller (a check, `state`, the server).
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections import OrderedDict
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import Any, Sequence

from ..engine import Limits, Model, evaluate, extend, overlay, prepared, prime, retract
from ..engine.clock import advance, clockwork, horizon, refresh
from ..engine.heap import paused, settle
from ..facts import FACT_KINDS, Store
from ..rules.checked import CheckedProgram
from ..values import Facts
from .jump import Jumps
from .snapshot import read_snapshot, write_snapshot

__all__ = ["Warm", "WARM_MODELS", "SNAPSHOT_WORTH_S"]

WARM_MODELS = 4  # warm models kept (one per revision)
CHANGES = (*FACT_KINDS, "purge")  # the events that change a model
SNAPSHOT_WORTH_S = 0.2  # `snapshot_due` once this much work would be saved by writing one


class Warm:
    """One gate's warm models, their snapshot and its jump policy."""

    def __init__(
        self,
        policy: CheckedProgram,
        store: Store,
        limits: Limits,
        request_limits: Limits,
        *,
        inputs: Sequence[str],
        wanted: frozenset[str],
        snapshot_path: Path | None = None,
        eager: bool = True,
        settle: bool = False,
        build_deadline: bool = False,
    ) -> None:
        """`inputs` are the request-side relations (what overlays add),
        `wanted` what a decision reads, `request_limits` what bounds a
        decision's overlay; the other arguments are the Gate's (see
        `Gate.__init__`)."""
        self.policy = policy
        self.store = store
        self.limits = limits
        self.request_limits = request_limits
        self.models: OrderedDict[int, Model] = OrderedDict()
        self._fact_revision = -1  # newest revision whose facts the cache reflects
        self.seen = -1  # newest revision known to have those same facts
        self.generation = 0  # bumped whenever a warm model changes in place
        self._changes: list[int] = []  # seqs of the fact-changing events up to _changes_upto (replay)
        self._changes_upto = 0
        self._purged: set[int] | None = None  # the seqs purged up to `seen`, once a purge was seen
        self._inputs = tuple(inputs)
        self._wanted = wanted
        self.snapshot_path = snapshot_path
        self.unsaved_s = 0.0  # seconds spent building or updating models a snapshot would save
        self.restored_from: int | None = None  # the revision of the snapshot this gate started from
        self.eager = eager
        self._settle = settle
        self._build_limits = limits if build_deadline else replace(limits, deadline=None)
        self._restore_s = 0.0  # how long reading the snapshot took
        self.jumps = Jumps(policy, frozenset(inputs), "flag" in wanted, limits)

    @cached_property
    def _read(self) -> frozenset[int]:
        """The ids of the rules a decision reads: those of the strata its
        relations depend on."""
        prep = prepared(self.policy)
        return frozenset(rid for i in prep.needed(self._wanted) for rid in prep.strata[i].rules)

    def revision(self) -> int:
        """The store revision; new facts since the last look extend the warm
        models in place, purged ones are retracted (work proportional to what
        changed)."""
        rev = self.store.revision()
        if rev == self.seen:
            return rev
        if self.seen < 0:
            self.models.clear()
            self._fact_revision = rev
            if self.snapshot_path is not None:
                self._restore(rev)
        if self.seen >= 0:
            started = time.perf_counter()
            events = self.store.events(self.seen, rev, CHANGES)
            purges = {int(s) for e in events if e.kind == "purge" for s in e.args}
            asserted: dict[str, set[tuple[Any, ...]]] = {}
            for e in events:
                if e.kind in FACT_KINDS and e.seq not in purges:
                    asserted.setdefault(e.relation, set()).add(tuple(e.args))
            if purges:
                self._purge(sorted(purges), asserted, rev)
            elif asserted:
                self._extend(asserted, rev)
            if self.models:
                self.unsaved_s += time.perf_counter() - started
        self.seen = rev
        return rev

    def appended(self, first: int, last: int) -> None:
        """The seqs `first`..`last` were just appended, holding no fact: if
        nothing else was, the warm models stay those of the newest revision."""
        if first == self.seen + 1:
            self.seen = last

    def _ready(self, model: Model, built: bool = False) -> None:
        """After a warm model was built (or restored) or changed."""
        if self.eager:
            prime(model, self._inputs)
            if built:
                self.jumps.prepare(model, self.generation)
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
        self.models[at] = model
        self._fact_revision = self.seen = self.restored_from = at

    def ready(self) -> bool:
        """Whether the warm model of the store's newest revision is at hand
        (restored from the snapshot and extended to that revision, or
        built), so a question it answers costs no evaluation of the whole
        store."""
        self.revision()
        return self._fact_revision in self.models

    def save_snapshot(self) -> bool:
        """Write the newest warm model to the snapshot file (see
        gate/snapshot.py); False if there is none to write or it cannot be."""
        model = self.models.get(self._fact_revision)
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

    def save_if_due(self) -> bool:
        """Write the snapshot if `snapshot_due`; whether it was written. A
        cache: it never raises, and never changes what was answered."""
        if not self.snapshot_due:
            return False
        try:
            return self.save_snapshot()
        except Exception:
            return False

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
        self.generation += 1
        kept: OrderedDict[int, Model] = OrderedDict()
        for r, model in self.models.items():
            if r == self._fact_revision:
                refresh(model, retract(model, gone))
                kept[rev] = model
        self.models = kept
        self._fact_revision = rev
        if asserted:
            self._extend(asserted, rev)
        for model in self.models.values():
            self._ready(model)

    def _extend(self, asserted: dict[str, set[tuple[Any, ...]]], rev: int) -> None:
        self.generation += 1
        kept: OrderedDict[int, Model] = OrderedDict()
        for r, model in self.models.items():
            if r == self._fact_revision:
                refresh(model, extend(model, asserted))
                self._ready(model)  # a recomputed stratum drops its indexes
                kept[rev] = model
        self.models = kept
        self._fact_revision = rev

    def cached(self, revision: int) -> tuple[int, Model | None]:
        """The key of the warm model of the store at `revision`, and the model (None if not warm)."""
        if revision > self.seen:
            self.revision()
        same = self._fact_revision <= revision <= self.seen
        key = self._fact_revision if same else revision
        return key, self.models.get(key)

    def model(self, revision: int, now: int) -> Model:
        """The warm model of the store at `revision`, moved to `now` if its
        horizon does not reach it (the overlay evaluates at `now` either way)."""
        key, model = self.cached(revision)
        if model is not None and model.now != now and not horizon(model).holds(now):
            try:  # earlier decisions keep the model they were made on
                if not clockwork(model.prepared).fixed:
                    raise LookupError("program facts mention `$now`")
                started = time.perf_counter()
                model = self.models[key] = advance(model, now)
                self._ready(model)
                if key == self._fact_revision:
                    self.unsaved_s += time.perf_counter() - started
            except Exception:  # evaluate anew (and report the error from there)
                del self.models[key]
                model = None
        if model is None:
            started = time.perf_counter()
            with paused():  # decoding the facts makes as many tuples as evaluating them
                facts = self.store.facts(revision)
            # the store's work, not a request's: no deadline unless `build_deadline` (see Gate.__init__)
            model = evaluate(self.policy, facts, now=now, limits=self._build_limits)
            model.limits = self.limits  # what it is then asked (overlays, moves, new facts) has the deadline
            self._ready(model, built=True)  # the first checks are as fast as later ones
            self.models[key] = model
            if key == self._fact_revision:
                self.unsaved_s += time.perf_counter() - started
            while len(self.models) > WARM_MODELS:
                self.models.popitem(last=False)
        else:
            self.models.move_to_end(key)
        return model

    def decision_model(self, revision: int, facts: Facts, request_id: str, now: int) -> Model:
        """The scratch model a decision about `request_id` (its `facts`) at
        `now` reads, over the store at `revision`: the warm model plus the
        facts, brought up to date only where the gate's relations read."""
        key, base = self.cached(revision)
        # where the clock moved only what the decision does not read, the warm model stays where it is;
        # a `now` far from its horizon is decided on demand, not by moving it (jump.py)
        held = base is not None and (base.now == now or horizon(base).holds_for(now, self._read))
        if held:
            self.models.move_to_end(key)  # (the newest used is the last evicted, as in `model`)
        model = None if held else self.jumps.model(base, facts, request_id, now, self.generation)
        if model is None:
            on = base if held and base is not None else self.model(revision, now)
            model = overlay(on, facts, self.request_limits, now=now, wanted=self._wanted)
        return model

    def last_change(self, revision: int) -> int:
        """The newest revision <= `revision` whose event changed the facts
        (a fact event or a purge; 0 if none): the store holds the same facts
        at both, so the decisions logged between two changes are replayed
        on one warm model (per `now`). The log below `revision` never changes."""
        if revision > self._changes_upto:
            self._changes += [e.seq for e in self.store.events(self._changes_upto, revision, CHANGES)]
            self._changes_upto = revision
        i = bisect_right(self._changes, revision)
        return self._changes[i - 1] if i else 0

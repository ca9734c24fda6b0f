"""`Projector`: projections of one store under one policy, kept warm.

    projector = Projector(policy, store)            # or Projector(policy, gate=gate)
    state = projector.render("state", now, audience="public", cap=4096)
    print(state.text)

Per audience it keeps the `Sources` (the facts that audience may see, and
their events), following the store as it grows, and the model of the newest
(revision, `now`). With no audience and a gate, it uses the gate's warm
model. `render_state` is the one-call form; a long-running server keeps one
`Projector` and calls `render` on every change.

`model_for(now, request=, given=, audience=, asked=)` is the one choice of
the model a question is asked of (`ordinance why`/`why-not`, the server's
and MCP's query, why and why-not), with the annotator of its proofs.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass
from typing import Any

from ..engine import Limits, Model, Pattern, evaluate, overlay
from ..engine import model_for as demanded_model
from ..engine.clock import horizon
from ..explain import Annotate, annotator, model_annotator
from ..facts import Store
from ..gate import GATE_RELATIONS, Gate, Request
from ..rules.checked import CheckedProgram
from ..gate.layers import Layers
from ..values import Facts
from .render import DEFAULT_CAP, Projection, render_projection
from .sources import Sources

__all__ = ["Answering", "Projector", "render_state"]

_DAY = 86400


@dataclass(frozen=True, slots=True)
class Answering:
    """The model a question is asked of, and the annotator of its proofs'
    leaves (over the same events)."""

    model: Model
    annotate: Annotate


class Projector:
    def __init__(self, policy: CheckedProgram, store: Store | None = None, *, gate: Gate | None = None) -> None:
        if store is None:
            if gate is None:
                raise TypeError("a Projector needs a store or a gate")
            store = gate.store
        self.policy = policy
        self.store = store
        self.gate = gate if gate is not None and gate.policy is policy else None
        self.layers = self.gate.layers if self.gate is not None else Layers.of(policy)
        self._sources: dict[str | None, Sources] = {}
        self._models: dict[str | None, tuple[tuple[int, int], Any]] = {}

    @classmethod
    def of(cls, source: Gate | Store | Projector, policy: CheckedProgram) -> Projector:
        """`source` itself if it is a Projector, else one over the gate or store."""
        if isinstance(source, Projector):
            return source
        if isinstance(source, Gate):
            return cls(policy, gate=source)
        return cls(policy, source)

    @classmethod
    def asking(cls, policy: CheckedProgram, store: Store, limits: Limits | None = None) -> Projector:
        """One over `store` for a process that asks one question (the CLI's
        `query`, `why`, `why-not`): with a gate, when the policy has one, that
        starts from the store's snapshot, so `model_for` reads the gate's
        model when the snapshot matches the store or a request needs it."""
        if not all(rel in policy.relations for rel in GATE_RELATIONS):
            return cls(policy, store)
        return cls(policy, gate=Gate(policy, store, limits=limits, snapshot=True, eager=False))

    def sources(self, audience: str | None = None, revision: int | None = None) -> Sources:
        """The facts `audience` may see at `revision` (default: newest), with their events."""
        layers = self.layers.visible(audience)
        if revision is not None and revision != self.store.revision():
            self.store.as_of(revision)  # refuses a revision not in the log
            return Sources(self.store, revision, layers)
        cached = self._sources.get(audience)
        if cached is None:
            cached = self._sources[audience] = Sources(self.store, None, layers)
        else:
            cached.advance(self.store)
        return cached

    def model(self, sources: Sources, audience: str | None, now: int) -> Any:
        """The policy's model over `sources`, holding at `now`: the gate's
        warm model for every layer (it may keep an earlier `now` within its
        horizon), else evaluated and cached for the newest pair (revisions
        that add only decisions keep it)."""
        key = (sources.changed, now)
        if audience is None and self.gate is not None:
            model = self.gate.model(sources.revision, now)  # never cached here: a decision may move it in place
        else:
            hit = self._models.get(audience)
            if hit is not None and hit[0] == key:
                return hit[1]
            model = evaluate(self.policy, sources.facts, now=now)
        self._models[audience] = (key, model)
        return model

    def model_for(
        self,
        now: int,
        *,
        request: Request | None = None,
        given: Facts | None = None,
        audience: str | None = None,
        asked: Pattern | None = None,
        why_not: bool = False,
        proofs: bool = True,
        limits: Limits | None = None,
    ) -> Answering:
        """The model a question at `now` is asked of, with `request`'s facts
        added as the gate adds them (its scope defaults to its target) and
        `given` facts as if stored. For every layer it is the gate's warm
        model, when the gate's model of the newest revision is at hand (a
        snapshot restored it, or it was built), or a request needs it, or
        the caller names no question; else, and for an audience (over the
        facts of the layers it sees, never filtered after derivation), the
        model is evaluated, on demand for the pattern `asked` when it is
        given (`why_not`: a why-not question; `proofs=False`: no proofs
        are read, as for a query)."""
        gate = self.gate
        if audience is None and gate is not None and (request is not None or asked is None or gate.warm.ready()):
            revision = self.store.revision()
            if request is None and not given:
                model = gate.model(revision, now)
            else:
                model = gate.overlay(request, now, given=given)
            return Answering(model, model_annotator(self.store, revision, model))
        sources = self.sources(audience)
        seen: Any = self.store if audience is None else sources  # (a view of its events for an audience)
        if request is None and not given and asked is None:
            model = self.model(sources, audience, now)
            return Answering(model, model_annotator(seen, sources.revision, model))
        added = {**(request.facts() if request is not None else {}), **(given or {})}
        facts = {rel: set(ts) for rel, ts in sources.facts.items()}
        for rel, rows in added.items():
            facts[rel] = facts[rel] | set(rows) if rel in facts else set(rows)
        if audience is not None and request is not None:
            # the audience's cached model plus the request, bounded as the gate bounds a
            # request's own evaluation (not the audience's facts evaluated anew per request)
            bound = gate.request_limits if gate is not None else limits
            model = overlay(self.model(sources, audience, now), added, bound, now=now)
            return Answering(model, annotator(seen, sources.revision, facts))
        if asked is None:
            model = evaluate(self.policy, facts, now=now, limits=limits)
        else:
            model = demanded_model(
                self.policy, facts, asked.relation, asked.values, now=now, limits=limits, proofs=proofs, why_not=why_not
            )
        return Answering(model, annotator(seen, sources.revision, facts))

    def render(
        self,
        name: str,
        now: int,
        *,
        audience: str | None = None,
        cap: int | None = DEFAULT_CAP,
        agent: str | None = None,
        revision: int | None = None,
    ) -> Projection:
        """Projection `name` at (revision, this policy, `now`, `audience`)."""
        sources = self.sources(audience, revision)
        model = self.model(sources, audience, now)
        return render_projection(model, sources, self.policy, name, audience=audience, agent=agent, cap=cap, now=now)

    def next_change(self, audience: str | None, now: int) -> int | None:
        """The first instant after `now` at which the newest rendering for
        `audience` may read differently with no new event: where a `$now`
        comparison of its model may flip (engine/clock.py's horizon), or at
        the next UTC midnight (stamps print the date once it is another day).
        None when the model moves with every `now` (a rule that uses `$now`
        as a value): the caller refreshes on a period instead."""
        hit = self._models.get(audience)
        if hit is None or hit[0][1] != now:
            raise ValueError(f"no rendering at {now} for audience {audience!r} yet")
        seen = horizon(hit[1])
        if seen.moving:
            return None
        due = (now // _DAY + 1) * _DAY
        for instants in seen.instants.values():
            i = bisect_left(instants, now)  # the first instant >= now
            if i < len(instants) and math.isfinite(instants[i]):  # at an instant, a filter may flip just after it
                due = min(due, now + 1 if instants[i] == now else math.ceil(instants[i]))
        return due


def render_state(
    source: Gate | Store | Projector,
    policy: CheckedProgram,
    now: int,
    audience: str | None = None,
    cap: int | None = DEFAULT_CAP,
    *,
    agent: str | None = None,
    revision: int | None = None,
) -> Projection:
    """The standing agent's state file (seed 003) as `audience` may see it."""
    return Projector.of(source, policy).render("state", now, audience=audience, cap=cap, agent=agent, revision=revision)

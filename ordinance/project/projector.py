"""`Projector`: projections of one store under one policy, kept warm.

    projector = Projector(policy, store)            # or Projector(policy, gate=gate)
    state = projector.render("state", now, audience="public", cap=4096)
    print(state.text)

Per audience it keeps the `Sources` (the facts that audience may see, and
their events), following the store as it grows, and the model of the newest
(revision, `now`). With no audience and a gate, it uses the gate's warm
model. `render_state` is the one-call form; a long-running server keeps one
`Projector` and calls `render` on every change.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from typing import Any

from ..engine import evaluate
from ..engine.clock import horizon
from ..facts import Store
from ..gate import Gate
from ..rules.checked import CheckedProgram
from ..gate.layers import Layers
from .render import DEFAULT_CAP, Projection, render_projection
from .sources import Sources

__all__ = ["Projector", "render_state"]

_DAY = 86400


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

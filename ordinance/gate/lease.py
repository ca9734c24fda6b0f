"""Leases through a gated action: take and release, decided by the policy.

A lease is authority, so no principal asserts one (stdlib writes.rules);
it is taken by asking the gate. `take` decides the request `request(A,
"lease", Work, Agent, Epoch)` at the next lease epoch of the work (one past
the newest any lease of it holds), so the policy refuses it while another
agent's lease is live (`lease-held`), without a current grant holding the
work (`no-grant`), or under a stale grant epoch; an allowed take writes
`lease(Work, Agent, Next, Until)` under the fence (Work, Next), in the same
transaction as the logged decision and only if no fact changed since the
revision it was decided at (`Gate.log_then`): a compare-and-set, so two
agents racing for one work get one lease. `release` ends the agent's own
leases of the work now (a logged retraction, and the lease restated as
expired): the work is free again, and its epoch stays spent.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..diagnostics import GateError, StaleEpochError
from ..facts import Event
from .decision import Decision
from .request import Request

if TYPE_CHECKING:
    from .core import Gate

__all__ = ["Leased", "take", "release", "LEASE_TRIES"]

LEASE_TRIES = 4  # takes decided again when another take won the epoch meanwhile


@dataclass(frozen=True, slots=True)
class Leased:
    """A take's decision, and the lease epoch and revision if it was written."""

    decision: Decision
    epoch: int
    revision: int | None = None

    @property
    def taken(self) -> bool:
        return self.revision is not None


def _next_epoch(gate: Gate, work: str, revision: int, now: int) -> int:
    rows = gate.model(revision, now).query("lease", (work, None, None, None))
    return max((int(e) for _, _, e, _ in rows), default=0) + 1


def take(
    gate: Gate,
    agent: str,
    work: str,
    epoch: int,
    until: int,
    now: int,
    *,
    scope: str | None = None,
    clock: str = "owner",
    source: str = "lease",
) -> Leased:
    """Take the lease of `work` for `agent` (under its grant at `epoch`)
    until `until`, if the policy allows it at `now`; see the module."""
    if until <= now:
        raise GateError("a lease ends after it is taken: `until` must be later than `now`")
    for _ in range(LEASE_TRIES):
        next_ = _next_epoch(gate, work, gate.store.revision(), now)
        request = Request(f"lease-{uuid.uuid4().hex[:12]}", "lease", work, agent, epoch, scope=scope, lease_epoch=next_)
        won: list[bool] = []

        def lease_batch(decisions: list[Decision]) -> list[Any]:
            won.clear()
            d = decisions[0]
            if not d.allowed or _next_epoch(gate, work, d.revision, now) != next_:
                return []
            won.append(True)
            event = Event("assert", "lease", (work, agent, next_, until), source, agent, layer=gate.layers.default)
            return [([event], (work, next_))]

        (decision,), seqs = gate.log_then([(request, now)], clock=clock, then=lease_batch)
        if not decision.allowed:
            return Leased(decision, next_)
        if won and seqs and not isinstance(seqs[0], StaleEpochError):
            return Leased(decision, next_, int(seqs[0]))
    return Leased(decision, next_)  # another take kept winning the epoch: not taken


def release(gate: Gate, agent: str, work: str, now: int, *, source: str = "lease") -> int:
    """End `agent`'s leases of `work` at `now`: each is retracted (a logged
    purge) and stated again as expiring at `now`, in one batch, so the work
    is free and its epochs stay spent. Its revision; GateError if the agent
    holds none."""
    rows = gate.model(gate.store.revision(), now).query("lease", (work, agent, None, None))
    held = [row for row in rows if now < int(row[3])]  # the live ones: an ended lease is not held
    seqs = sorted({s for row in held for s in gate.store.seqs_of("lease", row)})
    if not seqs:
        raise GateError(f"`{agent}` holds no lease of `{work}`", code="no_lease")
    payload = {"reason": f"lease of `{work}` released", "retract": True}
    ended = {(work, agent, int(e), now) for _, _, e, _ in held}
    events = [Event("purge", "purge", tuple(seqs), source, agent, payload=payload)] + [
        Event("assert", "lease", row, source, agent, layer=gate.layers.default) for row in sorted(ended)
    ]
    return gate.store.append(events)

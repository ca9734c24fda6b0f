"""guard: check -> intent receipt -> effect -> outcome receipt, fenced.

The intent receipt is written under the store's fence for (resource, the
request's epoch), so the effect runs only if the store accepted that epoch;
the outcome receipt is written under the same fence in one transaction, so
an outcome from an epoch that lost authority during the effect is refused.
A blocked check never calls the effect.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Generic, TypeVar

from ..diagnostics import StaleEpochError
from ..facts import Event
from .decision import Decision, error_pair
from .request import Request

__all__ = ["GuardResult", "guard"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class GuardResult(Generic[T]):
    """What happened: the decision, whether the effect ran, its value, the
    receipt revisions, and `error` as (code, message) if a step failed."""

    decision: Decision
    ran: bool = False
    value: T | None = None
    intent_seq: int | None = None
    outcome_seq: int | None = None
    error: tuple[str, str] | None = None

    @property
    def completed(self) -> bool:
        return self.ran and self.outcome_seq is not None


def guard(
    gate: Any,
    request: Request,
    effect: Callable[[], T],
    now: int,
    *,
    resource: str | None = None,
) -> GuardResult[T]:
    decision: Decision = gate.check(request, now)
    if not decision.allowed:
        return GuardResult(decision)
    store = gate.store
    fence = (resource or request.target, request.epoch)
    a, who = request.id, request.agent
    intent = [Event("receipt", "receipt", (a, "intent", who, now), "guard", who),
              Event("assert", "action_scope", (a, request.authority_scope), "guard", who)]
    if request.key is not None:
        intent.append(Event("assert", "receipt_key", (a, request.key), "guard", who))
    try:
        intent_seq = store.append(intent, fence=fence)
    except StaleEpochError as exc:
        return GuardResult(decision, error=error_pair(exc))
    try:
        value = effect()
    except Exception as exc:  # the effect failed: no outcome receipt
        return GuardResult(decision, ran=True, intent_seq=intent_seq, error=error_pair(exc))
    outcome = [Event("receipt", "receipt", (a, "outcome", who, now), "guard", who)]
    try:
        outcome_seq = store.append(outcome, fence=fence)
    except StaleEpochError as exc:
        return GuardResult(decision, ran=True, value=value, intent_seq=intent_seq, error=error_pair(exc))
    return GuardResult(decision, ran=True, value=value, intent_seq=intent_seq, outcome_seq=outcome_seq)

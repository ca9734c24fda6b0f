"""guard: check -> intent receipt -> effect -> outcome receipt, fenced.

The intent receipt is written under the store's fence for (resource, the
request's lease epoch), so the effect runs only if the store accepted that
epoch; the outcome receipt is written under the same fence in one
transaction, so an outcome from an epoch that lost authority during the
effect is refused. A blocked check never calls the effect.

`Guarded` (`gate.guarded(...)`) is the same sequence as a decorator or a
context manager: a denied check or a refused intent raises `Blocked`, an
effect's exception propagates with no outcome receipt, a refused outcome
raises `StaleEpochError` after the effect.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Callable, Generic, Protocol, TypeVar

from ..diagnostics import GateError, StaleEpochError, error_pair
from ..facts import Event, Store
from .decision import Decision
from .layers import Layers
from .request import Request

__all__ = ["Blocked", "Checks", "GuardResult", "Guarded", "guard", "intent", "intent_batch", "outcome"]

T = TypeVar("T")


class Checks(Protocol):
    """What the guard needs of a gate (`Gate`: gate/core.py imports this module)."""

    @property
    def store(self) -> Store: ...
    @property
    def layers(self) -> Layers: ...
    def check(self, request: Request, now: int) -> Decision: ...


class Blocked(GateError):
    """The gate did not let a guarded effect run; `decision` says why,
    `error` holds (code, message) when the store refused the intent."""

    def __init__(self, decision: Decision, error: tuple[str, str] | None = None) -> None:
        why = error[1] if error else ", ".join(decision.codes) or "not permitted"
        super().__init__(f"request `{decision.request.id}` blocked: {why}", code=error[0] if error else "blocked")
        self.decision = decision
        self.error = error


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


def _fence(request: Request, resource: str | None) -> tuple[str, int]:
    return (resource or request.target, request.lease)


def intent_batch(
    gate: Checks, request: Request, now: int, resource: str | None = None, source: str = "guard"
) -> tuple[list[Event], tuple[str, int]]:
    """The intent receipt's events and the fence they are written under."""
    a, who, layer = request.id, request.agent, gate.layers.default
    events = [
        Event("receipt", "receipt", (a, "intent", who, now), source, who, layer=layer),
        Event("assert", "action_scope", (a, request.authority_scope), source, who, layer=layer),
    ]
    if request.key is not None:
        events.append(Event("assert", "receipt_key", (a, request.key), source, who, layer=layer))
    return events, _fence(request, resource)


def intent(gate: Checks, request: Request, now: int, resource: str | None = None, source: str = "guard") -> int:
    """Write the intent receipt of an allowed request to the gate's store,
    fenced, in the policy's default layer; return its revision
    (StaleEpochError if the fence refuses it)."""
    events, fence = intent_batch(gate, request, now, resource, source)
    return int(gate.store.append(events, fence=fence))


def outcome(
    gate: Checks, request: Request, now: int, resource: str | None = None, source: str = "guard", kind: str = "outcome"
) -> int:
    """Write the outcome receipt (or, with `kind="failed"`, the receipt that
    the action ran and failed, or never ran), under the same fence and in the
    same layer as its intent."""
    events = [
        Event(
            "receipt",
            "receipt",
            (request.id, kind, request.agent, now),
            source,
            request.agent,
            layer=gate.layers.default,
        )
    ]
    return int(gate.store.append(events, fence=_fence(request, resource)))


def guard(
    gate: Checks,
    request: Request,
    effect: Callable[[], T],
    now: int,
    *,
    resource: str | None = None,
) -> GuardResult[T]:
    decision: Decision = gate.check(request, now)
    if not decision.allowed:
        return GuardResult(decision)
    try:
        intent_seq = intent(gate, request, now, resource)
    except StaleEpochError as exc:
        return GuardResult(decision, error=error_pair(exc))
    try:
        value = effect()
    except Exception as exc:  # the effect failed: no outcome receipt
        return GuardResult(decision, ran=True, intent_seq=intent_seq, error=error_pair(exc))
    try:
        outcome_seq = outcome(gate, request, now, resource)
    except StaleEpochError as exc:
        return GuardResult(decision, ran=True, value=value, intent_seq=intent_seq, error=error_pair(exc))
    return GuardResult(decision, ran=True, value=value, intent_seq=intent_seq, outcome_seq=outcome_seq)


class Guarded:
    """`gate.guarded(request, now)`: a decorator and a context manager."""

    def __init__(
        self, gate: Checks, request: Request | Callable[..., Request], now: int | None, resource: str | None
    ) -> None:
        self.gate, self.request, self.now, self.resource = gate, request, now, resource
        self.decision: Decision | None = None
        self.intent_seq: int | None = None
        self.outcome_seq: int | None = None
        self._active: tuple[Request, int] | None = None

    def _begin(self, request: Request) -> tuple[Request, int]:
        now = self.now if self.now is not None else int(time.time())
        self.decision = self.gate.check(request, now)
        if not self.decision.allowed:
            raise Blocked(self.decision)
        try:
            self.intent_seq = intent(self.gate, request, now, self.resource)
        except StaleEpochError as exc:
            raise Blocked(self.decision, error_pair(exc)) from exc
        return request, now

    def _end(self, request: Request, now: int) -> None:
        self.outcome_seq = outcome(self.gate, request, now, self.resource)

    def __enter__(self) -> Guarded:
        if not isinstance(self.request, Request):
            raise GateError("`guarded` as a context manager needs a Request, not a function")
        self._active = self._begin(self.request)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        active, self._active = self._active, None
        if kind is None and active is not None:
            self._end(*active)

    def __call__(self, fn: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> T:
            made = self.request if isinstance(self.request, Request) else self.request(*args, **kwargs)
            request, now = self._begin(made)
            value = fn(*args, **kwargs)
            self._end(request, now)
            return value

        return run

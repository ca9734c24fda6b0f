"""One hook call, any host: the Call decided, receipts written, the Verdict rendered.

PRE: the call becomes a Request (request.py), the gate decides and logs.
The decision is logged with `asked` (the ask codes of its flags) when it
asks, and with each file-content input as a digest and a length
(request.digest; the policy read the contents at decision time). A permitted
call that does not ask gets its intent receipt in the decision's commit
(fenced, like `guard`); an asked call gets an `asked` receipt there instead,
and its intent only once it ran (the user may refuse it).

POST (the tool ran): the outcome receipt of an intent on record; of an asked
call, its intent first. FAILED (it ran and failed) and DENIED (the host
refused it): a `failed` receipt closes an intent on record. Nothing is
written for a call without one.

The verdict: deny (forbidden, an error, a fence refusal), ask (a flag whose
code is an `ask_code`), allow (a flag `auto-allow`: the policy's
`auto_allow(A)`), else defer (the host's own permission flow decides).
Every failure is the host's fail-closed answer, as data.
"""

from __future__ import annotations

import dataclasses
import secrets
import time
import weakref
from types import ModuleType
from contextlib import AbstractContextManager
from typing import Any, Callable, Mapping, Protocol

from ..diagnostics import OrdinanceError, StaleEpochError, error_pair
from ..facts import Store
from ..gate import OWNER_CLOCK, SERVER_CLOCK, Batch, Decision, Gate, Request
from ..rules import CheckedProgram
from ..gate.guard import intent_batch, outcome
from . import DENIED, FAILED, POST, PRE, Call, Verdict, event_of
from .request import SHELL_TOOLS, digest, request_of

__all__ = ["handle", "decide", "verdict_of", "AUTO_ALLOW", "Served"]

AUTO_ALLOW = "auto-allow"  # the flag code stdlib tools.rules derives from `auto_allow(A)`


class Served(Protocol):
    """What a host's hook needs of the server's service (`serve.Service`,
    a layer above): its gate, store and policy, the lock that orders the
    warm model, and a decision logged with its receipt in one commit."""

    @property
    def gate(self) -> Gate: ...
    @property
    def store(self) -> Store: ...
    @property
    def policy(self) -> CheckedProgram: ...
    @property
    def lock(self) -> AbstractContextManager[Any]: ...

    def check_then(
        self,
        request: Request,
        now: int,
        then: Callable[[Decision], Batch | None],
        shown: Callable[[Decision, dict[str, Any]], dict[str, Any]] | None = None,
        clock: str = SERVER_CLOCK,
    ) -> tuple[Decision, StaleEpochError | None]: ...


def _agent(principal: Any) -> str:
    return principal if isinstance(principal, str) else str(principal.name)


def _codes(service: Served, relation: str, now: int, revision: int) -> frozenset[str]:
    """The policy's `relation(Code)` facts at the decision's revision (under
    the service's lock, before the warm model moves past it)."""
    if relation not in service.policy.relations:
        return frozenset()
    return frozenset(str(t[0]) for t in service.gate.model(revision, now).tuples(relation))


def _shells(service: Served, now: int) -> frozenset[str]:
    if "shell_tool" not in service.policy.relations:
        return SHELL_TOOLS
    return SHELL_TOOLS | _codes(service, "shell_tool", now, service.store.revision())


def verdict_of(decision: Decision, asked: list[str], event: str = "PreToolUse") -> Verdict:
    if decision.errors:
        first = decision.errors[0]
        return Verdict("deny", f"ordinance: error[{first.code}]: {first.message}", event)
    if not decision.allowed:
        why = "; ".join(f"{r.code} ({r.detail})" if r.detail else r.code for r in decision.reasons)
        return Verdict("deny", f"ordinance blocked this: {why}", event)
    if asked:  # each with what it is about (the file, the URL, the command), as a deny's reasons are
        said = dict.fromkeys(
            f"{f.code} ({f.detail})" if f.detail else f.code for f in decision.flags if f.code in asked
        )
        return Verdict("ask", f"ordinance asks: {'; '.join(said)}", event)
    if any(f.code == AUTO_ALLOW for f in decision.flags):
        return Verdict("allow", f"ordinance allowed (decision {decision.seq})", event)
    return Verdict("defer", f"ordinance permits this (decision {decision.seq})", event)


def decide(host: ModuleType, service: Served, agent: str, call: Call, epoch: int, at: int, clock: str) -> Verdict:
    name = call.id
    if call.content_id:  # identical calls are distinct requests, with receipts of their own
        # the suffix sorts as the calls came (nanoseconds), then is unguessable: the oldest open one is first
        call = dataclasses.replace(call, id=f"{call.id}.{time.time_ns():016x}{secrets.token_hex(4)}")
    with service.lock:  # the ask codes of the decision's model: nothing takes in the receipt before they are read
        request = request_of(call, agent, service.gate.request_relations, epoch=epoch, shells=_shells(service, at))
        asked: list[str] = []

        def then(d: Decision) -> Any:
            if d.allowed and not d.errors:
                asks = _codes(service, "ask_code", at, d.revision)
                asked.extend(sorted({f.code for f in d.flags if f.code in asks}))
            if not d.allowed or d.errors or not getattr(host, "RECEIPTS", True):
                return None
            events, fence = intent_batch(service.gate, request, at, source=host.NAME)
            if asked:  # the user may refuse it: its intent once it ran
                events[0] = dataclasses.replace(events[0], args=(request.id, "asked", agent, at))
            return events, fence

        def shown(d: Decision, payload: dict[str, Any]) -> dict[str, Any]:
            if asked:
                payload["asked"] = list(asked)
            inputs = payload.get("request", {}).get("attributes", {}).get("request_input")
            if inputs and call.contents:
                payload["request"]["attributes"]["request_input"] = [
                    [f, digest(call.inputs.get(f)) if f in call.contents else v] for f, v in inputs
                ]
            return payload

        decision, refused = service.check_then(request, at, then, shown, clock=clock)
        if call.content_id and refused is None and decision.allowed and not decision.errors:
            opened = _OPENED.setdefault(service, {})
            if len(opened) >= _MAX_OPENED:  # calls that never closed (an ask refused): the scan finds the rest
                opened.clear()
            opened.setdefault((agent, name), []).append(call.id)
    if refused is not None:
        code, message = error_pair(refused)
        return Verdict("deny", f"ordinance: error[{code}]: {message}", call.event)
    return verdict_of(decision, asked, call.event)


# per service, (agent, name) -> the ids of the calls of that name this process opened, oldest first:
# an after-event finds its call without a scan (after a restart, _oldest_open scans the receipts)
_OPENED: weakref.WeakKeyDictionary[Any, dict[tuple[str, str], list[str]]] = weakref.WeakKeyDictionary()
_MAX_OPENED = 4096  # names kept at most, per service


def _is_open(model: Any, rid: str, agent: str) -> bool:
    return any(model.query("receipt", (rid, k, agent, None)) for k in ("intent", "asked")) and not any(
        model.query("receipt", (rid, done, None, None)) for done in ("outcome", "failed")
    )


def _open_call(service: Served, model: Any, name: str, agent: str) -> str | None:
    """The oldest open call named `name` by `agent`: from what this process opened, else by a scan."""
    opened = _OPENED.get(service, {})
    ids = opened.get((agent, name), [])
    while ids:
        rid = ids.pop(0)
        if not ids:
            del opened[(agent, name)]
        if _is_open(model, rid, agent):
            return rid
    return _oldest_open(model, name, agent)


def _oldest_open(model: Any, name: str, agent: str) -> str | None:
    """The id of the oldest call named `name` (a `content_id`: NAME.SUFFIX)
    by `agent` that has an intent or asked receipt and neither an outcome
    nor a failure: the call a host without call ids reports having run."""
    open_: list[tuple[int, str]] = []  # (its time, its id: the suffix sorts as the calls came)
    for kind in ("intent", "asked"):
        for rid, _, _, when in model.query("receipt", (None, kind, agent, None)):
            if (
                isinstance(rid, str)
                and rid.startswith(name + ".")
                and not any(model.query("receipt", (rid, done, None, None)) for done in ("outcome", "failed"))
            ):
                open_.append((when, rid))
    return min(open_)[1] if open_ else None


def _receipts(service: Served, host: ModuleType, request: Request, call: Call, at: int) -> None:
    """PostToolUse, PostToolUseFailure, PermissionDenied: close the call's intent."""
    agent = request.agent
    with service.lock:
        model = service.gate.model(service.store.revision(), at)
        if call.content_id:
            opened = _open_call(service, model, call.id, agent)
            if opened is None:
                return
            request = dataclasses.replace(request, id=opened)

        def has(kind: str, by: str | None = agent) -> bool:
            return bool(model.query("receipt", (request.id, kind, by, None)))

        intended = has("intent")
        if has("outcome", None) or has("failed", None):
            return
        if call.phase == POST and not intended and has("asked"):  # an asked call ran: its intent now
            events, fence = intent_batch(service.gate, request, at, source=host.NAME)
            service.store.append(events[:1], fence=fence)
            intended = True
        if call.phase == POST and intended:
            outcome(service.gate, request, at, source=host.NAME)
        elif intended:
            outcome(service.gate, request, at, source=host.NAME, kind="failed")


def handle(
    host: ModuleType,
    service: Served,
    principal: Any,
    payload: Any,
    *,
    project: str | None = None,
    epoch: int = 1,
    now: int | None = None,
) -> dict[str, Any]:
    """Any hook event of `host`: PRE decides, the others record; errors are the host's failure."""
    if not isinstance(payload, Mapping):
        return host.failure(None, "ordinance: error[bad_hook_payload]: the hook input is not a JSON object")
    event = event_of(host, payload)
    at = int(time.time()) if now is None else now
    try:
        call = host.call(payload, project)
        agent = _agent(principal)
        if call.phase == PRE:
            clock = SERVER_CLOCK if now is None else OWNER_CLOCK  # `now` given: the library's caller, the owner
            return dict(host.render(decide(host, service, agent, call, epoch, at, clock)))
        if call.phase in (POST, FAILED, DENIED):
            request = request_of(call, agent, service.gate.request_relations, epoch=epoch)
            _receipts(service, host, request, call, at)
            return dict(host.render(Verdict("none", event=call.event)))
        return {}
    except Exception as exc:  # fail closed, as data
        code, message = error_pair(exc)
        if not isinstance(exc, OrdinanceError):
            code, message = "internal", type(exc).__name__
        return dict(host.failure(event, f"ordinance: error[{code}]: {message}"))

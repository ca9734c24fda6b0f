"""Claude Code hooks: a tool call in, a decision in Claude Code's shape out.

PreToolUse: the call becomes a Request (`tool_request`): kind is the tool
name, agent the principal, scope the project directory, target the file,
URL or working directory it acts on, and the attributes of stdlib
tools.rules: `request_tool`, one `request_input` per `tool_input` field,
`request_command` / `request_word` for each simple command of a Bash
command (shell.py), `request_path` (absolute, normalized), `request_project`,
`request_cwd`, `request_session`. Only the relations the policy declares
are filled. The gate decides and logs; allowed -> "allow" (or "ask" when a
flag's code is one of the policy's `ask_code(Code)` facts), blocked or an
error -> "deny", each with a short reason. An allowed call's intent receipt
is written (fenced, like `guard`); PostToolUse writes the outcome receipt
of a call whose intent is on record, and nothing for any other (a failure
there is told to the user as a `systemMessage`).

Claude Code reads a hook answer from a 2xx body and treats anything else as
a non-blocking error, so every answer here is a 200 with a decision:
failures deny.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import time
from typing import Any, Mapping

from ..diagnostics import OrdinanceError
from ..gate import Decision, Request
from ..values import escape
from ..gate.decision import error_pair
from ..gate import OWNER_CLOCK, SERVER_CLOCK
from ..gate.guard import intent_batch, outcome
from .identity import Principal
from .shell import simple_commands

__all__ = ["pre_tool_use", "post_tool_use", "handle", "tool_request", "answer", "deny", "failure"]

PATH_FIELDS = ("file_path", "notebook_path", "path")
TARGET_FIELDS = ("file_path", "notebook_path", "url", "path", "pattern")
_REASON = 300  # characters of a reason Claude Code shows


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)


def normalize(path: str, cwd: str) -> str:
    """`path` made absolute against `cwd` and normalized (no `..`, no `.`)."""
    expanded = os.path.expanduser(path)
    return posixpath.normpath(posixpath.join(cwd or "/", expanded))


def call_id(payload: Mapping[str, Any]) -> str:
    """The same id for a call's PreToolUse and PostToolUse."""
    use = payload.get("tool_use_id")
    if isinstance(use, str) and use:
        return f"cc-{use}"
    seen = json.dumps(
        [payload.get("session_id"), payload.get("tool_name"), payload.get("tool_input")], sort_keys=True, default=str
    )
    return "cc-" + hashlib.sha256(seen.encode()).hexdigest()[:16]


def tool_request(
    payload: Mapping[str, Any], agent: str, declared: Mapping[str, int], *, project: str | None = None, epoch: int = 1
) -> Request:
    """The Request of a Claude Code hook payload (PreToolUse or PostToolUse)."""
    tool = payload.get("tool_name")
    if not isinstance(tool, str) or not tool:
        raise OrdinanceError("the hook payload has no `tool_name`", code="bad_hook_payload")
    inputs = payload.get("tool_input") or {}
    if not isinstance(inputs, Mapping):
        raise OrdinanceError("the hook payload's `tool_input` is not an object", code="bad_hook_payload")
    cwd = normalize(str(payload.get("cwd") or project or "/"), "/")
    root = normalize(project, cwd) if project else cwd
    facts: list[tuple[str, tuple[Any, ...]]] = [
        ("request_tool", (tool,)),
        ("request_project", (root,)),
        ("request_cwd", (cwd,)),
    ]
    if isinstance(payload.get("session_id"), str):
        facts.append(("request_session", (payload["session_id"],)))
    for field, value in inputs.items():
        facts.append(("request_input", (str(field), _text(value))))
    paths = [normalize(inputs[f], cwd) for f in PATH_FIELDS if isinstance(inputs.get(f), str) and inputs[f]]
    facts.extend(("request_path", (p,)) for p in paths)
    command = inputs.get("command")
    if tool == "Bash" and isinstance(command, str):
        for n, words in enumerate(simple_commands(command)):
            facts.append(("request_command", (n, " ".join(words))))
            facts.extend(("request_word", (n, k, w)) for k, w in enumerate(words))
    target = paths[0] if paths else next((str(inputs[f]) for f in TARGET_FIELDS if inputs.get(f)), None)
    if target is None:
        target = cwd if tool == "Bash" else tool
    attributes: dict[str, list[list[Any]]] = {}
    for rel, args in facts:
        if declared.get(rel) == len(args) + 1:
            attributes.setdefault(rel, []).append(list(args))
    return Request.from_json(
        {
            "id": call_id(payload),
            "kind": tool,
            "target": target,
            "agent": agent,
            "epoch": epoch,
            "scope": root,
            "attributes": attributes,
        }
    )


def _output(event: str, decision: str, reason: str) -> dict[str, Any]:
    reason = escape(reason)  # Claude Code shows it: no control character an agent wrote reaches the terminal
    short = reason if len(reason) <= _REASON else reason[: _REASON - 1] + "…"
    return {
        "hookSpecificOutput": {
            "hookEventName": event,
            "permissionDecision": decision,
            "permissionDecisionReason": short,
        }
    }


def deny(reason: str, event: str = "PreToolUse") -> dict[str, Any]:
    return _output(event, "deny", reason)


def failure(event: Any, reason: str) -> dict[str, Any]:
    """The answer to a call that failed: a deny, except after the tool has
    run (PostToolUse), when there is nothing to deny and the user is told
    (`systemMessage`) that its outcome receipt was not recorded."""
    if event == "PostToolUse":
        return {"systemMessage": escape(f"{reason} (the outcome receipt was not recorded)")}
    return deny(reason)


def answer(decision: Decision, ask_codes: frozenset[str]) -> dict[str, Any]:
    """allow / ask / deny with a short reason naming the codes."""
    if decision.errors:
        first = decision.errors[0]
        return deny(f"ordinance: error[{first.code}]: {first.message}")
    if not decision.allowed:
        why = "; ".join(f"{r.code} ({r.detail})" if r.detail else r.code for r in decision.reasons)
        return deny(f"ordinance blocked this: {why}")
    asked = sorted({f.code for f in decision.flags if f.code in ask_codes})
    if asked:
        return _output("PreToolUse", "ask", f"ordinance asks: {', '.join(asked)}")
    return _output("PreToolUse", "allow", f"ordinance allowed (decision {decision.seq})")


def pre_tool_use(
    service: Any,
    principal: Principal,
    payload: Mapping[str, Any],
    *,
    project: str | None = None,
    epoch: int = 1,
    now: int | None = None,
) -> dict[str, Any]:
    at = int(time.time()) if now is None else now
    request = tool_request(payload, principal.name, service.gate.request_relations, project=project, epoch=epoch)
    with service.lock:  # the ask codes of the decision's model: nothing takes in the receipt before they are read
        decision, refused = service.check_then(  # an allowed call's intent receipt, in the decision's commit
            request,
            at,
            lambda d: (
                intent_batch(service.gate, request, at, source="claude-code") if d.allowed and not d.errors else None
            ),
            clock=SERVER_CLOCK if now is None else OWNER_CLOCK,  # `now` given: the library's caller, the owner
        )
        if refused is not None:
            code, message = error_pair(refused)
            return deny(f"ordinance: error[{code}]: {message}")
        return answer(decision, ask_codes(service, at, decision.revision) if decision.allowed else frozenset())


def ask_codes(service: Any, now: int, revision: int) -> frozenset[str]:
    """The policy's `ask_code(Code)` facts at the decision's revision (under
    the service's lock, before the warm model moves past it)."""
    if "ask_code" not in service.policy.relations:
        return frozenset()
    model = service.gate.model(revision, now)
    return frozenset(str(t[0]) for t in model.tuples("ask_code"))


def post_tool_use(
    service: Any,
    principal: Principal,
    payload: Mapping[str, Any],
    *,
    project: str | None = None,
    epoch: int = 1,
    now: int | None = None,
) -> dict[str, Any]:
    """The outcome receipt of an allowed call; `{}` (Claude Code's "nothing to add")."""
    at = int(time.time()) if now is None else now
    request = tool_request(payload, principal.name, service.gate.request_relations, project=project, epoch=epoch)
    with service.lock:
        model = service.gate.model(service.store.revision(), at)
        if model.query("receipt", (request.id, "intent", principal.name, None)) and not model.query(
            "receipt", (request.id, "outcome", None, None)
        ):
            outcome(service.gate, request, at, source="claude-code")
    return {}


def handle(service: Any, principal: Principal, payload: Any, **options: Any) -> dict[str, Any]:
    """Any hook event: PreToolUse decides, PostToolUse records; errors deny."""
    if not isinstance(payload, Mapping):
        return deny("ordinance: error[bad_hook_payload]: the hook input is not a JSON object")
    event = payload.get("hook_event_name", "PreToolUse")
    try:
        if event == "PostToolUse":
            return post_tool_use(service, principal, payload, **options)
        if event == "PreToolUse":
            return pre_tool_use(service, principal, payload, **options)
        return {}
    except Exception as exc:  # fail closed, as data
        code, message = error_pair(exc)
        if not isinstance(exc, OrdinanceError):
            code, message = "internal", type(exc).__name__
        return failure(event, f"ordinance: error[{code}]: {message}")

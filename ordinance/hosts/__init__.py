"""Agents' hosts: a tool call in a host's payload -> request facts; the
gate's verdict -> the host's answer.

One module per host (`claude_code`, `pre_push` (git's hook), and `gemini`,
`codex`, `cursor`, `copilot`, ...) plugs into the same flow (flow.py) by providing:

    NAME: str                                   "claude-code": the source of its receipts
    RECEIPTS: bool = True                       False: a host that reports no call after it ran
                                                (git's pre-push): no intent receipts
    call(payload, project) -> Call              the host's payload read; OrdinanceError
                                                (code `bad_hook_payload`) if it is not one
    render(verdict: Verdict) -> dict            the answer in the host's shape
    failure(event: str | None, reason) -> dict  the fail-closed answer when no verdict
                                                could be had (server down, bad token, a bug)
    event(payload) -> str | None                optional: the event a payload reports, for a
                                                host whose payload does not name it in
                                                `hook_event_name` (Copilot CLI)

`Call` is what every host reads from its payload: which phase of the call
(`PRE` before the tool runs, `POST` after it ran, `FAILED` it ran and failed,
`DENIED` the host refused it, `OTHER`), its id (the same for its PRE and POST;
for a host that gives no call id, `content_id`: the id names what the call
runs, each PRE gets a suffix of its own, and a POST closes the oldest open
call of that name),
the tool and its inputs, the working and project directories, and what the host
knows the tool touches: `shell` (text a shell runs), `paths` (files named),
`writes` (files written), `contents` (the inputs holding file contents, which
the decision log keeps as a digest and a length). request.py turns a Call into the gate's Request
(tools.rules' `request_*` facts), with every path resolved (paths.py) and shell
text read by bash's grammar (bash.py, git.py).

`Verdict.kind` is one of:

    "defer"  the policy permits the call: the host's own permission flow decides
             (no decision in the answer; the host prompts or not, as without us;
             not Claude Code's own `defer` decision, which pauses a headless run)
    "allow"  the policy permits it and says so (`auto_allow(A)`): the host runs it unasked
    "ask"    the policy flags it with an `ask_code`: the host asks the user
    "deny"   the policy forbids it, or no decision could be had (fail closed)
    "none"   after the tool ran: nothing to answer (`note` may tell the user something)

A host never gets more than it would grant without us: permitted is "defer"
unless the policy auto-allows. A host that cannot ask from a hook renders
"ask" as its deny, saying so: "ask first" never becomes "go".
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Mapping

__all__ = ["Call", "Verdict", "PRE", "POST", "FAILED", "DENIED", "OTHER", "KINDS", "host", "event_of"]

PRE, POST, FAILED, DENIED, OTHER = "pre", "post", "failed", "denied", "other"
KINDS = ("defer", "allow", "ask", "deny", "none")


@dataclass(frozen=True)
class Call:
    """One tool call as a host reports it."""

    phase: str  # PRE, POST, FAILED, DENIED or OTHER
    event: str  # the host's own name of the event, for its answer
    id: str
    tool: str
    inputs: Mapping[str, Any]
    cwd: str
    project: str
    session: str | None = None
    shell: str | None = None  # shell text the tool runs
    paths: tuple[str, ...] = ()  # files the tool names (as given: resolved against cwd)
    writes: tuple[str, ...] = ()  # files the tool writes
    target: str | None = None  # what the call acts on, if not a path (a URL, a pattern)
    contents: tuple[str, ...] = ()  # the inputs that are file contents: logged as a digest and a length
    facts: tuple[tuple[str, tuple[Any, ...]], ...] = ()  # request facts the host reads itself (git's pushed refs)
    content_id: bool = False  # the host gives no id of its own: `id` names what the call runs (flow.py)


@dataclass(frozen=True)
class Verdict:
    kind: str  # one of KINDS
    reason: str = ""
    event: str = "PreToolUse"  # the host's event name the answer is for
    note: str | None = None  # told to the user besides the answer
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:  # a kind no host renders fails closed (flow.handle: the host's failure)
            raise ValueError(f"unknown verdict kind {self.kind!r}")


def host(name: str) -> ModuleType:
    """The module of host `name` (`claude-code` -> ordinance.hosts.claude_code)."""
    module = name.replace("-", "_")
    if not module.isidentifier() or module.startswith("_"):
        raise KeyError(name)
    try:
        found = importlib.import_module(f"{__name__}.{module}")
    except ModuleNotFoundError:
        raise KeyError(name) from None
    if not all(hasattr(found, f) for f in ("NAME", "call", "render", "failure")):
        raise KeyError(name)  # a shared module (bash, flow, ...), not a host
    return found


def event_of(host: ModuleType, payload: Any) -> str | None:
    """The event `payload` of `host` reports: its `hook_event_name`, unless the host reads it otherwise."""
    if hasattr(host, "event"):
        return host.event(payload)  # type: ignore[no-any-return]
    event = payload.get("hook_event_name") if isinstance(payload, Mapping) else None
    return event if isinstance(event, str) else None

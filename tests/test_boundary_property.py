"""Property: no sequence of writes by a non-owner principal, through every
write path (HTTP /assert and /load, MCP assert, the Claude Code hook's
receipts, guard), turns a denied decision into an allowed one on the
continuity stdlib, nor makes the calendar's quiet times deny an allowed one."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mcp import Client
from starlette.testclient import TestClient

from ordinance.facts import open_store, schema_of
from ordinance.gate import Request, is_request_side
from ordinance.rules import compile_text
from ordinance.serve import Principal, Service, Tokens
from ordinance.serve.app import create_app
from ordinance.hosts import claude_code as _cc
from ordinance.hosts.flow import handle as _handle
from ordinance.serve.mcp import create_mcp
from ordinance.values import format_instant

POLICY = compile_text('.include "continuity"\n.include "calendar"\n')
T = 1796126400
ALICE = Principal("alice")
OWNER_FACTS = [
    ("grant", ("bob", "w1", 1)),
    ("grant", ("alice", "sandbox", 1)),
    ("grant", ("alice", "prod", 1)),
    ("stop", ("prod", T - 60)),
    ("grant", ("alice", "w2", 1)),
    ("lease", ("w2", "bob", 1, T + 3600)),
    ("grant", ("alice", "r", 1)),
    ("revoke", ("alice", "r", 1)),
]
DENIED = [  # each denied by authority the owner holds
    Request("d1", "write", "w1", "alice", 1),  # no grant
    Request("d2", "deploy", "prod", "alice", 1),  # owner stop
    Request("d3", "write", "w2", "alice", 1, lease_epoch=1),  # bob's live lease
    Request("d4", "write", "r", "alice", 1),  # revoked
    Request("d5", "deploy", "prod", "alice", 1, scope="sandbox"),  # a scope that does not hold the target
    Request("d6", "write", "/etc/x", "alice", 1),
]
ALLOWED = [Request("a1", "write", "sandbox", "alice", 1), Request("a2", "deploy", "sandbox", "alice", 1)]
SYMBOLS = ["alice", "bob", "w1", "prod", "sandbox", "r", "/"]  # the names the owner's facts and the requests use
KINDS: dict[tuple[str, int], list[Any]] = {
    ("receipt", 1): ["intent", "outcome"],
    ("observation", 4): ["ok"],
    ("claim_source", 2): ["observed"],
    # quiet times that would hold at T (a Tuesday, 12:00 UTC) for the allowed requests' actions
    **{(rel, 0): ["write", "deploy"] for rel in ("quiet_day", "quiet_hours", "quiet_date", "freeze")},
    ("quiet_day", 1): [2],
    ("quiet_hours", 1): [0, 12],
    ("quiet_hours", 2): [13, 24],
    ("quiet_date", 1): ["2026-12-01"],
    ("freeze", 2): [3600, 86400],
}
# the relations that decide authority (most draws), then any stored relation
AUTHORITY = ["grant", "revoke", "stop", "resume", "lease", "member", "failure_domain", "observation", "receipt"]
AUTHORITY += ["quiet_day", "quiet_hours", "quiet_date", "freeze"]
NUMBERS = [0, 1, 2, 99]
TIMES = [T - 3600, T - 60, T, T + 3600, 2**53 - 1]
STORED = sorted(
    n for n, r in POLICY.relations.items() if not r.derived and not is_request_side(n, r) and n != "decision"
)


def _value(rel: str, n: int, kind: str) -> st.SearchStrategy[Any]:
    if (rel, n) in KINDS:
        return st.sampled_from(KINDS[rel, n])
    if kind == "time":
        return st.sampled_from(TIMES)
    if kind in ("number", "unsigned", "duration"):
        return st.sampled_from(NUMBERS)
    return st.sampled_from(SYMBOLS)


@st.composite
def facts(draw: st.DrawFn) -> tuple[str, tuple[Any, ...]]:
    rel = draw(st.sampled_from(AUTHORITY) | st.sampled_from(STORED))
    types = POLICY.relations[rel].types or ("symbol",) * POLICY.relations[rel].arity
    return rel, tuple(draw(_value(rel, n, t)) for n, t in enumerate(types))


def _text(rel: str, args: tuple[Any, ...]) -> str:
    types = POLICY.relations[rel].types or ("symbol",) * len(args)
    shown = [
        format_instant(a) if t == "time" else json.dumps(a) if isinstance(a, str) else str(a)
        for a, t in zip(args, types)
    ]
    return f"{rel}({', '.join(shown)})."


def _hook(event: str, target: str, n: int) -> dict[str, Any]:
    return {
        "session_id": "s",
        "cwd": "/",
        "hook_event_name": event,
        "tool_name": "Write",
        "tool_input": {"file_path": target, "content": "x"},
        "tool_use_id": f"toolu_{n}",
    }


writes = st.lists(
    st.tuples(st.sampled_from(["assert", "load", "mcp", "hook", "guard"]), facts(), st.sampled_from(SYMBOLS)),
    min_size=1,
    max_size=8,
)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(writes)
@example(  # the attacks of issue 19, always tried: each path writes what would decide for alice
    [
        ("assert", ("member", ("w1", "sandbox")), "w1"),
        ("load", ("grant", ("alice", "w1", 1)), "w1"),
        ("mcp", ("lease", ("w2", "alice", 99, 2**53 - 1)), "w2"),
        ("mcp", ("resume", ("prod", 1)), "prod"),
        ("assert", ("receipt", ("d1", "outcome", "bob", T)), "w1"),
        ("hook", ("grant", ("alice", "/", 1)), "etc"),
        ("guard", ("revoke", ("bob", "w2", 1)), "w2"),
    ]
)
@example(  # the calendar's quiet times, each of which would deny alice's allowed requests at T
    [
        ("assert", ("quiet_day", ("write", 2)), "w1"),
        ("load", ("quiet_hours", ("deploy", 0, 24)), "w1"),
        ("mcp", ("quiet_date", ("write", "2026-12-01")), "w1"),
        ("mcp", ("freeze", ("deploy", T - 60, 3600)), "w1"),
    ]
)
def test_no_write_by_an_agent_turns_a_denial_into_an_allow(steps: list[tuple[str, Any, str]]) -> None:
    with tempfile.TemporaryDirectory() as tmp, open_store(str(Path(tmp) / "p.db"), schema_of(POLICY)) as store:
        store.assert_facts(OWNER_FACTS, author="jw")
        service = Service(POLICY, store)
        assert not any(service.gate.decide(r, T).allowed for r in DENIED)
        assert all(service.gate.decide(r, T).allowed for r in ALLOWED)
        tokens = Tokens.from_data({"principal": [{"name": "alice", "token": "a"}]})
        auth = {"authorization": "Bearer a"}
        mcp = create_mcp(service, ALICE) if any(path == "mcp" for path, _, _ in steps) else None
        with TestClient(create_app(service, tokens)) as http:
            for n, (path, (rel, args), target) in enumerate(steps):
                if path == "assert":
                    http.post("/assert", headers=auth, json={"facts": [{"relation": rel, "args": list(args)}]})
                elif path == "load":
                    http.post("/load", headers=auth, content=json.dumps({"relation": rel, "args": list(args)}))
                elif path == "mcp":

                    async def call(text: str = _text(rel, args)) -> None:
                        assert mcp is not None
                        async with Client(mcp) as c:
                            await c.call_tool("assert", {"text": text})

                    asyncio.run(call())
                elif path == "hook":
                    for event in ("PreToolUse", "PostToolUse"):
                        _handle(_cc, service, ALICE, _hook(event, "/" + target.strip("/"), n), now=T)
                else:
                    service.gate.guard(Request(f"g{n}", "write", target, "alice", 1), lambda: None, T)
        allowed = [r.id for r in DENIED if service.gate.decide(r, T).allowed]
        assert allowed == [], (allowed, steps)
        quiet = [r.id for r in ALLOWED if any(x.code == "quiet-time" for x in service.gate.decide(r, T).reasons)]
        assert quiet == [], (quiet, steps)


def test_the_owners_quiet_times_deny_the_allowed_requests() -> None:
    # what the property's calendar writes would do if an agent could make them
    for rel, args in [
        ("quiet_day", ("write", 2)),
        ("quiet_hours", ("write", 12, 13)),
        ("quiet_date", ("write", "2026-12-01")),
        ("freeze", ("write", T - 60, 3600)),
    ]:
        with tempfile.TemporaryDirectory() as tmp, open_store(str(Path(tmp) / "p.db"), schema_of(POLICY)) as store:
            store.assert_facts(OWNER_FACTS + [(rel, args)], author="jw")
            decision = Service(POLICY, store).gate.decide(ALLOWED[0], T)
            assert not decision.allowed and [x.code for x in decision.reasons] == ["quiet-time"], rel

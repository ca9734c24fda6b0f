"""`ordinance mcp`, tested with the MCP SDK's own client: in process, over
stdio and over streamable HTTP with bearer tokens."""

from __future__ import annotations

import asyncio
import threading
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from ordinance.cli.init import CLAUDE_CODE_POLICY
from ordinance.facts import Store, open_store, schema_of
from ordinance.rules import compile_text
from ordinance.serve import Principal, Service
from ordinance.serve.mcp import create_mcp
from served import AGENT, OWNER, free_port, write_tokens

POLICY = compile_text(CLAUDE_CODE_POLICY)
NOW = "2026-12-01T12:00:00Z"
REQUEST = {"id": "m1", "kind": "Bash", "target": "/p", "epoch": 1, "scope": "/p"}


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[Store]:
    with open_store(str(tmp_path / "m.db"), schema_of(POLICY)) as s:
        yield s


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_the_tools_in_process(store: Store) -> None:
    store.assert_facts([("grant", ("claude-code", "/p", 1))])
    server = create_mcp(Service(POLICY, store), Principal("claude-code", clock=True))

    async def go() -> dict[str, Any]:
        async with Client(server) as c:
            out: dict[str, Any] = {"tools": sorted(t.name for t in (await c.list_tools()).tools)}
            for name, args in [
                ("check", {"request": REQUEST, "now": NOW}),
                ("why", {"fact": 'permit("m2")', "request": {**REQUEST, "id": "m2"}, "now": NOW}),
                ("why_not", {"fact": 'permit("m3")', "now": NOW, "request": {**REQUEST, "id": "m3", "epoch": 2}}),
                ("query", {"pattern": "current_grant(A, S, E)", "now": NOW}),
                ("assert", {"text": 'claim("c1", "db", "role", "primary").'}),
                ("assert_grant", {"text": 'grant("claude-code", "/", 1).'}),
                ("check_as_other", {"request": {**REQUEST, "agent": "jw"}}),
                ("state", {"now": NOW}),
            ]:
                result = await c.call_tool(name.split("_grant")[0].split("_as_")[0], args)
                out[name] = (
                    result.is_error,
                    result.structured_content,
                    result.content[0].text if result.content else "",
                )
            return out

    out = run(go())
    assert out["tools"] == ["assert", "check", "lease", "query", "rehydrate", "state", "why", "why_not"]
    assert out["check"][0] is False and out["check"][1]["allowed"] is True
    assert store.events(kinds=["decision"])[-1].payload["request"]["id"] == "m1"  # logged
    assert out["why"][1]["holds"] is True
    assert out["why_not"][1]["holds"] is False
    assert out["query"][1]["answers"] == [{"A": "claude-code", "S": "/p", "E": 1}]
    assert out["assert"][1]["written"] == 1
    assert out["assert_grant"][0] is True and "error[may_not_assert]" in out["assert_grant"][2]
    assert out["check_as_other"][0] is True and "error[principal_mismatch]" in out["check_as_other"][2]
    assert out["state"][1]["projection"] == "state" and out["state"][1]["audience"] == "public"
    assert out["state"][1]["text"].startswith("# state ")
    assert [f.relation for f in store.events(kinds=["assert"])] == ["grant", "claim"]


def test_over_stdio(tmp_path: Path) -> None:
    (tmp_path / "policy.rules").write_text(CLAUDE_CODE_POLICY)
    open_store(str(tmp_path / "o.db")).close()  # as after `ordinance init`
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-c",
            "from ordinance.cli import main; main()",
            "mcp",
            "--principal",
            "claude-code",
            "--clock",
            "--policy",
            str(tmp_path / "policy.rules"),
            "--db",
            str(tmp_path / "o.db"),
        ],
    )

    async def go() -> tuple[Any, Any]:
        async with Client(params) as c:
            denied = await c.call_tool("check", {"request": REQUEST, "now": NOW})
            grant = await c.call_tool("assert", {"text": 'grant("claude-code", "/p", 1).'})
            return denied.structured_content, grant

    decision, grant = run(go())
    assert decision["allowed"] is False and decision["reasons"][0]["code"] == "no-grant"
    assert grant.is_error and "may_not_assert" in grant.content[0].text


def test_over_streamable_http_with_tokens(tmp_path: Path) -> None:
    import subprocess

    (tmp_path / "policy.rules").write_text(CLAUDE_CODE_POLICY)
    open_store(str(tmp_path / "o.db")).close()  # as after `ordinance init`
    tokens = write_tokens(tmp_path / "tokens.toml")
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from ordinance.cli import main; main()",
            "mcp",
            "--http",
            "--tokens",
            str(tokens),
            "--port",
            str(port),
            "--policy",
            str(tmp_path / "policy.rules"),
            "--db",
            str(tmp_path / "o.db"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/", timeout=2)
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
                time.sleep(0.2)
        assert httpx.post(url, json={}, timeout=5).status_code == 401  # no token, no tools

        async def call(token: str, tool: str, args: dict[str, Any]) -> Any:
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
                async with Client(streamable_http_client(url, http_client=http)) as c:  # type: ignore[arg-type]
                    return await c.call_tool(tool, args)

        agent = run(call(AGENT, "assert", {"text": 'grant("claude-code", "/p", 1).'}))
        assert agent.is_error and "may_not_assert" in agent.content[0].text
        owner = run(call(OWNER, "assert", {"text": 'grant("claude-code", "/p", 1).'}))
        assert not owner.is_error and owner.structured_content["written"] == 1
        checked = run(call(AGENT, "check", {"request": REQUEST, "now": NOW}))
        assert checked.structured_content["allowed"] is True
        assert checked.structured_content["request"]["agent"] == "claude-code"
        # the token's principal bounds the audience: the agent sees public only, the owner every layer
        hidden = run(
            call(OWNER, "assert", {"text": 'open_item("vault", "rotate the vault key").', "layer": "sovereign"})
        )
        assert not hidden.is_error
        for token, shown in ((AGENT, False), (OWNER, True)):
            state = run(call(token, "state", {"now": NOW})).structured_content
            assert ("vault" in state["text"]) is shown, state
        refused = run(call(AGENT, "state", {"now": NOW, "audience": "sovereign"}))
        assert refused.is_error and "error[audience_forbidden]" in refused.content[0].text
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_one_slow_call_does_not_stall_another(store: Store) -> None:
    """Two calls at once through the SDK's client: while one tool's work is
    held up in its worker thread, another tool call is answered (each runs
    off the event loop, not on it)."""
    store.assert_facts([("grant", ("claude-code", "/p", 1))])
    service = Service(POLICY, store)
    held, release = threading.Event(), threading.Event()
    real = service.query

    def slow_query(principal: Principal, body: Any) -> Any:
        held.set()
        release.wait(60)  # (the test releases it once the other call is answered)
        return real(principal, body)

    service.query = slow_query  # type: ignore[method-assign]
    server = create_mcp(service, Principal("claude-code", clock=True))

    async def go() -> tuple[Any, bool, Any]:
        async with Client(server) as c:
            slow = asyncio.create_task(c.call_tool("query", {"pattern": "current_grant(A, S, E)", "now": NOW}))
            while not held.is_set():
                await asyncio.sleep(0.01)
            fast = await c.call_tool("check", {"request": REQUEST, "now": NOW})
            still_held = not slow.done() and not release.is_set()
            release.set()
            return fast, still_held, await slow

    try:
        fast, still_held, slow = run(go())
    finally:
        release.set()
    assert still_held  # the check was answered while the query's work was held up
    assert not fast.is_error and fast.structured_content["allowed"] is True
    assert not slow.is_error and slow.structured_content["answers"]

"""`ordinance why --decision N` and `log --explain`: a logged decision's proof, rebuilt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from ordinance.cli import cli

PROJECT_CALLS = {
    "push": {"tool_name": "Bash", "tool_input": {"command": "cd sub && git push -f origin main"}},
    "env": {"tool_name": "Write", "tool_input": {"file_path": "sub/.env", "content": "K=1"}},
    "out": {"tool_name": "Write", "tool_input": {"file_path": "/etc/passwd", "content": "x"}},
}


def run(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def hook(root: Path, name: str) -> dict[str, Any]:
    call = {
        **PROJECT_CALLS[name],
        "session_id": "s-1",
        "cwd": str(root),
        "hook_event_name": "PreToolUse",
        "tool_use_id": f"toolu_{name}",
    }
    out = run("hook", "claude-code", "--agent", "claude-code", "--project", str(root), input=json.dumps(call))
    assert out.exit_code == 0, out.output
    return json.loads(out.output)["hookSpecificOutput"]


@pytest.fixture
def owner(tmp_path: Path) -> Path:
    """The owner's directory `init --claude-code --home` makes, outside the project."""
    return (tmp_path / "owner").resolve()


@pytest.fixture
def project(tmp_path: Path, owner: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = (tmp_path / "p").resolve()
    init = run("init", "--claude-code", str(root), "--home", str(owner))
    assert init.exit_code == 0, init.output
    monkeypatch.chdir(root)
    monkeypatch.setenv("ORDINANCE_DB", str(owner / "ordinance.db"))
    monkeypatch.setenv("ORDINANCE_POLICY", str(owner / "policy.rules"))
    return root


def seqs(root: Path) -> dict[str, int]:
    rows = json.loads(run("log", "--json").output)
    return {row["request"]["id"].removeprefix("cc-toolu_"): row["seq"] for row in rows}


def test_why_decision_rebuilds_a_blocked_bash_calls_proof_in_text_json_and_dot(project: Path) -> None:
    assert hook(project, "push")["permissionDecision"] == "deny"
    seq = seqs(project)["push"]
    text = run("why", "--decision", str(seq))
    assert text.exit_code == 0, text.output
    assert f"decision {seq}, rebuilt under its own policy" in text.output
    assert "forbid force-push-main" in text.output and "git push -f origin main" in text.output
    data = json.loads(run("why", "--decision", str(seq), "--json").output)
    assert data["same_policy"] and data["same"]
    (reason,) = [r for r in data["decision"]["reasons"] if r["code"] == "force-push-main"]
    assert reason["proof"]["kind"] == "rule"
    dot = run("why", "--decision", str(seq), "--dot").output
    assert dot.startswith("digraph decision {") and "force-push-main" in dot and "->" in dot


def test_a_changed_policy_says_so_and_shows_the_logged_answer_beside_its_own(project: Path, owner: Path) -> None:
    hook(project, "push")
    seq = seqs(project)["push"]
    policy = owner / "policy.rules"
    policy.write_text(policy.read_text().replace('forbid(A, "force-push-main"', 'forbid_unused(A, "force-push-main"'))
    policy.write_text(".decl forbid_unused(a: symbol, c: symbol, d: symbol)\n" + policy.read_text())
    out = run("why", "--decision", str(seq))
    assert out.exit_code == 0, out.output
    assert "the policy has changed since" in out.output
    assert "logged: DENIED (force-push-main); this policy answers:" in out.output
    data = json.loads(run("why", "--decision", str(seq), "--json").output)
    assert not data["same_policy"] and not data["same"]
    assert data["logged"]["allowed"] is False and data["decision"]["allowed"] is True


def test_no_decision_at_a_seq_is_an_error_not_a_crash(project: Path) -> None:
    out = CliRunner().invoke(cli, ["why", "--decision", "999"])
    assert out.exit_code != 0 and "error[no_decision]" in out.output + (out.stderr or "")
    both = CliRunner().invoke(cli, ["why", "--decision", "1", 'permit("x")'])
    assert both.exit_code == 2


def test_log_shows_a_bash_calls_command_and_an_ask_as_ask(project: Path) -> None:
    assert hook(project, "push")["permissionDecision"] == "deny"
    assert hook(project, "env")["permissionDecision"] == "ask"
    table = run("log").output
    assert "cd sub && git push -f origin main" in table
    assert "ask" in table.split("toolu_env", 1)[1].splitlines()[0]
    answers = {row["request"]["id"]: row["answer"] for row in json.loads(run("log", "--json").output)}
    assert answers == {"cc-toolu_push": "DENIED", "cc-toolu_env": "ask"}


def test_log_explain_prints_each_decisions_rebuilt_proof(project: Path) -> None:
    hook(project, "out")
    out = run("log", "--request", "cc-toolu_out", "--explain")
    assert out.exit_code == 0, out.output
    assert "forbid outside-project /etc/passwd" in out.output and "rebuilt under its own policy" in out.output
    data = json.loads(run("log", "--request", "cc-toolu_out", "--explain", "--json").output)
    assert [d["decision"]["reasons"][0]["code"] for d in data] == ["outside-project"]


def test_the_service_and_mcp_rebuild_a_decision_for_its_agent_and_the_owner_only(tmp_path: Path) -> None:
    import asyncio

    from mcp import Client

    from ordinance.cli.init import CLAUDE_CODE_POLICY
    from ordinance.diagnostics import OrdinanceError
    from ordinance.facts import open_store, schema_of
    from ordinance.rules import compile_text
    from ordinance.serve import Principal, Service
    from ordinance.hosts import claude_code as _cc
    from ordinance.hosts.flow import handle as _handle
    from ordinance.serve.mcp import create_mcp
    from ordinance.values import parse_instant

    policy = compile_text(CLAUDE_CODE_POLICY)
    with open_store(str(tmp_path / "s.db"), schema_of(policy)) as store:
        store.assert_facts([("grant", ("claude-code", "/p", 1))])
        service = Service(policy, store)
        call = {**PROJECT_CALLS["out"], "cwd": "/p", "hook_event_name": "PreToolUse", "tool_use_id": "t1"}
        _handle(_cc, service, Principal("claude-code"), call, now=parse_instant("2026-12-01T12:00:00Z"))
        (logged,) = store.events(kinds=["decision"])
        own = service.why(Principal("claude-code"), {"decision": logged.seq})
        assert own["same"] and own["decision"]["reasons"][0]["detail"] == "/etc/passwd"
        assert "proof" not in own["decision"]["reasons"][0]  # an agent sees public facts only
        owner = service.why(Principal("jw", owner=True), {"decision": logged.seq})
        assert owner["decision"]["reasons"][0]["proof"]["kind"] == "rule"
        with pytest.raises(OrdinanceError) as refused:
            service.why(Principal("bob"), {"decision": logged.seq})
        assert refused.value.code == "forbidden"
        with pytest.raises(OrdinanceError) as bad:
            service.why(Principal("jw", owner=True), {"decision": "1"})
        assert bad.value.code == "bad_request"

        async def ask() -> Any:
            async with Client(create_mcp(service, Principal("jw", owner=True))) as c:
                return (await c.call_tool("why", {"decision": logged.seq})).structured_content

        assert asyncio.run(ask())["decision"]["reasons"][0]["code"] == "outside-project"


def test_a_policy_without_the_tool_relations_rebuilds_without_error(project: Path, owner: Path) -> None:
    hook(project, "push")
    seq = seqs(project)["push"]
    (owner / "policy.rules").write_text('.include "continuity"\n')
    data = json.loads(run("why", "--decision", str(seq), "--json").output)
    assert not data["same_policy"] and data["decision"]["errors"] == []
    assert data["decision"]["allowed"] is True  # the project's grant permits; nothing here reads the command

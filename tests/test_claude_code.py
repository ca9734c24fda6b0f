"""Claude Code hooks on recorded payloads: decisions, receipts, error paths."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from ordinance.cli.init import CLAUDE_CODE_POLICY
from ordinance.facts import open_store, schema_of
from ordinance.gate import Gate, Request, request_relations
from ordinance.rules import compile_text
from ordinance.serve import Principal, Service
from ordinance.hosts import claude_code
from ordinance.hosts.bash import read
from ordinance.hosts.claude_code import tool_request
from ordinance.hosts.flow import handle as handle_with
from ordinance.values import parse_instant

HERE = Path(__file__).parent / "claude_code"
POLICY = compile_text(CLAUDE_CODE_POLICY)
NOW = parse_instant("2026-12-01T12:00:00Z")
AGENT = Principal("claude-code")


def handle(service: Service, principal: Principal, payload: Any, **kw: Any) -> dict[str, Any]:
    return handle_with(claude_code, service, principal, payload, **kw)


def verdict(out: dict[str, Any]) -> str:
    """The answer's permissionDecision; `defer` when it has none (Claude Code's own permissions decide)."""
    return str(out.get("permissionDecision", "defer"))


def payload(name: str) -> dict[str, Any]:
    return json.loads((HERE / f"{name}.json").read_text())


@pytest.fixture()
def service(tmp_path: Path) -> Iterator[Service]:
    with open_store(str(tmp_path / "cc.db"), schema_of(POLICY)) as store:
        store.assert_facts([("grant", ("claude-code", "/home/me/p", 1))], source="init", author="jw")
        yield Service(POLICY, store)


def decide(service: Service, name: str, **kw: Any) -> dict[str, Any]:
    out = handle(service, AGENT, payload(name), now=NOW, **kw)
    return out["hookSpecificOutput"]


def test_a_plain_push_is_permitted_deferring_to_claude_code_with_its_intent_receipt(service: Service) -> None:
    out = decide(service, "bash_push")
    assert out["hookEventName"] == "PreToolUse"
    assert "permissionDecision" not in out, out  # never widen the host: its own permissions decide
    receipts = [e.args for e in service.store.events(kinds=["receipt"])]
    assert receipts == [("cc-toolu_01", "intent", "claude-code", NOW)]
    logged = service.store.events(kinds=["decision"])
    assert len(logged) == 1 and logged[0].payload["allowed"] is True


def test_the_decision_and_its_intent_receipt_are_one_commit_and_the_decision_is_logged_as_check_logs_it(
    service: Service, tmp_path: Path
) -> None:
    out = decide(service, "bash_push")
    (logged,) = service.store.events(kinds=["decision"])
    assert out["additionalContext"] == f"ordinance permits this (decision {logged.seq})"
    receipt = service.store.events(kinds=["receipt"])[0]
    assert receipt.seq == logged.seq + 1 and receipt.time == logged.time  # one transaction
    with open_store(str(tmp_path / "twin.db"), schema_of(POLICY)) as twin:  # Gate.check on the same store
        twin.assert_facts([("grant", ("claude-code", "/home/me/p", 1))], source="init", author="jw")
        request = tool_request(payload("bash_push"), "claude-code", service.gate.request_relations, project=None)
        Gate(POLICY, twin).check(request, NOW)
        (want,) = twin.events(kinds=["decision"])
    fields = ("seq", "kind", "relation", "args", "source", "author", "layer", "resource", "epoch", "payload")
    assert [getattr(logged, f) for f in fields] == [getattr(want, f) for f in fields]
    assert Gate(POLICY, service.store).replay(logged).payload() == logged.payload


def test_an_intent_the_fence_refuses_denies_and_its_decision_stays_logged(service: Service) -> None:
    service.store.fence("/home/me/p", 2)  # a newer lease on the call's target
    out = decide(service, "bash_push")
    assert out["permissionDecision"] == "deny" and "error[stale_epoch]" in out["permissionDecisionReason"]
    (logged,) = service.store.events(kinds=["decision"])
    assert logged.payload["allowed"] is True  # the gate allowed it; the store refused the intent
    assert service.store.events(kinds=["receipt"]) == []
    assert service.store.revision() == logged.seq


def test_a_compound_command_force_pushing_to_main_is_denied(service: Service) -> None:
    out = decide(service, "compound_force_push")
    assert out["permissionDecision"] == "deny"
    assert "force-push-main" in out["permissionDecisionReason"]
    assert "git push -f origin main" in out["permissionDecisionReason"]
    assert service.store.events(kinds=["receipt"]) == []  # no intent for a blocked call


def test_a_bash_c_wrapper_is_read_inside(service: Service) -> None:
    out = decide(service, "bash_c_wrapper")
    assert out["permissionDecision"] == "deny" and "force-push-main" in out["permissionDecisionReason"]


@pytest.mark.parametrize(
    "command,decision",
    [
        ("git push -uf origin main", "deny"),
        ("git push origin +main", "deny"),
        ("git push --force-with-lease origin HEAD:main", "deny"),
        ("/usr/bin/git -C sub push --force origin refs/heads/main", "deny"),
        ("echo ok; (git push -f origin main)", "deny"),
        ("sh -c 'sudo git push -f origin main'", "deny"),
        ("eval 'git push -f origin main'", "deny"),
        ("bash <<< 'git push --force origin main'", "deny"),
        ("git push origin main", "defer"),
        ("git push -f origin feature", "defer"),
        ("git commit -m 'never git push -f origin main'", "defer"),
    ],
)
def test_force_pushes_to_main_in_any_shape(service: Service, command: str, decision: str) -> None:
    call = {**payload("bash_push"), "tool_input": {"command": command}, "tool_use_id": "t-" + command}
    out = handle(service, AGENT, call, now=NOW)["hookSpecificOutput"]
    assert verdict(out) == decision, out


def test_a_reason_escapes_what_the_agent_wrote(service: Service) -> None:
    call = {**payload("bash_push"), "tool_input": {"command": "git push -f origin main \x1b[2J\u202e"}}
    reason = handle(service, AGENT, call, now=NOW)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "force-push-main" in reason and "\\u001b[2J" in reason and "\\u202e" in reason
    assert not any(c < " " or c == "\u202e" for c in reason)


def test_writes_inside_the_project_pass_and_outside_are_denied(service: Service) -> None:
    assert verdict(decide(service, "write_inside")) == "defer"
    out = decide(service, "edit_outside")
    assert out["permissionDecision"] == "deny"
    assert "outside-project (/home/me/.bashrc)" in out["permissionDecisionReason"]  # normalized path


def test_a_flag_maps_to_ask(service: Service) -> None:
    out = decide(service, "webfetch")
    assert out["permissionDecision"] == "ask" and "web-fetch" in out["permissionDecisionReason"]
    secret = {**payload("write_inside"), "tool_input": {"file_path": "config/../.env", "content": "K=1"}}
    out = handle(service, AGENT, {**secret, "tool_use_id": "toolu_07"}, now=NOW)["hookSpecificOutput"]
    assert out["permissionDecision"] == "ask" and "secret-file" in out["permissionDecisionReason"]


def test_post_tool_use_writes_the_outcome_of_an_allowed_call_only(service: Service) -> None:
    assert handle(service, AGENT, payload("write_inside_post"), now=NOW) == {}
    assert service.store.events(kinds=["receipt"]) == []  # never allowed: no outcome
    decide(service, "write_inside")
    assert handle(service, AGENT, payload("write_inside_post"), now=NOW + 5) == {}
    handle(service, AGENT, payload("write_inside_post"), now=NOW + 6)  # a repeat adds nothing
    kinds = [(e.args[0], e.args[1]) for e in service.store.events(kinds=["receipt"])]
    assert kinds == [("cc-toolu_04", "intent"), ("cc-toolu_04", "outcome")]
    model = service.gate.model(service.store.revision(), NOW + 10)
    assert model.contains("done", ("cc-toolu_04",))


def test_the_owners_stop_halts_everything(service: Service) -> None:
    service.store.assert_facts([("stop", ("everything", NOW - 60))], author="jw")
    for name in ("bash_push", "write_inside", "webfetch"):
        out = decide(service, name)
        assert out["permissionDecision"] == "deny" and "owner-stop" in out["permissionDecisionReason"], name


def test_an_ungranted_agent_is_denied(service: Service) -> None:
    out = handle(service, Principal("mallory"), payload("bash_push"), now=NOW)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and "no-grant" in out["permissionDecisionReason"]


def test_bad_payloads_deny_as_data(service: Service) -> None:
    for bad in ([], {"hook_event_name": "PreToolUse"}, {"tool_name": "Bash", "tool_input": "rm -rf /"}):
        out = handle(service, AGENT, bad, now=NOW)["hookSpecificOutput"]
        assert out["permissionDecision"] == "deny" and "error[" in out["permissionDecisionReason"]
    assert service.store.events(kinds=["receipt"]) == []
    broken = {**payload("write_inside_post"), "tool_input": "rm -rf /"}
    told = handle(service, AGENT, broken, now=NOW)
    assert set(told) == {"systemMessage"} and "error[bad_hook_payload]" in told["systemMessage"]


def test_a_tool_call_becomes_request_facts() -> None:
    r = tool_request(payload("compound_force_push"), "claude-code", request_relations(POLICY))
    facts = r.facts()
    assert r.kind == "Bash" and r.scope == "/home/me/p" and r.target == "/home/me/p"
    assert ("cc-toolu_02", "Bash") in facts["request_tool"]
    assert ("cc-toolu_02", "command", "cd sub && git push -f origin main") in facts["request_input"]
    assert facts["request_command"] == {("cc-toolu_02", 0, "cd sub"), ("cc-toolu_02", 1, "git push -f origin main")}
    assert ("cc-toolu_02", 1, 2, "-f") in facts["request_word"]
    edit = tool_request(payload("edit_outside"), "claude-code", request_relations(POLICY))
    assert edit.target == "/home/me/.bashrc"
    assert edit.facts()["request_path"] == {("cc-toolu_05", "/home/me/.bashrc")}
    assert ("cc-toolu_05", "replace_all", "false") in edit.facts()["request_input"]


def test_undeclared_tool_relations_are_left_out() -> None:
    plain = compile_text('.include "continuity"\n')
    r = tool_request(payload("bash_push"), "claude-code", request_relations(plain))
    assert r.attributes == ()


@pytest.mark.parametrize(
    "text,commands,unresolved",
    [
        ("cd sub && git push -f origin main", [["cd", "sub"], ["git", "push", "-f", "origin", "main"]], []),
        ("a || b; c | d & e", [["a"], ["b"], ["c"], ["d"], ["e"]], []),
        ("(cd a && make) || echo 'a && b'", [["cd", "a"], ["make"], ["echo", "a && b"]], []),
        ('bash -c "git push --force"', [["bash", "-c", "git push --force"], ["git", "push", "--force"]], []),
        ("FOO=1 sudo -u root rm -rf /", [["sudo", "-u", "root", "rm", "-rf", "/"], ["rm", "-rf", "/"]], []),
        ("echo $(git rev-parse HEAD)", [["git", "rev-parse", "HEAD"], ["echo", "$(git rev-parse HEAD)"]], []),
        ('git commit -m "fix: a \\"b\\""', [["git", "commit", "-m", 'fix: a "b"']], []),
        ("ls # rm -rf /", [["ls"]], []),
        ("echo 'unterminated", [["echo"]], [(-1, "parse-error")]),
        ("g\\it push", [["git", "push"]], []),
        (
            "eval \"cd /\" '&& rm -rf x'",
            [["eval", "cd /", "&& rm -rf x"], ["cd", "/"], ["rm", "-rf", "x"]],
            [(0, "eval")],
        ),
        ("sh <<< 'ls; pwd'", [["sh"], ["ls"], ["pwd"]], []),
    ],
)
def test_the_shell_reading(text: str, commands: list[list[str]], unresolved: list[tuple[int, str]]) -> None:
    reading = read(text, "/p")
    assert [list(c) for c in reading.commands] == commands
    assert reading.unresolved == unresolved


def command_hook(payload: str, *options: str) -> subprocess.CompletedProcess[bytes]:
    """`ordinance hook claude-code OPTIONS` in a process of its own, given
    the recorded payload `payload` on stdin, as Claude Code runs it."""
    return subprocess.run(
        [sys.executable, "-c", "from ordinance.cli import main; main()", "hook", "claude-code", *options],
        input=(HERE / f"{payload}.json").read_bytes(),
        capture_output=True,
        timeout=60,
    )


def test_the_command_hook_in_process(tmp_path: Path) -> None:
    policy = tmp_path / "policy.rules"
    policy.write_text(CLAUDE_CODE_POLICY)
    db = tmp_path / "o.db"
    with open_store(str(db), schema_of(POLICY)) as store:
        store.assert_facts([("grant", ("claude-code", "/home/me/p", 1))])
    run = command_hook("compound_force_push", "--db", str(db), "--policy", str(policy))
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and "force-push-main" in out["permissionDecisionReason"]


def test_the_command_hook_fails_closed_when_the_server_is_unreachable() -> None:
    run = command_hook("bash_push", "--server", "http://127.0.0.1:9", "--timeout", "2")
    out = json.loads(run.stdout)["hookSpecificOutput"]
    assert run.returncode == 0 and out["permissionDecision"] == "deny"
    assert "unreachable" in out["permissionDecisionReason"]
    opened = command_hook("bash_push", "--server", "http://127.0.0.1:9", "--fail-open")
    assert opened.returncode == 0 and opened.stdout.strip() == b""


def test_a_post_tool_use_the_server_cannot_record_says_so() -> None:
    """After the tool has run there is nothing to deny: the command hook
    tells the user the outcome receipt was not recorded, as the server's
    own failures do (hosts/claude_code.failure)."""
    run = command_hook("write_inside_post", "--server", "http://127.0.0.1:9")
    out = json.loads(run.stdout)
    assert run.returncode == 0 and "hookSpecificOutput" not in out
    assert "unreachable" in out["systemMessage"] and "outcome receipt was not recorded" in out["systemMessage"]


def test_a_request_is_a_plain_request() -> None:
    r = tool_request(payload("webfetch"), "claude-code", request_relations(POLICY))
    assert isinstance(r, Request) and r.target == "https://docs.example.com/api"


def test_the_example_policys_own_test_blocks_pass(tmp_path: Path) -> None:
    from ordinance.testing import run_blocks

    (tmp_path / "policy.rules").write_text(CLAUDE_CODE_POLICY)
    results = run_blocks(str(tmp_path / "policy.rules"))
    assert len(results) == 4 and all(r.passed for r in results), [(r.failed, r.error) for r in results]

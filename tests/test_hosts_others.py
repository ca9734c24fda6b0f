"""The other hosts' hooks (`ordinance hook codex|gemini|cursor|copilot`) on
payloads captured from the real Gemini CLI (tests/test_e2e_gemini.py) and
documented ones for Codex, Cursor and Copilot CLI (each fixture's "//" says
where its shape comes from): the same request facts as Claude Code's, the
answer in the host's shape, failures denied."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator

import pytest

from ordinance.cli.hook_client import answer
from ordinance.cli.init import CLAUDE_CODE_POLICY
from ordinance.facts import open_store, schema_of
from ordinance.hosts import Verdict, codex, copilot, cursor, gemini
from ordinance.hosts import flow
from ordinance.hosts.flow import handle
from ordinance.rules import compile_text
from ordinance.serve import Principal, Service
from ordinance.values import parse_instant

HERE = Path(__file__).parent / "hosts_fixtures"
POLICY = compile_text(CLAUDE_CODE_POLICY)
NOW = parse_instant("2026-12-01T12:00:00Z")
PROJECT = "/tmp/e2e/project"  # the project of every fixture


def body(host: str, name: str, **change: Any) -> bytes:
    payload = json.loads((HERE / host / f"{name}.json").read_text())
    payload.update(change)
    return json.dumps(payload).encode()


def served(tmp_path: Path, policy: Any) -> Iterator[Service]:
    with open_store(str(tmp_path / "hosts.db"), schema_of(policy)) as store:
        store.assert_facts([("grant", ("claude-code", PROJECT, 1))], source="init", author="jw")
        yield Service(policy, store)


@pytest.fixture()
def service(tmp_path: Path) -> Iterator[Service]:
    yield from served(tmp_path, POLICY)


def decoded(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return None  # as `ordinance hook HOST` hands on a body that is not JSON


def ask(service: Service, host: ModuleType, data: bytes) -> dict[str, Any]:
    """The host's answer through the one flow (what /hooks/HOST and `ordinance hook HOST` run)."""
    return handle(host, service, Principal("claude-code"), decoded(data), project=PROJECT, now=NOW)


def test_gemini_force_push_is_denied_in_its_shape(service: Service) -> None:
    out = ask(service, gemini, body("gemini", "before_tool_shell_force_push"))
    assert out["decision"] == "deny" and "force-push-main" in out["reason"]


def test_gemini_write_outside_is_denied(service: Service) -> None:
    out = ask(service, gemini, body("gemini", "before_tool_write_outside"))
    assert out["decision"] == "deny" and "outside-project" in out["reason"]


def test_gemini_permitted_call_is_not_refused_and_its_after_tool_closes_the_intent(service: Service) -> None:
    out = ask(service, gemini, body("gemini", "before_tool_shell"))
    assert out.get("decision") not in ("deny", "block", "ask"), out
    assert ask(service, gemini, body("gemini", "after_tool_shell")) == {}
    kinds = sorted(e.args[1] for e in service.store.events(kinds=["receipt"]))
    assert kinds == ["intent", "outcome"]  # BeforeTool and AfterTool name the same call


def test_gemini_tools_become_claude_codes() -> None:
    call = gemini.call(json.loads(body("gemini", "before_tool_write_outside")), PROJECT)
    assert call.tool == "Write" and call.inputs["file_path"] == "/tmp/e2e/outside/x.txt"
    assert call.writes == ("/tmp/e2e/outside/x.txt",) and call.contents == ("content",)
    call = gemini.call(
        {"hook_event_name": "BeforeTool", "cwd": PROJECT, "tool_name": "run_shell_command"}
        | {"tool_input": {"command": "ls", "dir_path": "sub"}},
        PROJECT,
    )
    assert call.tool == "Bash" and call.cwd == PROJECT + "/sub" and call.shell == "ls"


@pytest.mark.parametrize("data", [b"not json", b"[]", b'{"hook_event_name": "BeforeTool", "tool_input": 3}'])
def test_gemini_bad_input_is_denied(service: Service, data: bytes) -> None:
    out = ask(service, gemini, data)
    assert out["decision"] == "deny" and "error[bad_hook_payload]" in out["reason"]


def test_an_unreachable_gate_is_each_hosts_deny() -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    gate = f"http://127.0.0.1:{port}"

    def closed(host: str, data: bytes, fail_open: bool = False) -> Any:
        return answer(gate, data, None, 2.0, fail_open, host=host)

    assert closed("gemini", body("gemini", "before_tool_shell"))["decision"] == "deny"
    assert closed("codex", body("codex", "pre_tool_use_bash"))["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert closed("cursor", body("cursor", "before_shell_execution"))["permission"] == "deny"
    assert closed("copilot", body("copilot", "pre_tool_use_bash"))["permissionDecision"] == "deny"
    # --fail-open leaves the call to the host (no answer printed)
    assert closed("gemini", body("gemini", "before_tool_shell"), fail_open=True) is None


def test_codex_force_push_is_denied(service: Service) -> None:
    out = ask(service, codex, body("codex", "pre_tool_use_bash"))["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and "force-push-main" in out["permissionDecisionReason"]


def test_codex_permitted_push_is_left_to_codex(service: Service) -> None:
    data = body("codex", "pre_tool_use_bash", tool_input={"command": "git push origin feature"})
    assert ask(service, codex, data) == {}


def test_codex_apply_patch_asks_about_every_file_it_touches(service: Service) -> None:
    call = codex.call(json.loads(body("codex", "pre_tool_use_apply_patch")), PROJECT)
    assert call.writes == call.paths == ("src/app.py", "../outside/x.txt")
    assert call.tool == "Edit" and call.id == "codex-call_patch" and call.contents == ("patch",)
    out = ask(service, codex, body("codex", "pre_tool_use_apply_patch"))["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and "outside-project" in out["permissionDecisionReason"]


def test_codex_cannot_ask_so_an_ask_is_refused(service: Service) -> None:
    patch = "*** Begin Patch\n*** Add File: .env\n+KEY=1\n*** End Patch\n"
    data = body("codex", "pre_tool_use_apply_patch", tool_input={"command": patch})
    out = ask(service, codex, data)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and "secret-file" in out["permissionDecisionReason"]
    assert "cannot ask" in out["permissionDecisionReason"]


def test_cursor_force_push_through_cd_is_denied(service: Service) -> None:
    out = ask(service, cursor, body("cursor", "before_shell_execution"))
    assert out["permission"] == "deny" and "force-push-main" in out["agent_message"]


def test_cursor_permitted_read_is_left_to_cursor(service: Service) -> None:
    out = ask(service, cursor, body("cursor", "before_read_file"))
    assert out.get("permission") in (None, "allow"), out
    call = cursor.call(json.loads(body("cursor", "before_read_file")), PROJECT)
    assert call.tool == "Read" and call.session == "conv-e2e" and call.paths == ("/tmp/e2e/project/src/app.py",)


def test_cursor_after_shell_execution_closes_the_intent_of_its_before(service: Service) -> None:
    data = json.loads(body("cursor", "before_shell_execution", command="git status"))
    assert ask(service, cursor, json.dumps(data).encode()).get("permission") != "deny"
    data.update(hook_event_name="afterShellExecution", output="clean", duration=5)
    assert ask(service, cursor, json.dumps(data).encode()) == {}
    kinds = sorted(e.args[1] for e in service.store.events(kinds=["receipt"]))
    assert kinds == ["intent", "outcome"]


def test_copilot_force_push_and_write_outside_are_denied(service: Service) -> None:
    out = ask(service, copilot, body("copilot", "pre_tool_use_bash"))
    assert out["permissionDecision"] == "deny" and "force-push-main" in out["permissionDecisionReason"]
    out = ask(service, copilot, body("copilot", "pre_tool_use_create"))
    assert out["permissionDecision"] == "deny" and "outside-project" in out["permissionDecisionReason"]


def test_copilot_post_tool_use_is_never_a_deny(service: Service) -> None:
    data = body("copilot", "pre_tool_use_bash", toolResult={"resultType": "success"}, toolArgs="{bad")
    assert ask(service, copilot, data) == {}  # unreadable after the fact: nothing to refuse
    assert answer("http://127.0.0.1:9", data, None, 2.0, False, host="copilot") == {}


PATCH = "*** Begin Patch\n*** Add File: {}\n+x\n*** Add File: {}\n+y\n*** End Patch\n"


def test_one_call_of_several_files_deny_wins_then_ask(service: Service) -> None:
    """A patch of several files is one call: a forbidden file denies it
    whatever the others are, a flagged one asks (Codex: refuses, saying so)."""

    def patched(*files: str) -> dict[str, Any]:
        data = body("codex", "pre_tool_use_apply_patch", tool_input={"command": PATCH.format(*files)})
        return dict(ask(service, codex, data).get("hookSpecificOutput") or {})

    out = patched(".env", "../outside/x.txt")
    assert out["permissionDecision"] == "deny" and "outside-project" in out["permissionDecisionReason"]
    assert "cannot ask" not in out["permissionDecisionReason"]
    out = patched("src/a.py", ".env")
    assert out["permissionDecision"] == "deny" and "secret-file" in out["permissionDecisionReason"]
    assert "cannot ask" in out["permissionDecisionReason"]
    assert patched("src/a.py", "src/b.py") == {}  # permitted: Codex decides


def test_allow_only_when_the_policy_auto_allows(tmp_path: Path) -> None:
    """A permitted call gets no decision in any host's shape; one the policy
    auto-allows is each host's allow (Codex has none: still no decision)."""
    policy = compile_text(CLAUDE_CODE_POLICY + '\nauto_allow(A) :- request_tool(A, "Read").\n')
    read = {"hook_event_name": "BeforeTool", "cwd": PROJECT, "tool_name": "read_file"}
    for service in served(tmp_path, policy):
        out = ask(service, gemini, json.dumps(read | {"tool_input": {"absolute_path": PROJECT + "/a"}}).encode())
        assert out["decision"] == "allow"
        out = ask(service, gemini, body("gemini", "before_tool_shell"))
        assert "decision" not in out  # permitted, not auto-allowed: the host's own flow
        assert ask(service, cursor, body("cursor", "before_read_file"))["permission"] == "allow"
        view = body("copilot", "pre_tool_use_bash", toolName="view", toolArgs=json.dumps({"path": PROJECT + "/a"}))
        assert ask(service, copilot, view) == {"permissionDecision": "allow"}
        data = body("codex", "pre_tool_use_bash", tool_name="Read", tool_input={"file_path": PROJECT + "/a"})
        assert ask(service, codex, data) == {}


@pytest.mark.parametrize("host", [gemini, codex, cursor, copilot])
def test_a_verdict_no_host_knows_fails_closed_and_reasons_are_escaped(host: ModuleType) -> None:
    with pytest.raises(ValueError):
        Verdict("maybe")  # flow.handle answers the host's failure
    shown = json.dumps(host.render(Verdict("deny", "\x1b[2Jgone")), ensure_ascii=False)
    assert "\x1b" not in shown and "[2Jgone" in shown  # no control character an agent wrote reaches the terminal


def test_the_cli_subcommand_answers_in_process(tmp_path: Path) -> None:
    policy, db = tmp_path / "policy.rules", tmp_path / "o.db"
    policy.write_text(CLAUDE_CODE_POLICY)
    with open_store(str(db), schema_of(POLICY)) as store:
        store.assert_facts([("grant", ("gemini", PROJECT, 1))], source="init", author="jw")
    ordinance = str(Path(sys.executable).with_name("ordinance"))
    done = subprocess.run(
        [ordinance, "hook", "gemini", "--db", str(db), "--policy", str(policy), "--project", PROJECT],
        input=body("gemini", "before_tool_shell_force_push"),
        capture_output=True,
        check=True,
    )
    out = json.loads(done.stdout)
    assert out["decision"] == "deny" and "force-push-main" in out["reason"]
    done = subprocess.run(
        [ordinance, "hook", "gemini", "--db", str(db), "--policy", str(policy), "--project", PROJECT],
        input=b"not json",
        capture_output=True,
    )
    out = json.loads(done.stdout)
    assert done.returncode == 0 and out["decision"] == "deny" and "error[bad_hook_payload]" in out["reason"]


DENIED = {  # each host's fixture of a forbidden call, and its deny read in the host's shape
    "gemini": ("before_tool_shell_force_push", lambda out: out["decision"] == "deny" and out["reason"]),
    "codex": (
        "pre_tool_use_bash",
        lambda out: (
            out["hookSpecificOutput"]["permissionDecision"] == "deny"
            and out["hookSpecificOutput"]["permissionDecisionReason"]
        ),
    ),
    "cursor": ("before_shell_execution", lambda out: out["permission"] == "deny" and out["agent_message"]),
    "copilot": (
        "pre_tool_use_bash",
        lambda out: out["permissionDecision"] == "deny" and out["permissionDecisionReason"],
    ),
}


def test_every_host_is_served_and_asks_the_server_as_claude_code_does(tmp_path: Path) -> None:
    """/hooks/HOST on a running server, and `ordinance hook HOST --server URL
    --token-file FILE` both through the standard-library fast path and
    through the click command (an option the fast path does not take)."""
    from tests.served import AGENT, OWNER, Served, write_tokens

    (tmp_path / "policy.rules").write_text(CLAUDE_CODE_POLICY)
    tokens = write_tokens(tmp_path / "tokens.toml")
    token_file = tmp_path / "agent.token"
    token_file.write_text(AGENT + "\n")
    with Served(tmp_path / "policy.rules", str(tmp_path / "o.db"), tokens, extra=("--project", PROJECT)) as server:
        assert server.post("/assert", OWNER, json={"text": f'grant("claude-code", "{PROJECT}", 1).'}).status_code == 200

        def hook(host: str, data: bytes, *options: str) -> Any:
            run = subprocess.run(
                [sys.executable, "-c", "from ordinance.cli import main; main()", "hook", host, "--server", server.url]
                + list(options),
                input=data,
                capture_output=True,
                timeout=60,
                env={"PATH": ""},  # no ORDINANCE_TOKEN
            )
            assert run.returncode == 0, run.stderr
            return json.loads(run.stdout)

        for host, (fixture, denied) in DENIED.items():
            data = body(host, fixture)
            out = server.post(f"/hooks/{host}", AGENT, content=data).json()
            assert denied(out) and "force-push-main" in json.dumps(out), (host, out)
            out = hook(host, data, "--token-file", str(token_file))
            assert denied(out) and "force-push-main" in json.dumps(out), (host, out)
            out = hook(host, data, "--token-file", str(token_file), "--agent", "ignored-with-a-server")  # click
            assert denied(out) and "force-push-main" in json.dumps(out), (host, out)
            out = hook(host, data, "--token-file", str(tmp_path / "nope"))
            assert denied(out) and "cannot be read" in json.dumps(out), (host, out)
            out = server.post(f"/hooks/{host}", "stolen", content=data).json()
            assert denied(out) and "unauthorized" in json.dumps(out), (host, out)
        permitted = hook("gemini", body("gemini", "before_tool_shell"), "--token-file", str(token_file))
        assert "decision" not in permitted  # deferred: Gemini CLI's own approval decides
        fast = subprocess.run(  # the fast path: neither click nor the library is loaded
            [sys.executable, "-X", "importtime", "-c", "from ordinance.cli import main; main()", "hook", "codex"]
            + ["--server", server.url, "--token-file", str(token_file)],
            input=body("codex", "pre_tool_use_bash"),
            capture_output=True,
            timeout=60,
        )
        assert DENIED["codex"][1](json.loads(fast.stdout))
        loaded = fast.stderr.decode()
        assert "ordinance.cli.hook_client" in loaded and "click" not in loaded and "ordinance.hosts" not in loaded


def receipts(service: Service) -> list[tuple[str, str]]:
    return [(str(e.args[0]), str(e.args[1])) for e in service.store.events(kinds=["receipt"])]


# a harmless call of each host without call ids: (module, its before payload, its after payload)
TWICE = {
    "gemini": (gemini, body("gemini", "before_tool_shell"), body("gemini", "after_tool_shell")),
    "cursor": (
        cursor,
        body("cursor", "before_shell_execution", command="git status"),
        body("cursor", "before_shell_execution", command="git status", hook_event_name="afterShellExecution"),
    ),
    "copilot": (
        copilot,
        body("copilot", "pre_tool_use_bash", toolArgs='{"command": "git status"}'),
        body(
            "copilot", "pre_tool_use_bash", toolArgs='{"command": "git status"}', toolResult={"resultType": "success"}
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(TWICE))
def test_identical_calls_of_a_host_without_call_ids_have_receipts_of_their_own(service: Service, name: str) -> None:
    module, before, after = TWICE[name]
    for _ in range(2):  # the same call twice, both before either ran
        assert "deny" not in json.dumps(ask(service, module, before))
    intents = [rid for rid, kind in receipts(service) if kind == "intent"]
    assert len(intents) == 2 and len(set(intents)) == 2  # two requests, not one
    ask(service, module, after)  # the first ran: the oldest open call is closed, the other stays open
    closed = [rid for rid, kind in receipts(service) if kind == "outcome"]
    assert closed == intents[:1]
    flow._OPENED.clear()  # as after a restart: the open call is found in the receipts
    ask(service, module, after)
    assert sorted(rid for rid, kind in receipts(service) if kind == "outcome") == sorted(intents)
    ask(service, module, after)  # a third after-event has nothing left to close
    assert len(receipts(service)) == 4


def test_a_hosts_own_call_id_is_the_requests(service: Service) -> None:
    data = json.loads(body("cursor", "before_shell_execution", command="git status", tool_use_id="tu-1"))
    call = cursor.call(data, PROJECT)
    assert call.id == "cursor-tu-1" and not call.content_id
    ask(service, cursor, json.dumps(data).encode())
    assert receipts(service) == [("cursor-tu-1", "intent")]


@pytest.mark.parametrize(
    "response",
    [
        json.loads(body("gemini", "after_tool_shell_failure"))["tool_response"],  # `ls` exited 2 (captured)
        {"llmContent": "", "returnDisplay": "", "error": {"message": "no such file", "type": "file_not_found"}},
    ],
)
def test_gemini_after_tool_of_a_failed_tool_records_a_failure(service: Service, response: Any) -> None:
    data = json.loads(body("gemini", "after_tool_shell_failure"))
    before = dict(data, hook_event_name="BeforeTool")
    del before["tool_response"]
    ask(service, gemini, json.dumps(before).encode())
    assert ask(service, gemini, json.dumps(dict(data, tool_response=response)).encode()) == {}
    assert [kind for _, kind in receipts(service)] == ["intent", "failed"]
    assert not gemini.failed(json.loads(body("gemini", "after_tool_shell"))["tool_response"])


def test_copilot_failed_and_denied_results_close_the_intent_as_failed(service: Service) -> None:
    pre = body("copilot", "pre_tool_use_bash", toolArgs='{"command": "ls nope"}')
    for result in ("failure", "denied"):
        ask(service, copilot, pre)
        post = body(
            "copilot", "pre_tool_use_bash", toolArgs='{"command": "ls nope"}', toolResult={"resultType": result}
        )
        ask(service, copilot, post)
    assert [kind for _, kind in receipts(service)] == ["intent", "failed", "intent", "failed"]


def test_codex_patch_through_the_shell_writes_its_files(service: Service) -> None:
    """Captured from Codex 0.169.0: `apply_patch <<'EOF'` in a Bash call, which Codex applies itself."""
    call = codex.call(json.loads(body("codex", "pre_tool_use_bash_apply_patch")), PROJECT)
    assert call.tool == "Bash" and call.writes == ("../outside/p.txt",) and call.shell is not None
    out = ask(service, codex, body("codex", "pre_tool_use_bash_apply_patch"))["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and "outside-project" in out["permissionDecisionReason"]
    inside = "cd sub && apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: x.py\n+x\n*** End Patch\nEOF\n"
    call = codex.call(json.loads(body("codex", "pre_tool_use_bash", tool_input={"command": inside})), PROJECT)
    assert call.writes == ("sub/x.py",)
    assert ask(service, codex, body("codex", "pre_tool_use_bash", tool_input={"command": inside})) == {}


def test_codex_post_tool_use_closes_the_intent_of_its_pre(service: Service) -> None:
    pre = body("codex", "pre_tool_use_bash", tool_input={"command": "ls does-not-exist"})
    assert ask(service, codex, pre) == {}
    assert ask(service, codex, body("codex", "post_tool_use_bash_failure")) == {}
    assert receipts(service) == [("codex-call_e2e0001", "intent"), ("codex-call_e2e0001", "outcome")]


def test_the_open_calls_kept_in_memory_are_bounded(service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(flow, "_MAX_OPENED", 2)
    for n in range(3):  # three calls of three names, none closed: the third starts the map again
        ask(service, gemini, body("gemini", "before_tool_shell", tool_input={"command": f"echo {n}"}))
    assert len(flow._OPENED[service]) == 1
    ask(service, gemini, body("gemini", "after_tool_shell", tool_input={"command": "echo 0"}))  # found by the scan
    assert [k for _, k in receipts(service)].count("outcome") == 1
    ask(service, gemini, body("gemini", "after_tool_shell", tool_input={"command": "echo 2"}))  # found in memory
    assert [k for _, k in receipts(service)].count("outcome") == 2 and not flow._OPENED[service]

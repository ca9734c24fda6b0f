"""End to end: the real Gemini CLI (npm @google/gemini-cli, `gemini -p`)
drives `ordinance hook gemini` through its BeforeTool/AfterTool hooks, its
model a loopback stub of the Gemini API (GOOGLE_GEMINI_BASE_URL). No
credentials, no network beyond loopback. ORDINANCE_E2E_CAPTURE=1 also
refreshes tests/hosts_fixtures/gemini/."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any


from ordinance.hosts.setup import SETUPS
from tests.e2e.harness import SLOW, TOKEN, Gated, captured, client, git
from tests.e2e.model_stub import ModelStub

MODEL = "gemini-2.5-flash"  # named, so that no routing request runs before the turn


def gemini(g: Gated, script: list[dict[str, Any]], *args: str, hooked: bool = True) -> tuple[ModelStub, list[dict]]:
    """Run `gemini -p` in the project with the scripted tool calls; the stub
    and the stream-json events Gemini CLI printed."""
    if hooked:  # the hooks `init --gemini` writes, with the capturing command and a loaded machine's timeout
        settings = SETUPS["gemini"].settings(g.hook_command("gemini"), str(g.owner), str(g.project))
        for entries in settings["hooks"].values():
            for entry in entries:
                for hook in entry["hooks"]:
                    hook["timeout"] = SLOW * 1000
        (g.project / ".gemini").mkdir(exist_ok=True)
        (g.project / ".gemini" / "settings.json").write_text(json.dumps(settings, indent=2))
    home = g.project.parent / "home"
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    # the API key path: with only GOOGLE_GEMINI_BASE_URL set, 0.61.0 picks a "gateway" auth it then refuses
    user = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "privacy": {"usageStatisticsEnabled": False},  # nothing leaves the loopback
        "telemetry": {"enabled": False},
    }
    (home / ".gemini" / "settings.json").write_text(json.dumps(user))
    with ModelStub(script) as stub:
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(home),
            "GEMINI_API_KEY": "e2e-not-a-key",
            "GOOGLE_GEMINI_BASE_URL": stub.url,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "ORDINANCE_TOKEN": TOKEN,
        }
        done = subprocess.run(
            [str(client("gemini")), "-p", "go", "-m", MODEL, "--output-format", "stream-json", *args],
            cwd=g.project,
            env=env,
            capture_output=True,
            text=True,
            timeout=SLOW,
        )
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert any(e.get("type") == "result" for e in events), done.stderr[-2000:]
    return stub, events


def results(events: list[dict]) -> list[dict]:
    return [e for e in events if e.get("type") == "tool_result"]


def shell(command: str) -> dict[str, Any]:
    return {"name": "run_shell_command", "input": {"command": command}}


def said(stub: ModelStub) -> str:
    """What Gemini CLI sent back to the model about the tool calls."""
    return json.dumps([body.get("contents") for _, body in stub.requests])


def test_force_push_is_refused_and_main_on_the_remote_is_not_rewritten(g: Gated) -> None:
    before = git(g.remote, "rev-parse", "main")
    (g.project / "a.py").write_text("print('rewritten')\n")
    git(g.project, "commit", "-q", "--amend", "-am", "rewritten")
    stub, events = gemini(g, [shell("git push -f origin main")], "--approval-mode", "yolo")
    (result,) = results(events)
    assert result["status"] == "error" and "force-push-main" in said(stub)
    assert git(g.remote, "rev-parse", "main") == before
    (pre,) = g.payloads("BeforeTool")
    assert pre["tool_name"] == "run_shell_command" and pre["tool_input"]["command"] == "git push -f origin main"
    captured(g, "gemini", "force-push", {"BeforeTool": "before_tool_shell_force_push"})


def test_a_harmless_push_runs_and_after_tool_is_posted(g: Gated) -> None:
    git(g.project, "checkout", "-q", "-b", "feature")
    _, events = gemini(g, [shell("git push -q origin feature")], "--approval-mode", "yolo")
    (result,) = results(events)
    assert result["status"] == "success", result
    assert git(g.remote, "rev-parse", "feature") == git(g.project, "rev-parse", "feature")
    (after,) = g.payloads("AfterTool")
    assert after["tool_name"] == "run_shell_command" and "tool_response" in after
    captured(g, "gemini", "push", {"BeforeTool": "before_tool_shell", "AfterTool": "after_tool_shell"})


def write_outside(g: Gated, hooked: bool = True) -> tuple[Path, ModelStub, list[dict]]:
    """A write_file to the sibling directory, which Gemini CLI is told is
    part of its workspace (without that it refuses the path itself, before
    any hook)."""
    target = g.outside / "x.txt"
    call = {"name": "write_file", "input": {"file_path": str(target), "content": "x\n"}}
    args = ("--approval-mode", "yolo", "--include-directories", str(g.outside))
    return (target, *gemini(g, [call], *args, hooked=hooked))


def test_a_write_outside_the_project_is_refused(g: Gated) -> None:
    target, stub, events = write_outside(g)
    assert not target.exists()
    (result,) = results(events)
    assert result["status"] == "error" and "outside-project" in said(stub)
    (pre,) = g.payloads("BeforeTool")
    assert pre["tool_name"] == "write_file"
    captured(g, "gemini", "write", {"BeforeTool": "before_tool_write_outside"})


def test_without_the_hook_the_same_write_lands_outside(g: Gated) -> None:
    """The control of the test above: the refusal is the hook's, not the host's."""
    target, _, _ = write_outside(g, hooked=False)
    assert target.read_text() == "x\n"


def test_a_permitted_rm_still_goes_through_the_hosts_own_approval(g: Gated) -> None:
    """Without --approval-mode yolo, `-p` cannot confirm: Gemini CLI's own
    approval refuses the shell `rm`, with the hook as without it."""
    gemini(g, [shell("rm -f b.py")], hooked=False)
    assert (g.project / "b.py").exists()  # the host alone refuses it
    gemini(g, [shell("rm -f b.py")])
    assert (g.project / "b.py").exists()


def test_the_server_down_fails_closed(down: Gated) -> None:
    target = down.project / "new.txt"
    stub, events = gemini(down, [shell(f"echo x > {target}")], "--approval-mode", "yolo")
    assert not target.exists()
    assert "unreachable" in said(stub)


def test_a_failing_tool_fires_after_tool_with_its_error(g: Gated) -> None:
    gemini(g, [shell("ls does-not-exist")], "--approval-mode", "yolo")
    (after,) = g.payloads("AfterTool")
    assert after["tool_input"]["command"] == "ls does-not-exist"
    assert [kind for _, kind in g.receipts()] == ["intent", "failed"]  # the gate recorded a failure
    captured(g, "gemini", "failure", {"AfterTool": "after_tool_shell_failure"})

"""End to end: the real Claude Code (npm @anthropic-ai/claude-code, run by
`claude -p`) drives the ordinance hook, its model a loopback stub that
scripts the tool calls (tests/e2e/model_stub.py). No credentials, no
network beyond loopback. ORDINANCE_E2E_CAPTURE=1 also refreshes the payload
fixtures (tests/hosts_fixtures/claude-code/) and the transcript fixture."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


from tests.e2e.harness import ROOT, SLOW, TOKEN, Gated, captured, client, git, stable
from tests.e2e.model_stub import ModelStub

EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")


def settings(g: Gated) -> dict[str, Any]:
    """The project's .claude/settings.json: every event through capture.py to
    `ordinance hook claude-code` (PreToolUse fails closed, as init writes it)."""
    hooks: dict[str, Any] = {}
    for event in EVENTS:
        hook: dict[str, Any] = {"type": "command", "command": g.hook_command(), "timeout": SLOW}
        if event == "PreToolUse":
            hook["onFailure"] = "block"
        hooks[event] = [{"matcher": "*", "hooks": [hook]}]
    return {"hooks": hooks}


def http_settings(g: Gated) -> dict[str, Any]:
    """The `http` hook type: Claude Code posts straight to the server (README)."""
    hook = {
        "type": "http",
        "url": g.server + "/hooks/claude-code",
        "headers": {"Authorization": "Bearer $ORDINANCE_TOKEN"},
        "allowedEnvVars": ["ORDINANCE_TOKEN"],
        "timeout": SLOW,
        "onFailure": "block",
    }
    return {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [hook]}]}}


def claude(
    g: Gated, script: list[dict[str, Any]], *args: str, hooked: bool = True, http: bool = False
) -> tuple[ModelStub, list[dict]]:
    """Run `claude -p` in the project with the scripted tool calls; the stub
    (its requests) and the stream-json events Claude Code printed."""
    if hooked:
        (g.project / ".claude").mkdir(exist_ok=True)
        chosen = http_settings(g) if http else settings(g)
        (g.project / ".claude" / "settings.json").write_text(json.dumps(chosen, indent=2))
    home = g.project.parent / "home"
    home.mkdir(exist_ok=True)
    with ModelStub(script) as stub:
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "ANTHROPIC_BASE_URL": stub.url,
            "ANTHROPIC_API_KEY": "sk-ant-e2e-not-a-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "IS_SANDBOX": "1",  # bypassPermissions under root (CI containers)
            "ORDINANCE_TOKEN": TOKEN,
        }
        import subprocess

        done = subprocess.run(
            [str(client("claude")), "-p", "go", "--output-format", "stream-json", "--verbose", *args],
            cwd=g.project,
            env=env,
            capture_output=True,
            text=True,
            timeout=SLOW,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return stub, events


def tool_results(events: list[dict]) -> list[dict]:
    """The tool_result blocks Claude Code sent back (after the hook and its
    own permission flow)."""
    found = []
    for e in events:
        if e.get("type") == "user":
            found += [b for b in e["message"]["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
    return found


def text(result: dict) -> str:
    content = result.get("content")
    if isinstance(content, list):
        return " ".join(c.get("text", "") for c in content if isinstance(c, dict))
    return str(content)


def bash(command: str) -> dict[str, Any]:
    return {"name": "Bash", "input": {"command": command, "description": "e2e"}}


def test_force_push_is_refused_and_main_on_the_remote_is_not_rewritten(g: Gated) -> None:
    before = git(g.remote, "rev-parse", "main")
    (g.project / "a.py").write_text("print('rewritten')\n")
    git(g.project, "commit", "-q", "--amend", "-am", "rewritten")
    _, events = claude(g, [bash("git push -f origin main")], "--allowedTools", "Bash")
    (result,) = tool_results(events)
    assert result.get("is_error") and "force-push-main" in text(result)
    assert git(g.remote, "rev-parse", "main") == before
    (pre,) = g.payloads("PreToolUse")
    assert pre["tool_name"] == "Bash" and pre["tool_input"]["command"] == "git push -f origin main"
    captured(g, "claude-code", "force-push", {"PreToolUse": "pre_tool_use_bash_force_push"})


def test_a_harmless_push_runs_and_its_outcome_is_posted(g: Gated) -> None:
    git(g.project, "checkout", "-q", "-b", "feature")
    _, events = claude(g, [bash("git push -q origin feature")], "--allowedTools", "Bash")
    (result,) = tool_results(events)
    assert not result.get("is_error"), text(result)
    assert git(g.remote, "rev-parse", "feature") == git(g.project, "rev-parse", "feature")
    (post,) = g.payloads("PostToolUse")
    assert post["tool_name"] == "Bash" and post["tool_use_id"] == g.payloads("PreToolUse")[0]["tool_use_id"]
    captured(g, "claude-code", "push", {"PreToolUse": "pre_tool_use_bash", "PostToolUse": "post_tool_use_bash"})
    keep_transcript(g)


def write(path: Path) -> dict[str, Any]:
    return {"name": "Write", "input": {"file_path": str(path), "content": "x\n"}}


def test_a_write_outside_the_project_is_refused(g: Gated) -> None:
    target = g.outside / "x.txt"
    _, events = claude(g, [write(target)], "--permission-mode", "bypassPermissions")
    (result,) = tool_results(events)
    assert result.get("is_error") and "outside-project" in text(result)
    assert not target.exists()
    captured(g, "claude-code", "write", {"PreToolUse": "pre_tool_use_write_outside"})


def test_without_the_hook_the_same_write_lands_outside(g: Gated) -> None:
    """The control of the test above: the refusal is the hook's, not the host's."""
    target = g.outside / "x.txt"
    claude(g, [write(target)], "--permission-mode", "bypassPermissions", hooked=False)
    assert target.read_text() == "x\n"


def test_a_permitted_rm_still_goes_through_the_hosts_own_permission_flow(g: Gated) -> None:
    """`-p` cannot prompt, so Claude Code's own flow refuses a Bash `rm` it
    was not told to allow: a hook that permits the call must not widen that
    into an `allow` (issue 20: "never widen the host")."""
    claude(g, [bash("rm -f b.py")], hooked=False)
    assert (g.project / "b.py").exists()  # the host alone refuses it
    _, events = claude(g, [bash("rm -f b.py")])
    assert g.payloads("PreToolUse"), "the hook was not called"
    assert (g.project / "b.py").exists(), f"the hook's answer let `rm` run unasked: {tool_results(events)}"


def test_the_server_down_fails_closed(down: Gated) -> None:
    target = down.project / "new.py"
    _, events = claude(down, [write(target)], "--permission-mode", "bypassPermissions")
    (result,) = tool_results(events)
    assert result.get("is_error") and "unreachable" in text(result)
    assert not target.exists()


def test_the_http_hook_refuses_a_force_push(g: Gated) -> None:
    before = git(g.remote, "rev-parse", "main")
    (g.project / "a.py").write_text("print('rewritten')\n")
    git(g.project, "commit", "-q", "--amend", "-am", "rewritten")
    _, events = claude(g, [bash("git push -f origin main")], "--allowedTools", "Bash", http=True)
    (result,) = tool_results(events)
    assert result.get("is_error") and "force-push-main" in text(result)
    assert git(g.remote, "rev-parse", "main") == before


def test_the_http_hook_with_the_server_down_fails_closed(down: Gated) -> None:
    """`onFailure: block`: a hook Claude Code cannot reach blocks the call."""
    target = down.project / "new.py"
    _, events = claude(down, [write(target)], "--permission-mode", "bypassPermissions", http=True)
    (result,) = tool_results(events)
    assert result.get("is_error") and "onFailure" in text(result)
    assert not target.exists()


def test_a_failing_tool_fires_post_tool_use_failure(g: Gated) -> None:
    _, events = claude(g, [bash("ls does-not-exist")], "--allowedTools", "Bash")
    (result,) = tool_results(events)
    assert result.get("is_error")
    (failed,) = g.payloads("PostToolUseFailure")
    assert failed["tool_name"] == "Bash" and failed["tool_input"]["command"] == "ls does-not-exist"
    assert failed["tool_use_id"] == g.payloads("PreToolUse")[0]["tool_use_id"]
    assert not g.payloads("PostToolUse")
    captured(g, "claude-code", "failure", {"PostToolUseFailure": "post_tool_use_failure_bash"})


def keep_transcript(g: Gated) -> None:
    """The session's transcript Claude Code wrote under CLAUDE_CONFIG_DIR:
    it holds the scripted call; kept as tests/fixtures/transcripts/ when
    capturing (with the run's temporary paths made stable)."""
    config = g.project.parent / "home" / ".claude"
    (path,) = list((config / "projects").glob("*/*.jsonl"))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    uses = [
        b
        for e in lines
        if e.get("type") == "assistant"
        for b in e["message"]["content"]
        if isinstance(b, dict) and b.get("type") == "tool_use"
    ]
    assert [u["input"]["command"] for u in uses] == ["git push -q origin feature"]
    if os.environ.get("ORDINANCE_E2E_CAPTURE") == "1":
        out = ROOT / "tests" / "fixtures" / "transcripts"
        out.mkdir(parents=True, exist_ok=True)
        (out / "claude-code-push.jsonl").write_text(stable(path.read_text(), g.project.parent))

"""End to end: the real Codex CLI (npm @openai/codex, `codex exec`) drives
`ordinance hook codex` through the `.codex/hooks.json` that `ordinance init
--codex` writes, its model a loopback stub of the OpenAI Responses API (a
model provider in its config.toml). No credentials, no network beyond
loopback. ORDINANCE_E2E_CAPTURE=1 also refreshes tests/hosts_fixtures/codex/.

Codex runs a project's hooks only when the project is trusted (config.toml
`[projects."DIR"] trust_level`) and the hooks are reviewed, or with
`--dangerously-bypass-hook-trust` (what these runs pass, as automation that
vets its hooks); the last test shows an unreviewed hook is skipped."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any


from ordinance.hosts.setup import SETUPS
from tests.e2e.harness import SLOW, TOKEN, Gated, captured, client, git
from tests.e2e.model_stub import ModelStub


def codex(
    g: Gated,
    script: list[dict[str, Any]],
    *,
    hooked: bool = True,
    reviewed: bool = True,
    trusted: bool = True,
    command: str = "",
) -> tuple[ModelStub, list[dict]]:
    """Run `codex exec` in the project with the scripted tool calls; the stub
    and the JSON events Codex printed."""
    if hooked:  # the file `init --codex` writes, with the capturing hook command (or `command`)
        settings = SETUPS["codex"].settings(command or g.hook_command("codex"), str(g.owner), str(g.project))
        (g.project / ".codex").mkdir(exist_ok=True)
        (g.project / ".codex" / "hooks.json").write_text(json.dumps(settings, indent=2))
    home = g.project.parent / "home"
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    with ModelStub(script) as stub:
        (home / ".codex" / "config.toml").write_text(
            'model = "gpt-5-codex"\nmodel_provider = "stub"\n\n'
            f'[model_providers.stub]\nname = "stub"\nbase_url = "{stub.url}/v1"\n'
            'wire_api = "responses"\nenv_key = "E2E_STUB_KEY"\n\n'
            + (f'[projects."{g.project}"]\ntrust_level = "trusted"\n' if trusted else "")
        )
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(home),
            "CODEX_HOME": str(home / ".codex"),
            "E2E_STUB_KEY": "e2e-not-a-key",
            "ORDINANCE_TOKEN": TOKEN,
        }
        args = ["exec", "--json", "--sandbox", "danger-full-access"]
        args += ["--dangerously-bypass-hook-trust"] if reviewed else []
        done = subprocess.run(
            [str(client("codex")), *args, "go"],
            cwd=g.project,
            env=env,
            stdin=subprocess.DEVNULL,  # `codex exec` reads a piped stdin as more prompt
            capture_output=True,
            text=True,
            timeout=SLOW,
        )
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert any(e.get("type") == "turn.completed" for e in events), done.stdout[-2000:] + done.stderr[-2000:]
    return stub, events


def shell(command: str) -> dict[str, Any]:
    return {"name": "exec_command", "input": {"cmd": command}}


def said(stub: ModelStub) -> str:
    """What Codex sent back to the model about the tool calls."""
    return json.dumps([body.get("input") for _, body in stub.requests])


def ran(events: list[dict]) -> list[dict]:
    return [e["item"] for e in events if e.get("type") == "item.completed" and e["item"]["type"] != "error"]


def test_force_push_is_refused_and_main_on_the_remote_is_not_rewritten(g: Gated) -> None:
    before = git(g.remote, "rev-parse", "main")
    (g.project / "a.py").write_text("print('rewritten')\n")
    git(g.project, "commit", "-q", "--amend", "-am", "rewritten")
    stub, events = codex(g, [shell("git push -f origin main")])
    assert git(g.remote, "rev-parse", "main") == before
    assert "force-push-main" in said(stub) and "blocked by PreToolUse hook" in said(stub)
    assert not [i for i in ran(events) if i["type"] == "command_execution"]  # Codex did not run it
    (pre,) = g.payloads("PreToolUse")
    assert pre["tool_name"] == "Bash" and pre["tool_input"]["command"] == "git push -f origin main"
    assert pre["tool_use_id"].startswith("call_")
    captured(g, "codex", "force-push", {"PreToolUse": "pre_tool_use_bash"})


def test_a_harmless_push_runs_and_post_tool_use_is_posted(g: Gated) -> None:
    git(g.project, "checkout", "-q", "-b", "feature")
    _, events = codex(g, [shell("git push -q origin feature")])
    (item,) = [i for i in ran(events) if i["type"] == "command_execution"]
    assert item["exit_code"] == 0, item
    assert git(g.remote, "rev-parse", "feature") == git(g.project, "rev-parse", "feature")
    (pre,) = g.payloads("PreToolUse")
    (post,) = g.payloads("PostToolUse")
    assert post["tool_use_id"] == pre["tool_use_id"] and "tool_response" in post  # one call: its receipts close
    call = f"codex-{pre['tool_use_id']}"
    assert g.receipts() == [(call, "intent"), (call, "outcome")]
    captured(g, "codex", "push", {"PostToolUse": "post_tool_use_bash"})


def test_a_shell_write_outside_the_project_is_refused(g: Gated) -> None:
    target = g.outside / "x.txt"
    stub, _ = codex(g, [shell(f"echo x > {target}")])
    assert not target.exists() and "outside-project" in said(stub)


def test_without_the_hook_the_same_write_lands_outside(g: Gated) -> None:
    """The control of the test above: the refusal is the hook's, not Codex's."""
    target = g.outside / "x.txt"
    codex(g, [shell(f"echo x > {target}")], hooked=False)
    assert target.read_text() == "x\n"


def test_a_patch_through_the_shell_that_writes_outside_is_refused(g: Gated) -> None:
    """Codex applies `apply_patch <<'EOF'` in a shell command itself and
    reports it as a Bash call: the patch's files are the call's writes."""
    patch = "*** Begin Patch\n*** Add File: ../outside/p.txt\n+x\n*** End Patch\n"
    stub, _ = codex(g, [shell(f"apply_patch <<'EOF'\n{patch}EOF\n")])
    assert not (g.outside / "p.txt").exists() and "outside-project" in said(stub)
    (pre,) = g.payloads("PreToolUse")
    assert pre["tool_name"] == "Bash" and pre["tool_input"]["command"].startswith("apply_patch <<'EOF'")
    captured(g, "codex", "patch", {"PreToolUse": "pre_tool_use_bash_apply_patch"})


def test_the_server_down_fails_closed(down: Gated) -> None:
    target = down.project / "new.txt"
    stub, _ = codex(down, [shell(f"echo x > {target}")])
    assert not target.exists()
    assert "unreachable" in said(stub)


def test_a_hook_that_cannot_start_fails_closed(g: Gated) -> None:
    """`ordinance` not on the hook's PATH: Codex would run the call (it does
    on a hook's exit 127); the command `init --codex` writes exits 2 then."""
    target = g.outside / "x.txt"
    stub, _ = codex(g, [shell(f"echo x > {target}")], command="/nonexistent/ordinance hook codex")
    assert not target.exists() and "the hook did not run" in said(stub)


def test_a_failing_command_fires_post_tool_use_with_its_output(g: Gated) -> None:
    """Codex reports no failure to its hooks: a command that exits 2 is a
    PostToolUse (an outcome receipt), its output the tool_response."""
    _, events = codex(g, [shell("ls does-not-exist")])
    (item,) = [i for i in ran(events) if i["type"] == "command_execution"]
    assert item["exit_code"] == 2
    (post,) = g.payloads("PostToolUse")
    assert "does-not-exist" in json.dumps(post["tool_response"])
    captured(g, "codex", "failure", {"PostToolUse": "post_tool_use_bash_failure"})


def test_an_unreviewed_hook_is_skipped_not_refused(g: Gated) -> None:
    """What `init --codex` says is left to do: until the hooks are reviewed
    (`/hooks` in codex), Codex does not run them, and nothing is asked."""
    target = g.outside / "x.txt"
    codex(g, [shell(f"echo x > {target}")], reviewed=False)
    assert target.read_text() == "x\n" and g.payloads("PreToolUse") == []


def test_an_untrusted_projects_hooks_are_skipped_not_refused(g: Gated) -> None:
    """What `ordinance doctor` checks for Codex: without the project trusted
    in Codex's config.toml, no project hook runs, even with the review
    bypassed."""
    target = g.outside / "x.txt"
    codex(g, [shell(f"echo x > {target}")], trusted=False)
    assert target.read_text() == "x\n" and g.payloads("PreToolUse") == []

"""The pages "Claude Code and other hosts" (docs/claude-code.md) and "HTTP and
MCP" (docs/serve.md): their shell blocks run as written (on a free port) and
print what the page shows;
the MCP client configuration launches a working server."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from served import Served, free_port
from test_cli_meta import page

BIN = str(Path(sys.executable).parent)


def blocks(text: str, lang: str) -> list[str]:
    """The fenced blocks of `text` whose info string is `lang`."""
    return [body for info, body in re.findall(r"^```(\w*)\n(.*?)^```$", text, re.M | re.S) if info == lang]


def run_section(name: str, port: int, tmp_path: Path, n: int = 0) -> tuple[str, str]:
    """Run the `n`th shell block of page `name`; its output and the `n`th plain block."""
    text = page(name)
    script = blocks(text, "sh")[n].replace(str(port), "PORT")
    free = free_port()
    script = script.replace("PORT", str(free))
    wrapped = "set -e\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + script
    proc = subprocess.Popen(
        ["bash", "-c", wrapped],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"},
    )
    try:
        out, err = proc.communicate(timeout=180)
    finally:  # the script's own server too, even if the script hangs
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    assert proc.returncode == 0, err
    expected = blocks(text, "")[n]
    return out, expected


def test_use_with_claude_code(tmp_path: Path) -> None:
    out, expected = run_section("claude-code.md", 8377, tmp_path)
    for line in expected.strip().splitlines():
        assert line in out.splitlines(), (line, out)
    assert "4 passed, 0 failed" in out  # `ordinance test` of the generated policy
    project, home = tmp_path / "myproject", tmp_path / "owner"
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    [pre] = settings["hooks"]["PreToolUse"][0]["hooks"]
    [post] = settings["hooks"]["PostToolUse"][0]["hooks"]
    assert pre["command"].startswith("ordinance hook claude-code --server") and pre["onFailure"] == "block"
    assert pre["command"].endswith(
        f"--token-file {home / 'claude-code.token'}"
    )  # Claude Code may scrub the environment
    assert set(settings["hooks"]) == {"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionDenied"}
    assert f"Read(/{home}/**)" in settings["permissions"]["deny"] and settings["sandbox"]["enabled"] is True
    assert not (project / "tokens.toml").exists() and not (project / "policy.rules").exists()
    assert post["command"] == pre["command"] and "onFailure" not in post  # the tool has run: nothing to block
    # the `http` hook of the section, as Claude Code sends it: the URL, the header with its variable filled
    [hook] = json.loads(blocks(page("claude-code.md"), "json")[0])["hooks"]["PreToolUse"][0]["hooks"]
    assert hook["type"] == "http" and hook["onFailure"] == "block"
    for private in ("tokens.toml", "claude-code.token"):  # they hold the tokens
        assert (home / private).stat().st_mode & 0o777 == 0o600
    tokens = (home / "tokens.toml").read_text()
    token = re.search(r'name = "claude-code"\ntoken = "([^"]+)"', tokens)
    assert token is not None

    def headers(value: str) -> dict[str, str]:
        env = {name: value for name in hook["allowedEnvVars"]}
        return {k: re.sub(r"\$\{?(\w+)\}?", lambda m: env[m[1]], v) for k, v in hook["headers"].items()}

    call = {
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_use_id": "h1",
        "cwd": str(project / "src"),  # Claude Code has cd'd into a subdirectory: still the project
        "tool_input": {"file_path": "../README.md", "content": "hi"},
    }
    with Served(
        home / "policy.rules",
        str(home / "ordinance.db"),
        home / "tokens.toml",
        extra=("--project", str(project)),
    ) as server:
        path = urlsplit(hook["url"]).path
        allowed = server.http.post(path, headers=headers(token[1]), json=call)
        refused = server.http.post(path, headers=headers("stolen"), json={**call, "tool_use_id": "h2"})
    permitted = allowed.json()["hookSpecificOutput"]  # no decision: Claude Code's own permissions decide
    assert allowed.status_code == 200 and "permissionDecision" not in permitted
    assert permitted["additionalContext"].startswith("ordinance permits this")
    assert refused.status_code == 200 and refused.json()["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_use_over_http_and_mcp(tmp_path: Path) -> None:
    out, expected = run_section("serve.md", 8390, tmp_path)
    assert out.strip().splitlines()[-3:] == expected.strip().splitlines()
    config = json.loads(blocks(page("serve.md"), "json")[0])["mcpServers"]["ordinance"]
    project = tmp_path / "gate"  # the owner's directory, where the section runs the server
    params = StdioServerParameters(command=str(Path(BIN) / config["command"]), args=config["args"], cwd=project)

    async def go() -> object:
        async with Client(params) as c:
            return (await c.call_tool("query", {"pattern": 'current_grant(A, "prod", E)'})).structured_content

    assert asyncio.run(go()) == {"relation": "current_grant", "answers": [{"A": "claude-code", "E": 1}], "holds": True}


def test_the_server_keeps_the_state_file_as_shown(tmp_path: Path) -> None:
    out, expected = run_section("serve.md", 8391, tmp_path, n=1)

    def masked(text: str) -> list[str]:  # the wall clock's `now` and times, the policy hash
        text = re.sub(r"now \S+ ·", "now NOW ·", text)
        text = re.sub(r"policy [0-9a-f]{12}", "policy HASH", text)
        return re.sub(r"\[asserted (\S+) \d\d:\d\d\]", r"[asserted \1 HH:MM]", text).strip().splitlines()

    assert masked(out) == masked(expected)
    assert "vault" not in (tmp_path / "prime" / "prime-state.md").read_text()

"""README's "Use with Claude Code" and "Use over HTTP and MCP": their shell
blocks run as written (on a free port) and print what the README shows;
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

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from served import free_port
from test_cli_meta import section

BIN = str(Path(sys.executable).parent)


def blocks(text: str, lang: str) -> list[str]:
    """The fenced blocks of `text` whose info string is `lang`."""
    return [body for info, body in re.findall(r"^```(\w*)\n(.*?)^```$", text, re.M | re.S) if info == lang]


def run_section(title: str, port: int, tmp_path: Path, n: int = 0) -> tuple[str, str]:
    """Run the `n`th shell block of section `title`; its output and the `n`th plain block."""
    text = section(title)
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
    out, expected = run_section("Use with Claude Code", 8377, tmp_path)
    for line in expected.strip().splitlines():
        assert line in out.splitlines(), (line, out)
    assert "2 passed, 0 failed" in out  # `ordinance test` of the generated policy
    settings = json.loads((tmp_path / "myproject" / ".claude" / "settings.json").read_text())
    assert settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"].startswith("ordinance hook claude-code")


def test_use_over_http_and_mcp(tmp_path: Path) -> None:
    out, expected = run_section("Use over HTTP and MCP", 8390, tmp_path)
    assert out.strip().splitlines()[-3:] == expected.strip().splitlines()
    config = json.loads(blocks(section("Use over HTTP and MCP"), "json")[0])["mcpServers"]["ordinance"]
    project = tmp_path / "api"
    params = StdioServerParameters(command=str(Path(BIN) / config["command"]), args=config["args"], cwd=project)

    async def go() -> object:
        async with Client(params) as c:
            return (await c.call_tool("query", {"pattern": 'current_grant(A, "prod", E)'})).structured_content

    assert asyncio.run(go()) == {"relation": "current_grant", "answers": [{"A": "claude-code", "E": 1}], "holds": True}


def test_the_server_keeps_the_state_file_as_shown(tmp_path: Path) -> None:
    out, expected = run_section("Use over HTTP and MCP", 8391, tmp_path, n=1)

    def masked(text: str) -> list[str]:  # the wall clock's `now` and times, the policy hash
        text = re.sub(r"now \S+ ·", "now NOW ·", text)
        text = re.sub(r"policy [0-9a-f]{12}", "policy HASH", text)
        return re.sub(r"\[asserted (\S+) \d\d:\d\d\]", r"[asserted \1 HH:MM]", text).strip().splitlines()

    assert masked(out) == masked(expected)
    assert "vault" not in (tmp_path / "prime" / "prime-state.md").read_text()

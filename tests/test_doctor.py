"""`ordinance doctor` on real installs (`init --claude-code`), a real
`ordinance serve`, and the setup errors it points at (a busy port)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from ordinance.cli.group import cli
from ordinance.hosts.doctor import checks
from served import Served


def client(tmp_path: Path, version: str) -> str:
    """A `claude` that reports `version` (the real binary is the e2e tests'; here only its --version is read)."""
    path = tmp_path / f"claude-{version}"
    path.write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n")
    path.chmod(0o755)
    return str(path)


def install(tmp_path: Path, port: int) -> Path:
    project = tmp_path / "p"
    (project / ".git").mkdir(parents=True)
    done = CliRunner().invoke(
        cli, ["init", "--claude-code", str(project), "--home", str(tmp_path / "o"), "--port", str(port)]
    )
    assert done.exit_code == 0, done.output
    return project


def by_name(found: list) -> dict[str, bool]:
    return {c.name: c.ok for c in found}


def test_a_fresh_install_passes_once_the_server_is_up(tmp_path: Path) -> None:
    home = tmp_path / "o"
    project = install(tmp_path, 9)
    with Served(home / "policy.rules", str(home / "ordinance.db"), home / "tokens.toml") as server:
        settings = project / ".claude" / "settings.json"  # the hooks' port: the one the server got
        settings.write_text(settings.read_text().replace("127.0.0.1:9 ", f"127.0.0.1:{server.port} "))
        found = by_name(checks(project, claude=client(tmp_path, "2.1.332"), env={}))
    assert found == dict.fromkeys(["hook", "client", "token", "owner", "sandbox", "pre-push", "server"], True)
    down = by_name(checks(project, claude=client(tmp_path, "2.1.332"), env={}))
    assert down["server"] is False


def test_what_to_fix_is_said(tmp_path: Path) -> None:
    project = install(tmp_path, 9)
    settings = project / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    del data["hooks"]["PreToolUse"][0]["hooks"][0]["onFailure"]
    data["sandbox"]["enabled"] = False
    settings.write_text(json.dumps(data))
    (tmp_path / "o" / "claude-code.token").chmod(0o644)
    (project / "tokens.toml").write_text("# a copy within the agent's reach\n")
    (project / ".git" / "hooks" / "pre-push").unlink()
    found = {c.name: c for c in checks(project, claude=client(tmp_path, "2.1.200"), env={})}
    assert not any(c.ok for c in found.values()), found
    assert "onFailure" in found["hook"].detail and "2.1.295" in found["client"].detail
    assert "no pre-push hook" in found["pre-push"].detail
    assert "chmod 600" in found["token"].detail and str(project / "tokens.toml") in found["owner"].detail
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "from ordinance.cli import main; main()",
            "doctor",
            str(project),
            "--claude",
            client(tmp_path, "2.1.200"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1 and run.stdout.count("\nfix  ") + run.stdout.startswith("fix  ") == 7


def test_no_install_says_how_to_make_one(tmp_path: Path) -> None:
    (found,) = checks(tmp_path)
    assert not found.ok and "ordinance init --claude-code" in found.detail


def test_a_busy_port_is_one_line_error(tmp_path: Path) -> None:
    project = install(tmp_path, 9)
    home = tmp_path / "o"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        run = subprocess.run(
            [
                sys.executable,
                "-c",
                "from ordinance.cli import main; main()",
                "serve",
                "--tokens",
                str(home / "tokens.toml"),
                "--db",
                str(home / "ordinance.db"),
                "--policy",
                str(home / "policy.rules"),
                "--port",
                str(port),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=project,
        )
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.splitlines() == [run.stderr.strip()] and run.stderr.startswith("error[port_in_use]: port")


def test_the_other_hosts_are_checked_too(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".git").mkdir(parents=True)
    home = tmp_path / "o"
    done = CliRunner().invoke(cli, ["init", "--codex", "--gemini", str(project), "--home", str(home), "--port", "9"])
    assert done.exit_code == 0, done.output
    with Served(home / "policy.rules", str(home / "ordinance.db"), home / "tokens.toml") as server:
        for path in (project / ".codex" / "hooks.json", project / ".gemini" / "settings.json"):
            path.write_text(path.read_text().replace("127.0.0.1:9 ", f"127.0.0.1:{server.port} "))
        codex_home = tmp_path / "codex-home"
        codex_home.mkdir()
        env = {"CODEX_HOME": str(codex_home)}
        untrusted = {c.name: c for c in checks(project, env=env)}
        assert not untrusted["codex"].ok and "does not trust the project" in untrusted["codex"].detail
        (codex_home / "config.toml").write_text(f'[projects."{project.resolve()}"]\ntrust_level = "trusted"\n')
        found = {c.name: c for c in checks(project, env=env)}
    assert {n: c.ok for n, c in found.items()} == dict.fromkeys(
        ["codex", "codex-token", "gemini", "gemini-token", "owner", "pre-push", "server"], True
    )
    assert "/hooks" in found["codex"].detail  # what is left to do in Codex: trust the hooks
    (home / "gemini.token").chmod(0o644)
    (project / ".codex" / "hooks.json").write_text('{"hooks": {"PostToolUse": []}}')  # no PreToolUse hook: gone
    found = {c.name: c for c in checks(project, env={})}
    assert "codex" not in found and not found["gemini-token"].ok and not found["server"].ok

"""`ordinance init --codex|--gemini|--cursor|--copilot`: one init path,
each host's settings in its own file and shape, merged into what the user
had (backed up, never replaced), the owner's controls outside the project,
each agent's token by file, git's pre-push hook; and the settings written
really answer, through a running gate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ordinance.cli.group import cli
from ordinance.hosts.setup import SETUPS, blocking, ours
from served import Served

FIXTURES = Path(__file__).with_name("hosts_fixtures")

# host -> (a file the user already had, the events our hooks go on, one of their entries that must stay)
THEIRS: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
    "codex": (
        {"hooks": {"PreToolUse": [{"matcher": "^Bash$", "hooks": [{"type": "command", "command": "./lint.sh"}]}]}},
        ("PreToolUse", "PostToolUse"),
    ),
    "gemini": (
        {
            "model": {"name": "gemini-2.5-pro"},
            "hooks": {
                "BeforeTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "./lint.sh"}]}]
            },
        },
        ("BeforeTool", "AfterTool"),
    ),
    "cursor": (
        {"version": 1, "hooks": {"beforeShellExecution": [{"command": "./lint.sh"}], "stop": [{"command": "./s.sh"}]}},
        ("beforeShellExecution", "beforeReadFile", "beforeMCPExecution", "afterShellExecution", "afterMCPExecution"),
    ),
    "copilot": (
        {"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "./lint.sh", "timeoutSec": 5}]}},
        ("preToolUse", "postToolUse"),
    ),
}
HOSTS = sorted(THEIRS)


def init(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["init", *args])
    return result.exit_code, result.output


def commands(data: Any, host: str) -> list[str]:
    """Every hook command of ours in a settings file (`command`, or Copilot's `bash`)."""
    found: list[str] = []
    for entries in data["hooks"].values():
        for entry in entries:
            for hook in entry.get("hooks", [entry]):
                text = hook.get("command") or hook.get("bash") or ""
                if text.startswith(f"ordinance hook {host} "):
                    found.append(text)
    return found


@pytest.mark.parametrize("host", HOSTS)
def test_settings_are_merged_with_a_backup_and_the_owners_controls_are_outside(tmp_path: Path, host: str) -> None:
    project, home = tmp_path / "p", tmp_path / "o"
    (project / ".git" / "hooks").mkdir(parents=True)
    settings = project / SETUPS[host].path
    settings.parent.mkdir(parents=True, exist_ok=True)
    theirs, events = THEIRS[host]
    settings.write_text(json.dumps(theirs))
    code, out = init(f"--{host}", str(project), "--home", str(home), "--port", "9123")
    assert code == 0, out
    assert json.loads(settings.with_name(settings.name + ".bak").read_text()) == theirs
    got = json.loads(settings.read_text())
    for key, value in theirs.items():  # their keys and their hooks stay, ours come after theirs
        if key != "hooks":
            assert got[key] == value
    for event, entries in theirs["hooks"].items():
        assert got["hooks"][event][: len(entries)] == entries
    mine = {e for e, entries in got["hooks"].items() if any(ours(x, host) for x in entries)}
    assert mine == set(events)
    token_file = home / f"{host}.token"
    for command in commands(got, host):
        mine = f"ordinance hook {host} --server http://127.0.0.1:9123 --token-file {token_file}"
        assert command == (blocking(mine) if host in ("codex", "gemini") else mine)
    # the token by file, private; the owner's directory out of the project; the agent's principal and grant
    assert token_file.stat().st_mode & 0o777 == 0o600 and home.stat().st_mode & 0o777 == 0o700
    principals = {p["name"]: p for p in tomllib.loads((home / "tokens.toml").read_text())["principal"]}
    assert principals[host]["token"] == token_file.read_text().strip() and not principals[host].get("owner")
    assert not any((project / n).exists() for n in ("tokens.toml", "policy.rules", "ordinance.db", f"{host}.token"))
    assert token_file.read_text().strip() not in "".join(p.read_text() for p in project.rglob("*") if p.is_file())
    pre_push = (project / ".git" / "hooks" / "pre-push").read_text()
    assert f"ordinance hook pre-push --server http://127.0.0.1:9123 --token-file {token_file}" in pre_push
    # again, on another port: our entries replaced, not doubled, theirs kept; a second backup
    code, out = init(f"--{host}", str(project), "--home", str(home), "--port", "9124")
    assert code == 0, out
    again = json.loads(settings.read_text())
    assert all("127.0.0.1:9124 " in c for c in commands(again, host)) and len(commands(again, host)) == len(events)
    for event, entries in theirs["hooks"].items():
        assert again["hooks"][event][: len(entries)] == entries
    assert settings.with_name(settings.name + ".bak1").exists()
    assert principals[host]["token"] == (home / f"{host}.token").read_text().strip()  # its token kept


def test_hosts_added_later_share_the_owners_directory(tmp_path: Path) -> None:
    project, home = tmp_path / "p", tmp_path / "o"
    code, out = init("--claude-code", str(project), "--home", str(home))
    assert code == 0, out
    tokens = (home / "tokens.toml").read_text()
    (home / "policy.rules").write_text((home / "policy.rules").read_text() + "\n// the owner's own line\n")
    code, out = init("--codex", "--gemini", str(project), "--home", str(home))
    assert code == 0, out
    assert "policy.rules: kept" in out and "the owner's own line" in (home / "policy.rules").read_text()
    after = (home / "tokens.toml").read_text()
    assert after.startswith(tokens)  # the owner's and Claude Code's tokens unchanged
    names = [p["name"] for p in tomllib.loads(after)["principal"]]
    assert names[1:] == ["claude-code", "codex", "gemini"]
    assert (project / ".claude" / "settings.json").exists() and (project / ".codex" / "hooks.json").exists()
    done = subprocess.run(
        [sys.executable, "-c", "from ordinance.cli import main; main()", "query", "grant(A, P, E)"]
        + ["--db", str(home / "ordinance.db"), "--policy", str(home / "policy.rules"), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    for host in ("claude-code", "codex", "gemini"):
        assert host in done.stdout and str(project.resolve()) in done.stdout


def test_a_settings_file_that_is_not_json_stops_init_before_anything_is_written(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".gemini").mkdir(parents=True)
    (project / ".gemini" / "settings.json").write_text("{not json")
    code, out = init("--codex", "--gemini", str(project), "--home", str(tmp_path / "o"))
    assert code != 0 and "error[bad_settings]" in out
    assert (project / ".gemini" / "settings.json").read_text() == "{not json"
    assert not (project / ".codex").exists() and not (tmp_path / "o").exists()


def test_the_hosts_settings_are_out_of_the_agents_reach(tmp_path: Path) -> None:
    """The example policy refuses a write to any host's hook settings."""
    from ordinance.cli.init import CLAUDE_CODE_POLICY
    from ordinance.facts import open_store, schema_of
    from ordinance.hosts import claude_code
    from ordinance.hosts.flow import handle
    from ordinance.rules import compile_text
    from ordinance.serve import Principal, Service

    policy = compile_text(CLAUDE_CODE_POLICY)
    guarded = [s.path for s in SETUPS.values()] + [".codex/config.toml", ".github/hooks/x.json"]
    with open_store(str(tmp_path / "s.db"), schema_of(policy)) as store:
        store.assert_facts([("grant", ("claude-code", "/p", 1))], source="init", author="jw")
        service = Service(policy, store)

        def write(path: str) -> str:
            payload = {"tool_name": "Write", "tool_use_id": path, "cwd": "/p"}
            payload["tool_input"] = {"file_path": f"/p/{path}", "content": "{}"}
            answer = handle(claude_code, service, Principal("claude-code"), payload, project="/p", now=0)
            return json.dumps(answer)

        for path in guarded:
            said = write(path)
            assert '"deny"' in said and "owner-controls" in said, path
        assert '"deny"' not in write(".github/workflows/ci.json")


PAYLOADS = {
    "codex": "codex/pre_tool_use_bash.json",
    "gemini": "gemini/before_tool_shell_force_push.json",
    "cursor": "cursor/before_shell_execution.json",
    "copilot": "copilot/pre_tool_use_bash.json",
}


@pytest.mark.parametrize("host", HOSTS)
def test_the_written_hook_answers_through_the_gate(tmp_path: Path, host: str) -> None:
    """The command init wrote, run as the host runs it, against `ordinance
    serve` over the owner's directory init made: a force push to main is
    the host's deny (the token file, the principal and its grant hold)."""
    project, home = tmp_path / "p", tmp_path / "o"
    code, out = init(f"--{host}", str(project), "--home", str(home), "--port", "9")
    assert code == 0, out
    payload = json.loads((FIXTURES / PAYLOADS[host]).read_text().replace("/tmp/e2e/project", str(project.resolve())))
    (project / "sub").mkdir()
    with Served(home / "policy.rules", str(home / "ordinance.db"), home / "tokens.toml") as server:
        (command,) = set(commands(json.loads((project / SETUPS[host].path).read_text()), host))
        command = command.replace("127.0.0.1:9 ", f"127.0.0.1:{server.port} ")
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"  # `ordinance` on the hook's PATH
        done = subprocess.run(
            ["sh", "-c", command],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PATH": path},
        )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    text = json.dumps(answer)
    assert "force-push-main" in text and "unauthorized" not in text and "no-grant" not in text
    decision = answer.get("decision") or answer.get("permission") or answer.get("permissionDecision")
    decision = decision or answer["hookSpecificOutput"]["permissionDecision"]
    assert decision == "deny"


@pytest.mark.parametrize("host", ["codex", "gemini"])
def test_a_hook_that_cannot_run_exits_2_where_the_host_refuses_on_2(tmp_path: Path, host: str) -> None:
    """Codex and Gemini CLI run the call when a hook cannot start; they refuse it on exit status 2."""
    code, out = init(f"--{host}", str(tmp_path / "p"), "--home", str(tmp_path / "o"))
    assert code == 0, out
    (command,) = set(commands(json.loads((tmp_path / "p" / SETUPS[host].path).read_text()), host))
    done = subprocess.run(
        ["/bin/sh", "-c", command], input="{}", capture_output=True, text=True, env={"PATH": "/nonexistent"}
    )
    assert done.returncode == 2 and "the hook did not run" in done.stderr


def test_a_hosts_name_held_by_an_owner_is_refused(tmp_path: Path) -> None:
    """The agent's token file never gets an owner's token."""
    home = tmp_path / "o"
    home.mkdir()
    tokens = '[[principal]]\nname = "codex"\nowner = true\ntoken = "the-owners-token-0123"\n'
    (home / "tokens.toml").write_text(tokens)
    code, out = init("--codex", str(tmp_path / "p"), "--home", str(home))
    assert code != 0 and "error[bad_tokens]" in out and "`codex`" in out
    assert (home / "tokens.toml").read_text() == tokens and not (home / "codex.token").exists()

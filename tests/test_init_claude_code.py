"""`ordinance init --claude-code`: the owner's directory outside the project,
settings merged (never replaced), a port of the project's own."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from ordinance.cli.group import cli
from ordinance.cli.init import merged, owner_home, project_port, settings_for


def init(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["init", "--claude-code", *args])
    return result.exit_code, result.output


def test_the_owners_controls_live_outside_the_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    project = tmp_path / "p"
    code, out = init(str(project))
    assert code == 0, out
    home = owner_home(project.resolve())
    assert home.parent == tmp_path / "state" / "ordinance" and home.name.startswith("p-")
    assert {p.name for p in home.iterdir()} >= {"policy.rules", "tokens.toml", "claude-code.token", "ordinance.db"}
    assert home.stat().st_mode & 0o777 == 0o700 and (home / "claude-code.token").stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in project.iterdir()) == [".claude"]  # nothing of the owner's in the project
    assert f'owner_home("{home}")' in (home / "policy.rules").read_text()
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert f"--server http://127.0.0.1:{project_port(project.resolve())} " in command
    assert command.endswith(f"--token-file {home / 'claude-code.token'}")
    assert settings["sandbox"]["filesystem"]["denyRead"] == [f"/{home}"]
    for other in (".codex/hooks.json", ".gemini/settings.json", ".github/hooks/**", ".git/hooks/**"):
        guarded = f"/{project.resolve()}/{other}"  # every host's hooks: what an agent editing switches the gate off
        assert f"Edit({guarded})" in settings["permissions"]["deny"]
        assert guarded in settings["sandbox"]["filesystem"]["denyWrite"]
    assert "no git repository" in out  # and it says how to get the pre-push hook


def test_existing_settings_are_merged_with_a_backup(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".claude").mkdir(parents=True)
    (project / ".git").mkdir()
    theirs = {
        "model": "opus",
        "permissions": {"allow": ["Bash(npm test)"], "deny": ["Read(./.env)"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]}]},
        "sandbox": {"network": {"allowedDomains": ["pypi.org"]}},
    }
    (project / ".claude" / "settings.json").write_text(json.dumps(theirs))
    (project / ".git" / "hooks").mkdir()
    (project / ".git" / "hooks" / "pre-push").write_text("#!/bin/sh\nexit 0\n")
    code, out = init(str(project), "--home", str(tmp_path / "o"), "--port", "9123")
    assert code == 0, out
    assert json.loads((project / ".claude" / "settings.json.bak").read_text()) == theirs
    got = json.loads((project / ".claude" / "settings.json").read_text())
    assert got["model"] == "opus" and got["sandbox"]["network"] == {"allowedDomains": ["pypi.org"]}
    assert got["permissions"]["allow"] == ["Bash(npm test)"] and "Read(./.env)" in got["permissions"]["deny"]
    pre = got["hooks"]["PreToolUse"]
    assert pre[0]["hooks"][0]["command"] == "./lint.sh" and "127.0.0.1:9123" in pre[1]["hooks"][0]["command"]
    assert (project / ".git" / "hooks" / "pre-push.local").read_text() == "#!/bin/sh\nexit 0\n"
    assert "ordinance hook pre-push --server http://127.0.0.1:9123" in (project / ".git/hooks/pre-push").read_text()
    # again: our entries replaced, not doubled; another backup
    code, out = init(str(project), "--home", str(tmp_path / "o"), "--port", "9124", "--force")
    assert code == 0, out
    again = json.loads((project / ".claude" / "settings.json").read_text())
    assert len(again["hooks"]["PreToolUse"]) == 2 and "9124" in again["hooks"]["PreToolUse"][1]["hooks"][0]["command"]
    assert (project / ".claude" / "settings.json.bak1").exists()
    assert again["permissions"]["deny"].count("Bash(ordinance *)") == 1


def test_an_owners_directory_inside_the_project_is_refused(tmp_path: Path) -> None:
    code, out = init(str(tmp_path / "p"), "--home", str(tmp_path / "p" / "owner"))
    assert code != 0 and "error[home_in_project]" in out
    assert not (tmp_path / "p" / "owner").exists()


def test_unreadable_settings_are_not_replaced(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text("{not json")
    code, out = init(str(project), "--home", str(tmp_path / "o"))
    assert code != 0 and "error[bad_settings]" in out
    assert (project / ".claude" / "settings.json").read_text() == "{not json"


def test_ports_differ_by_project_and_merging_is_idempotent(tmp_path: Path) -> None:
    ports = {project_port(tmp_path / f"p{i}") for i in range(50)}
    assert len(ports) > 40 and all(20000 <= p < 40000 for p in ports)
    ours = settings_for(9000, "/o/claude-code.token", "/o", "/p")
    assert merged(merged({}, ours), ours) == merged({}, ours)
    assert os.path.isabs(ours["sandbox"]["filesystem"]["denyWrite"][0][1:])

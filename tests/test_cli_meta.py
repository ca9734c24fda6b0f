"""Every command explains itself and is documented in README.md."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ordinance.cli import cli

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
COMMANDS = sorted(cli.commands)


def section(title: str) -> str:
    """The text of README's `## title` section (a `## ` line inside a fenced
    block, such as a state file's heading, does not end it)."""
    found: list[str] | None = None
    fence = ""
    for line in README.splitlines(keepends=True):
        marks = re.match(r"(`{3,})", line)
        if marks and (not fence or marks[1] == fence):
            fence = "" if fence else marks[1]
        elif not fence and line.startswith("## "):
            if found is not None:
                break
            if line.rstrip("\n") == f"## {title}":
                found = []
                continue
        if found is not None:
            found.append(line)
    assert found is not None, f"README.md has no `## {title}` section"
    return "".join(found)


def test_the_commands_of_the_issue_are_registered() -> None:
    assert {
        "init",
        "assert",
        "load",
        "query",
        "check",
        "why",
        "why-not",
        "test",
        "lint",
        "log",
        "replay",
        "demo",
    } <= set(COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_help_has_a_description_and_an_example(name: str) -> None:
    result = CliRunner().invoke(cli, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert (cli.commands[name].help or "").strip(), f"`{name}` has no help text"
    assert "Example" in result.output, f"`ordinance {name} --help` shows no example"
    assert f"ordinance {name}" in result.output.split("Example", 1)[1]


@pytest.mark.parametrize("name", COMMANDS)
def test_command_is_in_the_readme_cli_reference(name: str) -> None:
    reference = section("CLI reference")
    assert re.search(rf"^### `ordinance {re.escape(name)}", reference, re.M), name
    assert f"ordinance {name} " in reference or f"ordinance {name}\n" in reference


def test_readme_test_command_is_the_ci_command() -> None:
    ci_last = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci_last in README.splitlines()


def test_readme_main_command_runs_the_demo() -> None:
    assert "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/ordinance demo" in README


def test_readme_documents_the_environment() -> None:
    for name in ("ORDINANCE_DB", "ORDINANCE_POLICY", "postgresql://"):
        assert name in README, name
    assert section("The rule language").strip()


def tutorial_steps() -> list[tuple[str, list[str]]]:
    """The tutorial's `$ command` lines (heredocs included) with the output
    shown under each."""
    steps: list[tuple[str, list[str]]] = []
    for block in re.findall(r"```\n(.*?)```", section("Five-minute tutorial"), re.S):
        lines = iter(block.splitlines())
        for line in lines:
            if line.startswith("$ "):
                command = [line[2:]]
                if "<<'EOF'" in line:
                    for more in lines:
                        command.append(more)
                        if more == "EOF":
                            break
                steps.append(("\n".join(command), []))
            elif steps:
                steps[-1][1].append(line.rstrip())
    return steps


def normalised(lines: list[str]) -> list[str]:
    """Output with the policy hash, rule numbers and stdlib line numbers
    (they change with the stdlib) masked."""
    text = "\n".join(line.rstrip() for line in lines)
    text = re.sub(r"policy [0-9a-f]{12}", "policy HASH", text)
    text = re.sub(r"(<stdlib>[^:]*):\d+", r"\1:L", text)
    return re.sub(r"rule \d+", "rule N", text).splitlines()


def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    """Every command of the README tutorial, run in bash in a fresh directory,
    prints what the README shows."""
    steps = tutorial_steps()
    assert len(steps) >= 8
    marker = "@@step@@"
    script = "\n".join(f"{cmd}\n__rc=$?; echo {marker}; (exit $__rc)" for cmd, _ in steps)
    bindir = os.path.dirname(sys.executable)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORDINANCE_")}
    env["ORDINANCE_CACHE"] = os.environ["ORDINANCE_CACHE"]  # (the session's, see conftest.py)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    outputs = done.stdout.split(marker + "\n")
    assert done.stderr == ""
    for (command, shown), got in zip(steps, outputs):
        assert normalised(got.splitlines()) == normalised(shown), command

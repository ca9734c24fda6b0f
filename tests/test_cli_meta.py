"""Every command explains itself and is documented in the CLI reference
(docs/cli.md, generated from the commands); the tutorial and the README's
30-second example run as written."""

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


def page(name: str) -> str:
    """The text of the documentation page docs/`name`."""
    return (ROOT / "docs" / name).read_text(encoding="utf-8")


def section(title: str, text: str = README) -> str:
    """The text of `text`'s section headed `title` (`# title`, `## title`, ...),
    up to the next heading of its level or above (a `#` line inside a fenced
    block, such as a state file's heading, does not end it)."""
    found: list[str] | None = None
    level = 0
    fence = ""
    for line in text.splitlines(keepends=True):
        marks = re.match(r"(`{3,})", line)
        heading = re.match(r"(#{1,6}) (.*)", line.rstrip("\n"))
        if marks and (not fence or marks[1] == fence):
            fence = "" if fence else marks[1]
        elif not fence and heading:
            if found is not None and len(heading[1]) <= level:
                break
            if found is None and heading[2] == title:
                found, level = [], len(heading[1])
                continue
        if found is not None:
            found.append(line)
    assert found is not None, f"no section `{title}`"
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
def test_command_is_in_the_cli_reference(name: str) -> None:
    reference = page("cli.md")
    assert re.search(rf"^## `ordinance {re.escape(name)}", reference, re.M), name
    assert f"ordinance {name} " in reference or f"ordinance {name}\n" in reference


def test_readme_test_command_is_the_ci_command() -> None:
    ci_last = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci_last in README.splitlines()


def test_readme_main_command_runs_the_demo() -> None:
    assert "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/ordinance demo" in README


def test_the_docs_document_the_environment() -> None:
    environment = section("Environment", page("getting-started.md"))
    for name in ("ORDINANCE_DB", "ORDINANCE_POLICY", "ORDINANCE_DEADLINE", "ORDINANCE_CACHE", "postgresql://"):
        assert name in environment, name


def shell_steps(text: str, lang: str = "") -> list[tuple[str, list[str]]]:
    """The `$ command` lines of `text`'s blocks whose info string is `lang`
    (heredocs and `\\` continuation lines included) with the output shown
    under each."""
    steps: list[tuple[str, list[str]]] = []
    for info, block in re.findall(r"^```(\w*)\n(.*?)^```$", text, re.M | re.S):
        if info != lang:
            continue
        lines = iter(block.splitlines())
        before = len(steps)  # a block's output belongs to its own commands
        for line in lines:
            if line.startswith("$ "):
                command = [line[2:]]
                if "<<'EOF'" in line:
                    for more in lines:
                        command.append(more)
                        if more == "EOF":
                            break
                while command[-1].endswith("\\"):
                    command.append(next(lines))
                steps.append(("\n".join(command), []))
            elif len(steps) > before:
                steps[-1][1].append(line.rstrip())
    return steps


def normalised(lines: list[str]) -> list[str]:
    """Output with the policy hash, rule numbers and stdlib line numbers
    (they change with the stdlib) masked."""
    text = "\n".join(line.rstrip() for line in lines)
    text = re.sub(r"policy [0-9a-f]{12}", "policy HASH", text)
    text = re.sub(r"(<stdlib>[^:]*):\d+", r"\1:L", text)
    return re.sub(r"rule \d+", "rule N", text).splitlines()


def run_steps(
    steps: list[tuple[str, list[str]]], cwd: Path, *, stderr: bool = False, env: dict[str, str] | None = None
) -> list[tuple[str, int]]:
    """Run `steps` in bash in `cwd` (the venv's `ordinance` first on PATH, no
    ORDINANCE_ variable but the session's cache, and `env`); what each
    printed (its stderr too if `stderr`, else stderr must stay empty) and
    its exit status."""
    marker = "@@step@@"
    script = "\n".join(f"{cmd}\n__rc=$?; echo {marker} $__rc; (exit $__rc)" for cmd, _ in steps)
    bindir = os.path.dirname(sys.executable)
    variables = {k: v for k, v in os.environ.items() if not k.startswith("ORDINANCE_")}
    variables["ORDINANCE_CACHE"] = os.environ["ORDINANCE_CACHE"]  # (the session's, see conftest.py)
    variables["PATH"] = bindir + os.pathsep + variables.get("PATH", "")
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=cwd,
        env={**variables, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if stderr else subprocess.PIPE,
        text=True,
        timeout=300,
    )
    assert stderr or done.stderr == ""
    parts = re.split(rf"{marker} (\d+)\n", done.stdout)
    assert len(parts) == 2 * len(steps) + 1, done.stdout
    return [(out, int(status)) for out, status in zip(parts[0::2], parts[1::2])]


def run_as_written(steps: list[tuple[str, list[str]]], tmp_path: Path, *, stderr: bool = False) -> list[int]:
    """Run `steps` in bash in `tmp_path` (run_steps): each prints what is
    shown. Their exit statuses."""
    done = run_steps(steps, tmp_path, stderr=stderr)
    for (command, shown), (got, _) in zip(steps, done):
        assert normalised(got.splitlines()) == normalised(shown), command
    return [status for _, status in done]


def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    """Every command of the tutorial (docs/tutorial.md), run in bash in a
    fresh directory, prints what the page shows."""
    steps = shell_steps(page("tutorial.md"))
    assert len(steps) >= 8
    run_as_written(steps, tmp_path)


def test_the_readme_example_runs_as_written(tmp_path: Path) -> None:
    steps = shell_steps(section("In 30 seconds"))
    assert [cmd.split()[1] for cmd, _ in steps] == ["init", "check", "assert", "check"]
    run_as_written(steps, tmp_path)

"""Every command runs from the installed console script, not only from a
test runner that has registered every command first (the lazy loader of
cli/group.py once lacked `purge` and `retract`)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).parent / "ordinance"


def _help(*words: str) -> str:
    done = subprocess.run(
        [str(SCRIPT), *words, "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert done.returncode == 0, (words, done.stdout, done.stderr)
    assert done.stdout.startswith(f"Usage: ordinance {' '.join(words)}".rstrip() + " "), (words, done.stdout)
    return done.stdout


def _listed(text: str) -> list[str]:
    """The command names a click help text lists under `Commands:`."""
    if "\nCommands:\n" not in text:
        return []
    block = text.split("\nCommands:\n", 1)[1].split("\n\n", 1)[0]
    return [m.group(1) for m in re.finditer(r"^  (\S+)", block, re.M)]


def test_the_console_script_is_installed() -> None:
    assert SCRIPT.exists(), SCRIPT


def test_every_listed_command_runs_from_the_console_script() -> None:
    top = _listed(_help())
    assert {"purge", "retract", "assert", "why-not", "hook"} <= set(top)
    seen = []
    todo = [(name,) for name in top]
    while todo:
        words = todo.pop()
        seen.append(words)
        todo.extend((*words, sub) for sub in _listed(_help(*words)))
    assert ("hook", "claude-code") in seen


@pytest.mark.parametrize("name", ["purge", "retract"])
def test_retention_commands_resolve_alone(name: str, tmp_path: Path) -> None:
    """Not just --help: the command runs (here: a usage error of its own, not `no such command`)."""
    done = subprocess.run([str(SCRIPT), name], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert "no such command" not in done.stderr.lower(), done.stderr
    assert done.returncode == 2 and "error[usage]: missing argument" in done.stderr, done.stderr


def test_the_loader_table_names_every_command() -> None:
    from ordinance.cli import group

    group._register()
    assert set(group.cli.commands) == {name for names in group.COMMANDS.values() for name in names}

"""The tree's shape as tests: imports go down the layers and no package has
an import cycle (import-linter's contracts in pyproject.toml; deferred and
TYPE_CHECKING imports count), ruff's lint passes, and starting the command
line or the pytest plugin does not load hypothesis."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)


def test_imports_go_down_the_layers_without_cycles():
    lint_imports = shutil.which("lint-imports", path=str(BIN)) or "lint-imports"
    done = _run(lint_imports, "--no-cache", "--no-logo")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "imports go down the layers KEPT" in done.stdout
    assert "no import cycles inside a package KEPT" in done.stdout


def test_an_upward_import_breaks_the_layers_contract(tmp_path):
    """The contract is not vacuous: a gate module importing the CLI fails it."""
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "ordinance", tree / "ordinance")
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    with open(tree / "ordinance" / "gate" / "core.py", "a") as f:
        f.write("\nfrom ..cli import main as _upward  # noqa\n")
    lint_imports = shutil.which("lint-imports", path=str(BIN)) or "lint-imports"
    done = subprocess.run(
        [lint_imports, "--no-cache", "--no-logo"],
        cwd=tree,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tree), "PATH": str(BIN)},
    )
    assert done.returncode != 0
    assert "imports go down the layers BROKEN" in done.stdout
    assert "ordinance.gate.core -> ordinance.cli" in done.stdout


def test_ruff_lint_passes():
    done = _run(sys.executable, "-m", "ruff", "check", "ordinance", "tests", "benchmarks", "tools")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_tree_is_formatted():
    done = _run(sys.executable, "-m", "ruff", "format", "--check", "ordinance", "tests", "benchmarks", "tools")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("module", ["ordinance.cli", "ordinance.testing.pytest_plugin"])
def test_start_up_does_not_load_hypothesis(module):
    done = _run(sys.executable, "-c", f"import sys, {module}; print('hypothesis' in sys.modules)")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"

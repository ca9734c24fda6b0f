"""Golden lint output: each tests/golden/*.rules against its .out file.

Regenerate the expected files with ORDINANCE_REGEN_GOLDEN=1.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ordinance.cli.lint import command
from ordinance.diagnostics import CODES as REGISTRY

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.name for p in GOLDEN.glob("*.rules"))
# every code the language's phases report, from the registry, has a golden
# case (except those that need a large file, or an unsupported construct)
CODES = {code for code, (phase, _) in REGISTRY.items() if phase in ("parse", "load", "check")} - {
    "too_large",
    "unsupported",
    "check",
}


def lint(name: str) -> tuple[int, str]:
    result = CliRunner().invoke(command, [name])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result.exit_code, result.stdout


@pytest.mark.parametrize("name", CASES)
def test_golden_lint_output(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(GOLDEN)
    status, output = lint(name)
    expected = GOLDEN / (name[: -len(".rules")] + ".out")
    if os.environ.get("ORDINANCE_REGEN_GOLDEN") == "1":
        expected.write_text(output, encoding="utf-8")
    assert status == (1 if "error[" in output else 0)  # a file of warnings only passes
    assert output and output == expected.read_text(encoding="utf-8")


def test_every_diagnostic_code_has_a_golden_case() -> None:
    seen = set()
    for out in GOLDEN.glob("*.out"):
        text = out.read_text(encoding="utf-8")
        seen.update(code for code in CODES if f"error[{code}]" in text or f"warning[{code}]" in text)
        assert set(re.findall(r"(?:error|warning)\[([a-z_]+)\]", text)) <= set(REGISTRY), out.name
    assert seen == CODES

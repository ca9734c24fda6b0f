"""The *Projections and privacy* page (docs/projections.md) runs as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs" / "projections.md").read_text(encoding="utf-8")


def steps() -> list[tuple[str, list[str]]]:
    """The section's `$ command` lines with the output shown under each."""
    text = PAGE
    found: list[tuple[str, list[str]]] = []
    for _, block in re.findall(r"^(`{3,})\n(.*?)^\1$", text, re.M | re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                found.append((line[2:], []))
            elif found:
                found[-1][1].append(line.rstrip())
    return found


def normalised(lines: list[str]) -> list[str]:
    """Masked: the policy hash and rule numbers (they change with the stdlib)
    and the wall-clock time log lines show."""
    text = "\n".join(line.rstrip() for line in lines)
    text = re.sub(r"policy [0-9a-f]{12}", "policy HASH", text)
    text = re.sub(r"rule \d+", "rule N", text)
    return re.sub(r"^(r\d+) \d\d:\d\d:\d\d ", r"\1 HH:MM:SS ", text, flags=re.M).splitlines()


def test_the_projections_section_runs_as_written(tmp_path: Path) -> None:
    found = steps()
    commands = [c.split()[1] for c, _ in found]
    for name in ("state", "rehydrate", "records", "check", "query"):
        assert name in commands, name
    marker = "@@step@@"
    script = "\n".join(f"{cmd}\n__rc=$?; echo {marker}; (exit $__rc)" for cmd, _ in found)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORDINANCE_")}
    env["ORDINANCE_CACHE"] = os.environ["ORDINANCE_CACHE"]  # (the session's, see conftest.py)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.stderr == ""
    outputs = done.stdout.split(marker + "\n")
    assert len(outputs) == len(found) + 1
    for (command, shown), got in zip(found, outputs):
        assert normalised(got.splitlines()) == normalised(shown), command

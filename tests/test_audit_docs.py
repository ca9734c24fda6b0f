"""The commands docs/audit.md shows run as shown (bash, in a fresh home)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "audit.md"


def commands(block: str) -> list[str]:
    """The `$ ` lines of a shell block, with their continuation lines."""
    out: list[str] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            out.append(line[2:])
        elif out and (out[-1].endswith("\\") or out[-1].count("'") % 2):
            out[-1] += "\n" + line
    return out


def test_the_documented_commands_run(tmp_path: Path) -> None:
    blocks = re.findall(r"```\n(.*?)```", DOC.read_text(), re.S)
    script = [c for b in blocks for c in commands(b)]
    if shutil.which("dot") is None:
        script = [c.replace(" | dot -Tsvg > decision.svg", " > decision.dot") for c in script]
    home = tmp_path / "home"
    sessions = home / ".claude" / "projects" / "-home-me-demo"
    sessions.mkdir(parents=True)
    use = {"type": "tool_use", "id": "toolu_9", "name": "Write", "input": {"file_path": "/etc/passwd", "content": ""}}
    record = {"type": "assistant", "timestamp": "2099-01-01T00:00:00Z", "cwd": str(tmp_path / "demo"), "sessionId": "s"}
    (sessions / "s.jsonl").write_text(json.dumps({**record, "message": {"content": [use]}}) + "\n")
    lines = ["set -e", *script]
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("ORDINANCE_")},
        "HOME": str(home),
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "COLUMNS": "200",
    }
    done = subprocess.run(
        ["bash", "-c", "\n".join(lines)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    assert "cd sub && git push -f origin main" in out and "decision 2, rebuilt under its own policy" in out
    assert "forbid force-push-main" in out and "1 tool calls: 1 deny" in out
    assert (tmp_path / "demo" / "audit.html").exists() and (tmp_path / "demo" / "audit.jsonl").exists()
    assert sorted(p.name for p in (tmp_path / "demo").iterdir() if p.suffix == ".db") == []  # the store is the owner's

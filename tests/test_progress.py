"""Long runs show a progress bar on a terminal: `replay` of many decisions
and `fuzz` of many histories. It goes to stderr, only when stderr is a
terminal (here a pseudo-terminal), so piped output stays clean."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ordinance.cli import cli
from ordinance.facts import open_store, schema_of
from ordinance.gate import Gate, Request
from ordinance.rules import compile_text

POLICY = '.include "continuity"\n'


def on_a_terminal(args: list[str], cwd: Path) -> tuple[int, str, str]:
    """Run the CLI with stderr on a pseudo-terminal: (exit code, stdout, what the terminal got)."""
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORDINANCE_") or k == "ORDINANCE_CACHE"}
    env.update(TERM="xterm", COLUMNS="100")
    proc = subprocess.Popen(
        [sys.executable, "-c", "from ordinance.cli import main; main()", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=slave,
        stdin=subprocess.DEVNULL,
    )
    os.close(slave)
    terminal = b""
    while True:
        ready, _, _ = select.select([master], [], [], 300)
        if not ready:
            proc.kill()
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        terminal += chunk
    os.close(master)
    assert proc.stdout is not None
    out = proc.stdout.read().decode()
    return proc.wait(timeout=60), out, terminal.decode(errors="replace")


def test_replay_shows_a_progress_bar_on_a_terminal_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "policy.rules").write_text(POLICY)
    policy = compile_text(POLICY)
    with open_store(str(tmp_path / "ordinance.db"), schema_of(policy)) as store:
        store.assert_facts([("grant", ("alice", "prod", 1))])
        gate = Gate(policy, store)  # the bar starts at 200 decisions (one append: a commit each cost 3 s)
        gate.log([(Request(f"a{n}", "deploy", "prod", "alice", 1), 1_790_000_000 + n) for n in range(400)])
    # piped (not a terminal), in this process: its warm caches spare a second cold start of the CLI
    monkeypatch.chdir(tmp_path)
    env = {k: None for k in os.environ if k.startswith("ORDINANCE_") and k != "ORDINANCE_CACHE"}
    piped = CliRunner(env=env).invoke(cli, ["replay"], catch_exceptions=False)
    assert piped.exit_code == 0 and "400 decisions re-checked, 0 differ" in piped.stdout
    assert "replaying" not in piped.stderr + piped.stdout
    status, out, terminal = on_a_terminal(["replay"], tmp_path)
    assert status == 0, out + terminal
    assert "400 decisions re-checked, 0 differ" in out
    assert "replaying" in terminal and "/400" in terminal


def test_fuzz_shows_a_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    (tmp_path / "policy.rules").write_text(
        POLICY + '.invariant "no permit without a grant" :- permit(A), request(A, _, S, Ag, E), !grant(Ag, S, E).\n'
    )
    status, out, terminal = on_a_terminal(["fuzz", "policy.rules", "--examples", "60"], tmp_path)
    assert status in (0, 1) and "1 invariant(s)" in out, out + terminal  # (the stdlib nests scopes: it breaks)
    assert "fuzzing" in terminal and "/60" in terminal
    counts = [int(n) for n in re.findall(r"(\d+)/60", terminal)]
    assert counts and max(counts) <= 60  # shrinking runs more histories: the bar never passes its total


def test_audit_shows_a_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    import json

    from ordinance.cli.init import CLAUDE_CODE_POLICY

    (tmp_path / "policy.rules").write_text(CLAUDE_CODE_POLICY)
    open_store(str(tmp_path / "ordinance.db"), schema_of(compile_text(CLAUDE_CODE_POLICY))).close()
    records = [
        {
            "type": "assistant",
            "timestamp": f"2026-06-01T10:{n // 60:02d}:{n % 60:02d}Z",
            "cwd": "/p",
            "message": {
                "content": [{"type": "tool_use", "id": f"t{n}", "name": "Read", "input": {"file_path": "/p/a"}}]
            },
        }
        for n in range(300)  # the bar starts at 200 calls
    ]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    status, out, terminal = on_a_terminal(["audit", "s.jsonl"], tmp_path)
    assert status == 0, out + terminal
    assert out.startswith("300 tool calls: 300 deny")  # (no grant in the store)
    assert "auditing" in terminal and "/300" in terminal

"""After-events of a host without call ids (Gemini CLI, Cursor, Copilot CLI):
the cost of finding the oldest open call of a name as the store grows.

    python benchmarks/bench_content_ids.py [--history 2000] [--calls 200]

One in-process Service over a SQLite store with the example policy. First
--history distinct Gemini BeforeTool/AfterTool pairs (each closed: an
intent and an outcome receipt), then --calls pairs of one same command,
timing each BeforeTool and AfterTool through hosts.flow.handle. Prints p50
/ p99 of each, against the same with a Claude Code payload (its own call
id: no search). The after-event takes its call from the ids the process
opened (hosts/flow.py); without them (after a restart) it scans the agent's
intent and asked receipts, whose time grows with the history.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ordinance.cli.init import CLAUDE_CODE_POLICY  # noqa: E402
from ordinance.facts import open_store, schema_of  # noqa: E402
from ordinance.hosts import claude_code, gemini  # noqa: E402
from ordinance.hosts.flow import handle  # noqa: E402
from ordinance.rules import compile_text  # noqa: E402
from ordinance.serve import Principal, Service  # noqa: E402

PROJECT = "/tmp/bench/project"
AGENT = Principal("claude-code")


def gemini_pair(command: str) -> tuple[dict[str, Any], dict[str, Any]]:
    before = {"hook_event_name": "BeforeTool", "session_id": "s", "cwd": PROJECT}
    before |= {"tool_name": "run_shell_command", "tool_input": {"command": command}}
    after = dict(before, hook_event_name="AfterTool", tool_response={"llmContent": "ok", "returnDisplay": "ok"})
    return before, after


def claude_pair(command: str, n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    before = {"hook_event_name": "PreToolUse", "session_id": "s", "cwd": PROJECT, "tool_use_id": f"t{n}"}
    before |= {"tool_name": "Bash", "tool_input": {"command": command}}
    return before, dict(before, hook_event_name="PostToolUse", tool_response={"stdout": "ok"})


def ms(xs: list[float]) -> str:
    xs = sorted(xs)
    return f"p50 {statistics.median(xs) * 1000:.2f} ms, p99 {xs[int(len(xs) * 0.99) - 1] * 1000:.2f} ms"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--history", type=int, default=2000)
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    policy = compile_text(CLAUDE_CODE_POLICY)
    with tempfile.TemporaryDirectory() as tmp, open_store(str(Path(tmp) / "b.db"), schema_of(policy)) as store:
        store.assert_facts([("grant", ("claude-code", PROJECT, 1))], source="init", author="bench")
        service = Service(policy, store)
        for i in range(args.history):
            for payload in gemini_pair(f"echo {i}"):
                handle(gemini, service, AGENT, payload, project=PROJECT)
        series: dict[str, list[float]] = {"gemini before": [], "gemini after": [], "claude pre": [], "claude post": []}
        for i in range(args.calls):
            pairs = [(gemini, "gemini", gemini_pair("git status")), (claude_code, "claude", claude_pair("ls", i))]
            for host, name, (before, after) in pairs:
                for label, payload in (
                    (f"{name} {'before' if name == 'gemini' else 'pre'}", before),
                    (f"{name} {'after' if name == 'gemini' else 'post'}", after),
                ):
                    t = time.perf_counter()
                    handle(host, service, AGENT, payload, project=PROJECT)
                    series[label].append(time.perf_counter() - t)
        print(f"history: {args.history} closed Gemini calls; {args.calls} calls timed (in process, one thread)")
        for label, xs in series.items():
            print(f"  {label:<14} {ms(xs)}")


if __name__ == "__main__":
    main()

"""The gate where agents act: hooks and the server against in-process decisions.

    python benchmarks/bench_serve.py [--facts 100000] [--calls 400]

One run, one store of ~N facts (bench_gate's world plus the Claude Code
policy and the agent's grant), one `ordinance serve` process. Prints p50 /
p99 and the ratio to the issue's target (ratio <= 1 meets it) of
- in-process `Gate.decide` and `Gate.check` on the same tool-call request;
- the `http` hook end to end (HTTP POST of a PreToolUse payload to
  /hooks/claude-code: request facts, decision, decision log, intent
  receipt, answer), at the server's wall clock, as Claude Code calls it
  (for at most --wall-seconds);
- the same tool-call requests through `/check` at a fixed `now` (the warm
  model at one instant: the hook's decision work without its receipt);
- the `command` hook (`ordinance hook claude-code --server`, a new
  process per call, as Claude Code runs it);
- server decisions/s from 4 concurrent keep-alive clients, and the same
  count of in-process `Gate.decide` per second.
The wall-clock series re-evaluate the store whenever the clock moves to a
new second (until the gate is fast at an advancing clock).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from bench_gate import world  # noqa: E402

from ordinance.cli.init import CLAUDE_CODE_POLICY  # noqa: E402
from ordinance.facts import Event, open_store, schema_of  # noqa: E402
from ordinance.gate import Gate  # noqa: E402
from ordinance.rules import compile_text  # noqa: E402
from ordinance.facts.events import kind_of  # noqa: E402
from ordinance.serve.claude_code import tool_request  # noqa: E402


PROJECT = "/home/me/p"
TOKEN = "bench-token-0123456789abcdef"


def payload(i: int) -> dict[str, object]:
    command = "cd sub && git push origin feature" if i % 2 else "git status && pytest -q tests/"
    return {
        "session_id": "bench",
        "cwd": PROJECT,
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_use_id": f"toolu_{i}",
        "tool_input": {"command": command, "description": "bench"},
    }


def pct(samples: list[float]) -> tuple[float, float]:
    s = sorted(samples)
    return statistics.median(s), s[min(len(s) - 1, int(len(s) * 0.99))]


def line(label: str, samples: list[float], p50_target: float | None, p99_target: float | None) -> None:
    p50, p99 = pct(samples)
    r50 = f"({p50 / p50_target:5.2f}x target)" if p50_target else " " * 16
    r99 = f"({p99 / p99_target:5.2f}x target)" if p99_target else ""
    print(f"{label:40s} p50 {p50 * 1e3:8.3f} ms {r50}  p99 {p99 * 1e3:8.3f} ms {r99}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--processes", type=int, default=30, help="command hook calls (one process each)")
    ap.add_argument("--wall-seconds", type=float, default=30.0, help="time spent on the wall-clock hook series")
    args = ap.parse_args()
    policy = compile_text(CLAUDE_CODE_POLICY)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "policy.rules").write_text(CLAUDE_CODE_POLICY)
        (root / "tokens.toml").write_text(f'[[principal]]\nname = "claude-code"\ntoken = "{TOKEN}"\n')
        db = str(root / "o.db")
        rows = world(args.facts, random.Random(7)) + [("grant", ("claude-code", PROJECT, 1))]
        with open_store(db, schema_of(policy)) as store:
            store.append([Event(kind_of(r), r, a, "bench", "bench") for r, a in rows])
            gate = Gate(policy, store)
            now = int(time.time())
            t0 = time.perf_counter()
            gate.decide(tool_request(payload(0), "claude-code", gate.request_relations, project=PROJECT), now)
            print(f"facts: {len(rows)}  warm model built in {time.perf_counter() - t0:.2f} s")
            requests = [
                tool_request(payload(i), "claude-code", gate.request_relations, project=PROJECT)
                for i in range(args.calls)
            ]
            decide = []
            for r in requests:
                t = time.perf_counter()
                d = gate.decide(r, now)
                decide.append(time.perf_counter() - t)
                assert d.allowed, d.codes
            check = []
            for r in requests[: args.calls // 2]:
                t = time.perf_counter()
                gate.check(r, now)
                check.append(time.perf_counter() - t)
            t = time.perf_counter()
            n_inproc = 0
            while time.perf_counter() - t < 2.0:
                gate.decide(requests[n_inproc % len(requests)], now)
                n_inproc += 1
            inproc_rate = n_inproc / (time.perf_counter() - t)

        port = free_port()
        url = f"http://127.0.0.1:{port}"
        server = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from ordinance.cli import main; main()",
                "serve",
                "--policy",
                str(root / "policy.rules"),
                "--db",
                db,
                "--tokens",
                str(root / "tokens.toml"),
                "--port",
                str(port),
                "--project",
                PROJECT,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            http = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120)
            while True:
                try:
                    http.get("/health")
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
            t0 = time.perf_counter()
            first = http.post("/hooks/claude-code", json=payload(10**6)).json()
            print(f"server: first hook call (warm model built) {time.perf_counter() - t0:.2f} s")
            assert first["hookSpecificOutput"]["permissionDecision"] == "allow", first
            hook: list[float] = []
            stop_at = time.perf_counter() + args.wall_seconds
            while len(hook) < args.calls and (time.perf_counter() < stop_at or len(hook) < 5):
                t = time.perf_counter()
                out = http.post("/hooks/claude-code", json=payload(10**6 + 1 + len(hook))).json()
                hook.append(time.perf_counter() - t)
                assert out["hookSpecificOutput"]["permissionDecision"] == "allow", out
            fixed = []
            asks = []
            for i in range(args.calls):  # the hook's own requests (tool facts and all), at one instant
                r = requests[i].to_json()
                del r["agent"]
                asks.append({"request": {**r, "id": f"fixed-{i}"}, "now": now})
            http.post("/check", json=asks[0])
            for ask in asks:
                t = time.perf_counter()
                assert http.post("/check", json=ask).json()["allowed"] is True
                fixed.append(time.perf_counter() - t)
            body = asks[0]
            command = []
            env = {**os.environ, "ORDINANCE_TOKEN": TOKEN}
            for i in range(args.processes):
                data = json.dumps(payload(2 * 10**6 + i)).encode()
                t = time.perf_counter()
                run = subprocess.run(
                    [
                        str(Path(sys.executable).parent / "ordinance"),
                        "hook",
                        "claude-code",
                        "--server",
                        url,
                        "--timeout",
                        "120",
                    ],
                    input=data,
                    capture_output=True,
                    env=env,
                )
                command.append(time.perf_counter() - t)
                assert b'"allow"' in run.stdout, run.stdout + run.stderr

            http.post("/check", json=body)  # the wall-clock series may have evicted the fixed-now model
            done, stop = [0], time.perf_counter() + 3.0

            def client() -> None:
                with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as c:
                    while time.perf_counter() < stop:
                        c.post("/check", json=body)
                        done[0] += 1

            start = time.perf_counter()
            threads = [threading.Thread(target=client) for _ in range(4)]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            rate = done[0] / (time.perf_counter() - start)
        finally:
            server.terminate()
            server.wait(timeout=10)

    print()
    line("in-process Gate.decide", decide, None, None)
    line("in-process Gate.check (+ log)", check, None, None)
    line(f"http hook, end to end, wall clock ({len(hook)})", hook, 5e-3, 20e-3)
    line("hook's request via /check, fixed now", fixed, 5e-3, 20e-3)
    line("command hook (process per call)", command, 60e-3, None)
    p50d, _ = pct(decide)
    print(
        f"\nhttp hook p50 / in-process decide p50: {pct(hook)[0] / p50d:8.1f}x (wall clock), "
        f"{pct(fixed)[0] / p50d:6.1f}x (fixed now)"
    )
    print(f"server: {rate:8.0f} decisions/s over 4 clients ({2000 / rate:5.2f}x target of 2,000/s)")
    print(f"in-process Gate.decide: {inproc_rate:8.0f} decisions/s (server / in-process {rate / inproc_rate:5.3f})")


if __name__ == "__main__":
    main()

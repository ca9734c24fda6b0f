"""The gate where agents act: hooks and the server against in-process decisions.

    python benchmarks/bench_serve.py [--facts 100000] [--calls 400]

One run, one store of ~N facts (bench_gate's world plus the Claude Code
policy and the agent's grant), one `ordinance serve` process. Prints p50 /
p99 and the ratio to the issue's target (ratio <= 1 meets it) of
- in-process `Gate.decide` and `Gate.check` on the same tool-call request;
- the `http` hook end to end (HTTP POST of a PreToolUse payload to
  /hooks/claude-code: request facts, decision, decision log and intent
  receipt in one commit, answer), at the server's wall clock, two ways:
  as a session calls it (PreToolUse, the tool runs for --gap-ms,
  PostToolUse, the model thinks for --gap-ms, the next PreToolUse) and
  back to back (the next PreToolUse right after the answer, so it waits
  while the model takes in the previous call's receipt);
- the same tool-call requests through `/check` at a fixed `now` (the warm
  model at one instant: the hook's decision work without its receipt);
- the `command` hook (`ordinance hook claude-code --server`, a new
  process per call, as Claude Code runs it);
- server decisions/s through `/check` from --clients concurrent keep-alive
  connections, with one server process and with `--workers 2` (a
  plain-socket client in its own process, so the figure is the server's,
  not the client's), and the count of in-process
  `Gate.decide` per second.
Each series runs for at most --wall-seconds.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
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
from ordinance.hosts.claude_code import tool_request  # noqa: E402


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
    print(f"{label:44s} p50 {p50 * 1e3:8.3f} ms {r50}  p99 {p99 * 1e3:8.3f} ms {r99}")


def post_payload(i: int) -> dict[str, object]:
    return {**payload(i), "hook_event_name": "PostToolUse", "tool_response": {"stdout": "ok", "exit_code": 0}}


def answer(sock: socket.socket, data: bytes, buf: bytes) -> tuple[bytes, bytes]:
    """Send `data` on a keep-alive connection; (the answer's body, what was read past it)."""
    sock.sendall(data)
    while True:
        head, sep, rest = buf.partition(b"\r\n\r\n")
        if sep:
            size = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            if len(rest) >= size:
                return rest[:size], rest[size:]
        buf += sock.recv(65536)


def load(url: str, token: str, body: bytes, clients: int, seconds: float, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    """`clients` keep-alive connections POSTing `body` to /check as fast as
    the server answers, for `seconds`; puts the count of allowed answers."""
    host, port = url.removeprefix("http://").split(":")
    request = (
        f"POST /check HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    done = [0] * clients  # per connection
    stop = time.perf_counter() + seconds

    def client(n: int) -> None:
        with socket.create_connection((host, int(port))) as sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            buf = b""
            while time.perf_counter() < stop:
                got, buf = answer(sock, request, buf)
                assert b'"allowed": true' in got, got
                done[n] += 1

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    out.put(sum(done))


def serve(root: Path, db: str, *extra: str) -> tuple[subprocess.Popen[bytes], str]:
    """`ordinance serve` on the bench's store and a free port, answering; (process, url)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    argv = ["serve", "--policy", str(root / "policy.rules"), "--db", db, "--tokens", str(root / "tokens.toml")]
    server = subprocess.Popen(
        [sys.executable, "-c", "from ordinance.cli import main; main()", *argv, "--port", str(port)]
        + ["--project", PROJECT, *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    while True:
        try:
            httpx.get(f"{url}/health")
            return server, url
        except httpx.TransportError:
            time.sleep(0.1)


def rate(url: str, body: dict[str, object], clients: int, seconds: float = 3.0) -> float:
    """Decisions/s through /check from `clients` connections (`load`, in a process of its own)."""
    queue: multiprocessing.Queue[int] = multiprocessing.Queue()
    worker = multiprocessing.Process(target=load, args=(url, TOKEN, json.dumps(body).encode(), clients, seconds, queue))
    start = time.perf_counter()
    worker.start()
    count = queue.get()
    per_s = count / (time.perf_counter() - start)
    worker.join()
    return per_s


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--processes", type=int, default=30, help="command hook calls (one process each)")
    ap.add_argument("--wall-seconds", type=float, default=30.0, help="time spent on each wall-clock hook series")
    ap.add_argument("--gap-ms", type=float, default=50.0, help="a session's pause while a tool runs and between calls")
    ap.add_argument("--clients", type=int, default=16, help="concurrent connections for the throughput")
    args = ap.parse_args()
    policy = compile_text(CLAUDE_CODE_POLICY)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "policy.rules").write_text(CLAUDE_CODE_POLICY)
        # a test rig: the owner gives the principal the clock, for the fixed-`now` /check series
        (root / "tokens.toml").write_text(f'[[principal]]\nname = "claude-code"\ntoken = "{TOKEN}"\nclock = true\n')
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

        server, url = serve(root, db)
        try:
            http = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120)
            t0 = time.perf_counter()
            first = http.post("/hooks/claude-code", json=payload(10**6)).json()
            print(f"server: first hook call (warm model built) {time.perf_counter() - t0:.2f} s")
            assert "permissionDecision" not in first["hookSpecificOutput"], first  # permitted: deferred
            session: list[float] = []  # PreToolUse, tool, PostToolUse, model, PreToolUse ...
            stop_at = time.perf_counter() + args.wall_seconds
            while len(session) < args.calls and (time.perf_counter() < stop_at or len(session) < 5):
                i = 10**6 + 1 + len(session)
                t = time.perf_counter()
                out = http.post("/hooks/claude-code", json=payload(i)).json()
                session.append(time.perf_counter() - t)
                assert "permissionDecision" not in out["hookSpecificOutput"], out
                time.sleep(args.gap_ms / 1e3)
                assert http.post("/hooks/claude-code", json=post_payload(i)).json() == {}
                time.sleep(args.gap_ms / 1e3)
            hook: list[float] = []  # back to back
            stop_at = time.perf_counter() + args.wall_seconds
            while len(hook) < args.calls and (time.perf_counter() < stop_at or len(hook) < 5):
                t = time.perf_counter()
                out = http.post("/hooks/claude-code", json=payload(3 * 10**6 + len(hook))).json()
                hook.append(time.perf_counter() - t)
                assert "permissionDecision" not in out["hookSpecificOutput"], out
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
                assert b"ordinance permits this" in run.stdout, run.stdout + run.stderr

            http.post("/check", json=body)  # the wall-clock series may have evicted the fixed-now model
            rates = {(1, clients): rate(url, body, clients) for clients in sorted({4, args.clients})}
        finally:
            server.terminate()
            server.wait(timeout=10)
        server, url = serve(root, db, "--workers", "2")  # two processes on one socket and one store
        try:
            for _ in range(20):  # each worker's warm model at this `now`
                httpx.post(f"{url}/check", json=body, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120)
            rates[2, args.clients] = rate(url, body, args.clients)
        finally:
            server.terminate()
            server.wait(timeout=10)

    print()
    line("in-process Gate.decide", decide, None, None)
    line("in-process Gate.check (+ log)", check, None, None)
    line(f"http hook, a session's calls ({len(session)})", session, 3e-3, 20e-3)
    line(f"http hook, back to back ({len(hook)})", hook, 3e-3, 20e-3)
    line("hook's request via /check, fixed now", fixed, 3e-3, 20e-3)
    line("command hook (process per call)", command, 60e-3, None)
    p50d, _ = pct(decide)
    print(
        f"\nhttp hook p50 / in-process decide p50: {pct(session)[0] / p50d:6.1f}x (a session), "
        f"{pct(hook)[0] / p50d:6.1f}x (back to back), {pct(fixed)[0] / p50d:6.1f}x (fixed now)"
    )
    for (workers, clients), per_s in rates.items():
        print(
            f"server, {workers} worker{'s' if workers > 1 else ' '}: {per_s:8.0f} decisions/s over {clients:2d} "
            f"connections ({3000 / per_s:5.2f}x target of 3,000/s; server / in-process {per_s / inproc_rate:5.3f})"
        )
    print(f"in-process Gate.decide: {inproc_rate:8.0f} decisions/s")


if __name__ == "__main__":
    main()

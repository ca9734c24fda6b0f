"""The server's own overhead, two trees against each other in one run.

    python benchmarks/bench_serve_ab.py OLD NEW [--path check|hook] [--workers 2] [--rounds 4]

OLD and NEW are PYTHONPATH entries (a checkout's root, an export of a
commit's `ordinance/`). One store of ~--facts facts (bench_serve's world),
then per round and per tree, taking turns at going first: an `ordinance
serve` of that tree, warmed, then --clients keep-alive connections (a
plain-socket client in its own process) POSTing `/check` (one fixed-`now`
tool-call request, as bench_serve's throughput) or `/hooks/claude-code`
(a new tool call each time) for --seconds. Prints decisions/s, the server's
CPU time per decision (utime+stime of the server and its workers, which a
machine shared with other work moves less than the rate) and the client's
p50 / p99, then each tree's means.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import bench_serve as bs  # noqa: E402
from bench_gate import world  # noqa: E402

from ordinance.cli.init import CLAUDE_CODE_POLICY  # noqa: E402
from ordinance.facts import Event, open_store, schema_of  # noqa: E402
from ordinance.facts.events import kind_of  # noqa: E402
from ordinance.gate import Gate  # noqa: E402
from ordinance.hosts.claude_code import tool_request  # noqa: E402
from ordinance.rules import compile_text  # noqa: E402


def build(root: Path, facts: int) -> None:
    """The store, policy, tokens and /check body under `root`."""
    (root / "policy.rules").write_text(CLAUDE_CODE_POLICY)
    (root / "tokens.toml").write_text(f'[[principal]]\nname = "claude-code"\ntoken = "{bs.TOKEN}"\nclock = true\n')
    policy = compile_text(CLAUDE_CODE_POLICY)
    rows = world(facts, random.Random(7)) + [("grant", ("claude-code", bs.PROJECT, 1))]
    with open_store(str(root / "o.db"), schema_of(policy)) as store:
        store.append([Event(kind_of(r), r, a, "bench", "bench") for r, a in rows])
        gate = Gate(policy, store)
        r = tool_request(bs.payload(0), "claude-code", gate.request_relations, project=bs.PROJECT).to_json()
    del r["agent"]
    (root / "body.json").write_text(json.dumps({"request": {**r, "id": "fixed-0"}, "now": int(time.time())}))


def serve(root: Path, tree: str, workers: int) -> tuple[subprocess.Popen[bytes], int]:
    port = bs.free_port()
    argv = [
        sys.executable,
        "-c",
        "from ordinance.cli import main; main()",
        "serve",
        "--policy",
        str(root / "policy.rules"),
    ]
    argv += ["--db", str(root / "o.db"), "--tokens", str(root / "tokens.toml"), "--port", str(port)]
    argv += ["--project", bs.PROJECT] + (["--workers", str(workers)] if workers > 1 else [])
    env = {**os.environ, "PYTHONPATH": tree}
    server = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while True:
        try:
            socket.create_connection(("127.0.0.1", port)).close()
            return server, port
        except OSError:
            time.sleep(0.1)


def request(path: str, body: bytes) -> bytes:
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {bs.TOKEN}\r\n"
    return (head + f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body


def load(root: Path, port: int, path: str, clients: int, seconds: float, out: Any, base: int) -> None:
    body = (root / "body.json").read_bytes()
    done = [0] * clients
    lat: list[list[float]] = [[] for _ in range(clients)]
    stop = time.perf_counter() + seconds

    def client(n: int) -> None:
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            buf, i = b"", 0
            while time.perf_counter() < stop or i == 0:
                if path == "check":
                    data = request("/check", body)
                else:
                    data = request("/hooks/claude-code", json.dumps(bs.payload(base + n * 10**6 + i)).encode())
                t = time.perf_counter()
                got, buf = bs.answer(sock, data, buf)
                lat[n].append(time.perf_counter() - t)
                if path == "check":
                    assert b'"allowed": true' in got, got
                else:
                    assert b"permissionDecision" not in got, got
                done[n] += 1
                i += 1

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    t0 = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    every = sorted(x for per in lat for x in per)
    out.put((sum(done) / (time.perf_counter() - t0), every[len(every) // 2], every[int(len(every) * 0.99)]))


def cpu(pid: int) -> float:
    """utime + stime of `pid` and its children (the workers), in seconds."""
    pids = [pid] + [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    total = 0.0
    for p in pids:
        fields = Path(f"/proc/{p}/stat").read_text().rpartition(")")[2].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def measure(root: Path, port: int, path: str, clients: int, seconds: float, base: int) -> tuple[float, float, float]:
    queue: Any = multiprocessing.Queue()
    worker = multiprocessing.Process(target=load, args=(root, port, path, clients, seconds, queue, base))
    worker.start()
    got = queue.get()
    worker.join()
    return got  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("trees", nargs=2, metavar="TREE")
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--path", choices=["check", "hook"], default="check")
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()
    results: dict[str, list[tuple[float, float]]] = {t: [] for t in args.trees}
    base = 10**9
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        build(root, args.facts)
        for n in range(args.rounds):
            for tree in args.trees if n % 2 == 0 else args.trees[::-1]:
                server, port = serve(root, tree, args.workers)
                try:
                    measure(root, port, args.path, 1, 0.01, base)  # the warm model
                    measure(root, port, args.path, 4, 1.5, base + 5 * 10**7)
                    c0, t0 = cpu(server.pid), time.perf_counter()
                    rate, p50, p99 = measure(root, port, args.path, args.clients, args.seconds, base + 2 * 10**8)
                    per = (cpu(server.pid) - c0) / (rate * (time.perf_counter() - t0))
                    base += 10**9
                    results[tree].append((rate, per))
                    print(
                        f"{tree:30s} {args.workers} worker(s) {args.path} x{args.clients}: {rate:6.0f}/s  "
                        f"cpu {per * 1e6:5.0f} us/decision  p50 {p50 * 1e3:6.2f} ms  p99 {p99 * 1e3:6.2f} ms",
                        flush=True,
                    )
                finally:
                    server.terminate()
                    server.wait(10)
    (r0, c0), (r1, c1) = ([sum(x[i] for x in results[t]) / len(results[t]) for i in (0, 1)] for t in args.trees)
    for tree, (rate, per) in zip(args.trees, ((r0, c0), (r1, c1))):
        print(f"{tree:30s} mean {rate:6.0f} decisions/s  cpu {per * 1e6:5.0f} us/decision  ({args.rounds} rounds)")
    print(f"second / first: {r1 / r0:.2f}x decisions/s, {c1 / c0:.2f}x cpu per decision")


if __name__ == "__main__":
    main()

"""`/health` latency while other clients send the worst requests.

    python benchmarks/bench_abuse.py [--seconds 10] [--abusers 4]

One `ordinance serve` process. Prints `/health` p50 / p99 / max (ms) and
the count of answers, first with no other load, then while --abusers
clients each loop over the worst requests the server takes: a body nested
100k deep (`too_deep`), a body declared 1 GB (refused unread: `too_large`,
and the same without a token: 401), 17 MB streamed without a length (cut
at the cap), a `/query` whose overlay makes N * N candidates a filter
rejects (cut by the gate's deadline), a `/query` whose overlay derives 20M
tuples (cut at the request's tuple limit, gate REQUEST_TUPLES; before it,
cut by the deadline after millions, and freeing them held the interpreter
for seconds), and a batch of `/check`s of which one
has a bad field (`bad_field`, its own 400). The issue's target is /health
within 100 ms; the figures are the server's on this host.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
from served import AGENT, OWNER, Served, write_tokens  # noqa: E402

from ordinance.cli.init import CLAUDE_CODE_POLICY  # noqa: E402

SLOW = """
.decl request_size(a: symbol, n: number)
.decl hit(a: symbol)
hit(A) :- request_size(A, N), X = range(0, N), Y = range(0, N), X + Y < 0.
.decl request_many(a: symbol, n: number)
.decl big(a: symbol, x: number)
big(A, X) :- request_many(A, N), X = range(0, N).
"""
AUTH = {"Authorization": f"Bearer {AGENT}"}
HUGE = 20_000_000  # the tuples the huge query asks its overlay to derive
HUGE_QUERY = {  # (a pattern with a variable: a bound one is answered on demand, with no millions)
    "pattern": 'big("h1", X)',
    "request": {"id": "h1", "kind": "k", "target": "/p", "epoch": 1, "attributes": {"request_many": [[HUGE]]}},
}


def health(url: str, seconds: float, stop: threading.Event | None = None) -> list[float]:
    out: list[float] = []
    with httpx.Client(base_url=url, timeout=120) as client:
        ends = time.monotonic() + seconds
        while time.monotonic() < ends:
            started = time.perf_counter()
            assert client.get("/health").status_code == 200
            out.append(time.perf_counter() - started)
            time.sleep(0.02)
    return out


def declared(port: int, path: str, token: str | None) -> None:
    """Headers of a 1 GB body, and no body: the answer must come unread."""
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\n{auth}Content-Length: {1 << 30}\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(head.encode())
        sock.recv(65536)


def abuse(server: Served, stop: threading.Event, counts: dict[str, int]) -> None:
    deep = b'{"request": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    slow = {
        "pattern": 'hit("s1")',
        "request": {"id": "s1", "kind": "k", "target": "/p", "epoch": 1, "attributes": {"request_size": [[100_000]]}},
    }
    chunk = b"[" * (1 << 20)
    with httpx.Client(base_url=server.url, timeout=120) as client:
        while not stop.is_set():
            for name, send in (
                ("deep", lambda: client.post("/check", content=deep, headers=AUTH)),
                ("declared_1gb", lambda: declared(server.port, "/check", AGENT)),
                ("declared_1gb_no_token", lambda: declared(server.port, "/hooks/claude-code", None)),
                ("streamed_17mb", lambda: client.post("/assert", content=iter([chunk] * 17), headers=AUTH)),
                ("slow_query", lambda: client.post("/query", json=slow, headers=AUTH)),
                ("huge_query", lambda: client.post("/query", json=HUGE_QUERY, headers=AUTH)),
                (
                    "bad_field",
                    lambda: client.post("/check", json={"request": {**slow["request"], "key": 5}}, headers=AUTH),
                ),
            ):
                if stop.is_set():
                    return
                try:
                    send()
                except (httpx.TransportError, OSError):  # a refused stream may close the connection
                    pass
                counts[name] = counts.get(name, 0) + 1


def huge_query(server: Served) -> str:
    """One huge query's answer: its error code and message."""
    with httpx.Client(base_url=server.url, timeout=120) as client:
        error = client.post("/query", json=HUGE_QUERY, headers=AUTH).json().get("error") or {}
    return f"{error.get('code')}: {error.get('message')}"


def report(label: str, lat: list[float]) -> None:
    ms = sorted(x * 1000 for x in lat)
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    print(f"{label:28s} n={len(ms):5d}  p50={statistics.median(ms):8.1f} ms  p99={p99:8.1f} ms  max={ms[-1]:8.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--abusers", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "policy.rules").write_text(CLAUDE_CODE_POLICY + SLOW)
        write_tokens(d / "tokens.toml")
        with Served(d / "policy.rules", str(d / "o.db"), d / "tokens.toml") as server:
            server.post("/assert", OWNER, json={"text": 'grant("claude-code", "/p", 1).'})
            report("/health, idle", health(server.url, args.seconds))
            stop, counts = threading.Event(), {}  # type: ignore[var-annotated]
            threads = [threading.Thread(target=abuse, args=(server, stop, counts)) for _ in range(args.abusers)]
            for t in threads:
                t.start()
            time.sleep(0.5)
            lat = health(server.url, args.seconds)
            stop.set()
            for t in threads:
                t.join()
            report(f"/health, {args.abusers} abusers", lat)
            print("abusive requests sent:", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
            # alone (the abusers share the interpreter, so each gets fewer tuples made before its cut)
            answered: list[str] = []
            one = threading.Thread(target=lambda: answered.append(huge_query(server)))
            one.start()
            lat = health(server.url, 0.2)
            while one.is_alive():
                lat += health(server.url, 0.2)
            report("/health, one huge query", lat)
            print("the huge query:", answered[0])


if __name__ == "__main__":
    main()

"""Projection cost at ~100k facts: the state file and the rehydration bundle.

    python benchmarks/bench_project.py [--facts 100000] [--repeat 20]

The store holds a long night's history: claims, resolved items, leases taken
over by newer epochs, claims told and retracted, and a small live working set
(tens of lines). Prints, against seed 003's measured bundle (17.5 KB in
0.04 s; ratio <= 1 is at least as fast):
- cold: open the store, replay it, evaluate the policy, render; and cold
  from the gate snapshot a previous run wrote (what one `ordinance state` run
  costs, without the interpreter's start-up);
- warm: render again at the same revision and `now` (a server's Projector);
- rehydrate warm: the whole bundle (state, open decisions, newest log lines);
- after one new fact: the Projector follows the store (the gate's warm model
  is extended, not rebuilt) and renders;
- public audience, cold: the audience's own replay and evaluation;
- served: `ordinance serve --state-out FILE` on the same store: GET
  /rehydrate over HTTP (the one bounded read with the server running), and
  the lag from a write by another process to the state file showing it
  (--no-serve skips this part).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from ordinance.engine import Limits
from ordinance.facts import Event, kind_of, open_store, schema_of
from ordinance.gate import Gate
from ordinance.project import Projector, rehydrate
from ordinance.rules import compile_text
from ordinance.values import FOREVER, parse_instant

NOW = parse_instant("2026-08-14T23:45:00Z")
SEED_SECONDS = 0.04


def world(n: int) -> list[tuple[str, tuple, str]]:
    rows: list[tuple[str, tuple, str]] = [
        ("standing_agent", ("prime",), "public"),
        ("single_valued", ("state",), "public"),
    ]
    layers = ("public", "federation", "sovereign", "architect")
    claims = n * 6 // 10 // 3
    for i in range(claims):
        layer = layers[i % 4]
        rows += [
            ("claim", (f"c{i}", f"s{i % 5000}", "state", "open" if i % 3 else "merged"), layer),
            ("claim_source", (f"c{i}", f"src{i % 50}", "observed" if i % 2 else "reported"), layer),
            ("claim_valid", (f"c{i}", NOW - 86400 + i % 80000, FOREVER), layer),
        ]
    items = n * 2 // 10 // 2
    for i in range(items):
        rows.append(("open_item", (f"i{i}", f"pending item {i}"), "public"))
        if i >= 20:  # all but 20 are resolved
            rows.append(("resolved", (f"i{i}", NOW - 3600), "public"))
    works = n // 10 // 3
    for i in range(works):
        rows.append(("lease", (f"w{i}", f"old{i}", 1, NOW - 7200), "public"))
        if i >= 10:  # taken over, and finished
            rows += [
                ("lease", (f"w{i}", f"new{i}", 2, NOW + 3600), "public"),
                ("resolved", (f"w{i}", NOW - 60), "public"),
            ]
    told = n // 10 // 2
    for i in range(told):
        rows.append(("told", (f"c{i}", "owner", f"claim {i} as told"), "public"))
        if i >= 20:
            rows.append(("retracted", (f"c{i}", NOW - 60), "public"))
    for i in range(5):
        rows += [
            ("settled", (f"q{i}", f"decision {i}"), "public"),
            ("question", (f"q{i + 5}", f"open q {i}"), "public"),
        ]
    return rows


def timed(f, repeat: int) -> tuple[float, object]:
    samples, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--no-serve", dest="serve", action="store_false", help="skip the served measurements")
    args = ap.parse_args()
    policy = compile_text('.include "continuity"\n')
    rows = world(args.facts)
    with tempfile.TemporaryDirectory() as tmp:
        url = str(Path(tmp) / "bench.db")
        with open_store(url, schema_of(policy)) as store:
            store.append([Event(kind_of(r), r, a, "bench", "bench", layer=layer) for r, a, layer in rows])
        print(f"{len(rows)} facts; seed 003's bundle: 17.5 KB in {SEED_SECONDS:.2f} s")

        snap = Path(tmp) / "state.snapshot"

        def cold(snapshot: bool = False) -> object:
            """What `ordinance state` does (without the interpreter's start-up):
            the gate's model, from the snapshot if asked, and the events
            behind the rendered lines."""
            with open_store(url, schema_of(policy)) as s:
                gate = Gate(policy, s, limits=Limits(), snapshot=snap if snapshot else False, eager=False)
                out = Projector(policy, gate=gate).render("state", NOW)
                if snapshot and not snap.exists():
                    assert gate.warm.save_snapshot()
                return out

        t, state = timed(cold, 3)
        print(
            f"cold state file:        {t * 1000:8.1f} ms  ({len(state.text.encode())} B, "  # type: ignore[attr-defined]
            f"{len(state.lines)} lines)  ratio {t / SEED_SECONDS:.2f}"
        )  # type: ignore[attr-defined]
        cold(snapshot=True)  # writes the snapshot
        t, restored = timed(lambda: cold(snapshot=True), 3)
        if restored.text != state.text:  # type: ignore[attr-defined]
            raise SystemExit("the state file from the snapshot differs from the one built from the store")
        print(f"cold, from the snapshot:{t * 1000:8.1f} ms  ratio {t / SEED_SECONDS:.2f}  (`ordinance state`)")
        store = open_store(url, schema_of(policy))
        gate = Gate(policy, store, limits=Limits())  # no decision deadline: a loaded host passes it
        projector = Projector(policy, gate=gate)
        projector.render("state", NOW)
        t, _ = timed(lambda: projector.render("state", NOW), args.repeat)
        print(f"warm state file:        {t * 1000:8.1f} ms  ratio {t / SEED_SECONDS:.2f}")
        t, bundle = timed(lambda: rehydrate(projector, policy, NOW), args.repeat)
        print(
            f"warm rehydrate bundle:  {t * 1000:8.1f} ms  ({len(bundle.text.encode())} B, "  # type: ignore[attr-defined]
            f"{len(bundle.log)} log lines)  ratio {t / SEED_SECONDS:.2f}"
        )  # type: ignore[attr-defined]
        samples = []
        for i in range(5):
            store.append([Event("assert", "open_item", (f"new{i}", "a new item"))])
            t0 = time.perf_counter()
            projector.render("state", NOW)
            samples.append(time.perf_counter() - t0)
        t = statistics.median(samples)
        print(f"after one new fact:     {t * 1000:8.1f} ms  ratio {t / SEED_SECONDS:.2f}")

        def public() -> object:
            with open_store(url, schema_of(policy)) as s:
                return Projector(policy, s).render("state", NOW, audience="public")

        t, _ = timed(public, 3)
        print(f"cold public state file: {t * 1000:8.1f} ms  ratio {t / SEED_SECONDS:.2f}")
        store.close()
        if args.serve:
            served(Path(tmp), url, args.repeat)


def served(tmp: Path, url: str, repeat: int) -> None:
    """GET /rehydrate from a running server, and the state file's lag after a write."""
    import socket
    import subprocess
    import sys

    import httpx

    (tmp / "policy.rules").write_text('.include "continuity"\n')
    (tmp / "tokens.toml").write_text('[[principal]]\nname = "owner"\nowner = true\ntoken = "bench-owner-token"\n')
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    out = tmp / "prime-state.md"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from ordinance.cli import main; main()",
            "serve",
            "--db",
            url,
            "--policy",
            str(tmp / "policy.rules"),
            "--tokens",
            str(tmp / "tokens.toml"),
            "--port",
            str(port),
            "--state-out",
            str(out),
        ],
        stderr=subprocess.DEVNULL,
    )
    try:
        client = httpx.Client(
            base_url=f"http://127.0.0.1:{port}", timeout=120, headers={"Authorization": "Bearer bench-owner-token"}
        )
        deadline = time.monotonic() + 300
        while True:
            try:
                if client.get("/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("ordinance serve did not start")
            time.sleep(0.2)
        ask = {"now": "2026-08-14T23:45:00Z"}
        first = client.get("/rehydrate", params=ask)
        if first.status_code != 200:  # e.g. the server's warm build passed the gate's deadline
            print(f"served rehydrate (HTTP): no answer: {first.json()['error']}")
        else:
            t, reply = timed(lambda: client.get("/rehydrate", params=ask), repeat)
            size = len(reply.json()["text"].encode())  # type: ignore[attr-defined]
            print(f"served rehydrate (HTTP): {t * 1000:7.1f} ms  ({size} B)  ratio {t / SEED_SECONDS:.2f}")
        policy = compile_text('.include "continuity"\n')
        lags = []
        for i in range(5):
            with open_store(url, schema_of(policy)) as s:
                t0 = time.perf_counter()
                rev = s.assert_facts([("open_item", (f"served{i}", "written by another process"))], author="bench")
            while f" · revision {rev} · " not in out.read_text():  # (the cap may leave the item itself out)
                if time.perf_counter() - t0 > 120:
                    raise SystemExit("the state file never showed the write")
                time.sleep(0.005)
            lags.append(time.perf_counter() - t0)
        print(
            f"state file lag after a write: {statistics.median(lags) * 1000:7.1f} ms median of 5 "
            "(the server reads the revision every 0.2 s)"
        )
    finally:
        proc.terminate()
        proc.wait(timeout=30)


if __name__ == "__main__":
    main()

"""Gate latency at ~100k facts on a warm model: p50 / p99 per check.

    python benchmarks/bench_gate.py [--facts 100000] [--checks 2000]

Prints the time to build the warm model (evaluation + `Model.warm`), the
slowest of the first checks, then p50/p99 and their ratio to the DESIGN
target (p50 <= 100 us, p99 <= 1 ms; ratio <= 1 meets it) of
- `decide`: the decision on the warm model (what the target is about),
  for allowed requests and for denied ones (proofs stay lazy);
- `check`: decide + the durable decision-log append (a SQLite commit);
- insert+recheck: one new fact, then a decision (the warm model is extended).
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import tempfile
import time
from pathlib import Path

from ordinance.facts import Event, open_store, schema_of
from ordinance.gate import Gate, Request
from ordinance.rules import compile_text
from ordinance.facts import kind_of
from ordinance.values import FOREVER, parse_instant

NOW = parse_instant("2026-08-14T23:00:00Z")


def world(n: int, rnd: random.Random) -> list[tuple[str, tuple]]:
    rows: list[tuple[str, tuple]] = [("single_valued", ("state",))]
    claims = n // 5  # 3 facts per claim: 60% of the facts
    for i in range(claims):
        c = f"c{i}"
        # even claims: observed, about their own subject; odd: the conflict join's load
        kind = "observed" if i % 2 == 0 else rnd.choice(["reported", "hearsay"])
        subject = f"s{i}" if i % 2 == 0 else f"s{i % (claims // 2 or 1)}"
        rows += [
            ("claim", (c, subject, "state", rnd.choice(["open", "merged"]))),
            ("claim_source", (c, "sweep", kind)),
            ("claim_valid", (c, NOW - rnd.randint(0, 86400), FOREVER)),
        ]
    agents = n // 20
    for i in range(agents):
        rows += [
            ("grant", (f"a{i}", f"scope{i % 100}", 1 + (i % 100) % 3)),
            ("lease", (f"w{i}", f"a{i}", 1 + (i % 100) % 3, NOW + 3600)),
            ("failure_domain", (f"a{i}", f"host{i % 7}")),
        ]
    actions = (n - len(rows)) // 2
    for i in range(actions):
        rows += [
            ("receipt", (f"x{i}", "outcome", f"a{i % agents}", NOW - 600)),
            ("action_scope", (f"x{i}", f"scope{i % 100}")),
        ]
    return rows


def percentiles(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    return statistics.median(samples), samples[int(len(samples) * 0.99) - 1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument("--checks", type=int, default=2000)
    ap.add_argument("--freeze", action="store_true",
                    help="gc.freeze() after warming up: moves the warm model out of the "
                         "collector's reach, which shows how much of p99 is GC pauses")
    args = ap.parse_args()
    rnd = random.Random(7)
    policy = compile_text('.include "continuity"\n')
    rows = world(args.facts, rnd)
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(str(Path(tmp) / "bench.db"), schema_of(policy))
        store.append([Event(kind_of(r), r, a, "bench", "bench") for r, a in rows])
        gate = Gate(policy, store)
        t0 = time.perf_counter()
        gate.model(store.revision(), NOW)
        gate._current_revision()
        build = time.perf_counter() - t0
        if args.freeze:
            gc.collect()
            gc.freeze()
        print(f"facts: {len(rows)}  warm model built in {build:.2f} s")
        agents = args.facts // 20

        def request(i: int, ok: bool) -> Request:
            a = i % agents
            epoch = 1 + (a % 100) % 3
            used = f"c{2 * (i % (args.facts // 10))}"  # an observed claim
            return Request(f"r{i}", "write", f"w{a}", f"a{a}", epoch if ok else epoch - 1 or 0,
                           scope=f"scope{a % 100}", uses=(used,))

        first = []
        for i in range(10):
            t = time.perf_counter()
            gate.decide(request(args.checks * 10 + i, i % 2 == 0), NOW)
            first.append(time.perf_counter() - t)
        print(f"first 10 decides: slowest {max(first) * 1e6:.1f} us, first {first[0] * 1e6:.1f} us")

        for label, ok, fn in (("decide allowed", True, gate.decide), ("decide denied", False, gate.decide),
                              ("check allowed", True, gate.check)):
            samples = []
            allowed = 0
            for i in range(args.checks):
                r = request(i, ok)
                t = time.perf_counter()
                d = fn(r, NOW)
                samples.append(time.perf_counter() - t)
                allowed += d.allowed
            p50, p99 = percentiles(samples)
            print(f"{label:16s} p50 {p50 * 1e6:8.1f} us ({p50 / 100e-6:4.2f}x target)  "
                  f"p99 {p99 * 1e6:8.1f} us ({p99 / 1e-3:4.2f}x target)  allowed {allowed}/{args.checks}")
        # one new fact, then re-check
        samples = []
        for i in range(20):
            store.assert_facts([("grant", (f"new{i}", "scope0", 1))])
            t = time.perf_counter()
            gate.decide(request(i, True), NOW)
            samples.append(time.perf_counter() - t)
        p50, p99 = percentiles(samples)
        print(f"{'insert+recheck':20s} p50 {p50 * 1e3:8.1f} ms  p99 {p99 * 1e3:8.1f} ms")
        store.close()


if __name__ == "__main__":
    main()

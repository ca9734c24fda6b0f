"""Projection cost at ~100k facts: the state file and the rehydration bundle.

    python benchmarks/bench_project.py [--facts 100000] [--repeat 20]

The store holds a long night's history: claims, resolved items, leases taken
over by newer epochs, claims told and retracted, and a small live working set
(tens of lines). Prints, against seed 003's measured bundle (17.5 KB in
0.04 s; ratio <= 1 is at least as fast):
- cold: open the store, replay it, evaluate the policy, render (what one
  `ordinance state` run costs, without the interpreter's start-up);
- warm: render again at the same revision and `now` (a server's Projector);
- rehydrate warm: the whole bundle (state, open decisions, newest log lines);
- after one new fact: the Projector follows the store (the gate's warm model
  is extended, not rebuilt) and renders;
- public audience, cold: the audience's own replay and evaluation.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from ordinance.facts import Event, kind_of, open_store, schema_of
from ordinance.gate import Gate
from ordinance.project import Projector, rehydrate
from ordinance.rules import compile_text
from ordinance.values import FOREVER, parse_instant

NOW = parse_instant("2026-08-14T23:45:00Z")
SEED_SECONDS = 0.04


def world(n: int) -> list[tuple[str, tuple, str]]:
    rows: list[tuple[str, tuple, str]] = [("standing_agent", ("prime",), "public"),
                                          ("single_valued", ("state",), "public")]
    layers = ("public", "federation", "sovereign", "architect")
    claims = n * 6 // 10 // 3
    for i in range(claims):
        layer = layers[i % 4]
        rows += [("claim", (f"c{i}", f"s{i % 5000}", "state", "open" if i % 3 else "merged"), layer),
                 ("claim_source", (f"c{i}", f"src{i % 50}", "observed" if i % 2 else "reported"), layer),
                 ("claim_valid", (f"c{i}", NOW - 86400 + i % 80000, FOREVER), layer)]
    items = n * 2 // 10 // 2
    for i in range(items):
        rows.append(("open_item", (f"i{i}", f"pending item {i}"), "public"))
        if i >= 20:  # all but 20 are resolved
            rows.append(("resolved", (f"i{i}", NOW - 3600), "public"))
    works = n // 10 // 3
    for i in range(works):
        rows.append(("lease", (f"w{i}", f"old{i}", 1, NOW - 7200), "public"))
        if i >= 10:  # taken over, and finished
            rows += [("lease", (f"w{i}", f"new{i}", 2, NOW + 3600), "public"),
                     ("resolved", (f"w{i}", NOW - 60), "public")]
    told = n // 10 // 2
    for i in range(told):
        rows.append(("told", (f"c{i}", "owner", f"claim {i} as told"), "public"))
        if i >= 20:
            rows.append(("retracted", (f"c{i}", NOW - 60), "public"))
    for i in range(5):
        rows += [("settled", (f"q{i}", f"decision {i}"), "public"), ("question", (f"q{i + 5}", f"open q {i}"), "public")]
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
    args = ap.parse_args()
    policy = compile_text('.include "continuity"\n')
    rows = world(args.facts)
    with tempfile.TemporaryDirectory() as tmp:
        url = str(Path(tmp) / "bench.db")
        with open_store(url, schema_of(policy)) as store:
            store.append([Event(kind_of(r), r, a, "bench", "bench", layer=layer) for r, a, layer in rows])
        print(f"{len(rows)} facts; seed 003's bundle: 17.5 KB in {SEED_SECONDS:.2f} s")

        def cold() -> object:
            with open_store(url, schema_of(policy)) as s:
                return Projector(policy, s).render("state", NOW)

        t, state = timed(cold, 3)
        print(f"cold state file:        {t * 1000:8.1f} ms  ({len(state.text.encode())} B, "  # type: ignore[attr-defined]
              f"{len(state.lines)} lines)  ratio {t / SEED_SECONDS:.2f}")  # type: ignore[attr-defined]
        store = open_store(url, schema_of(policy))
        gate = Gate(policy, store)
        projector = Projector(policy, gate=gate)
        projector.render("state", NOW)
        t, _ = timed(lambda: projector.render("state", NOW), args.repeat)
        print(f"warm state file:        {t * 1000:8.1f} ms  ratio {t / SEED_SECONDS:.2f}")
        t, bundle = timed(lambda: rehydrate(projector, policy, NOW), args.repeat)
        print(f"warm rehydrate bundle:  {t * 1000:8.1f} ms  ({len(bundle.text.encode())} B, "  # type: ignore[attr-defined]
              f"{len(bundle.log)} log lines)  ratio {t / SEED_SECONDS:.2f}")  # type: ignore[attr-defined]
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


if __name__ == "__main__":
    main()

"""Operations at agent scale: log, replay, fuzz and lint, timed in one run.

A SQLite store gets FACTS facts (grants, claims) and DECISIONS logged
decisions, made by the real gate and appended in batches (a check per
decision would take the benchmark itself too long). Then, in-process through
the CLI:

- `ordinance log` (newest 50), `log --denied --agent A`, `log --after SEQ`:
  filters and paging in SQL;
- `ordinance replay`: every decision re-checked (decisions share a `now` per
  NOW_EVERY of them, as a busy agent's second does);
- `ordinance fuzz` of the README policy (EXAMPLES histories);
- `ordinance lint` of RULES rules naming an unknown relation each ("did you
  mean" over every known name).

    .venv/bin/python benchmarks/bench_ops.py [--facts N] [--decisions N] [--rules N] [--examples N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner

from ordinance.cli import cli
from ordinance.facts import Event, open_store, schema_of
from ordinance.gate import Gate, Request
from ordinance.rules import compile_text

POLICY = '.include "continuity"\n'
START = 1_790_000_000


def build(db: str, facts: int, decisions: int, now_every: int) -> None:
    policy = compile_text(POLICY)
    with open_store(db, schema_of(policy)) as store:
        batch: list[Event] = []
        for i in range(facts // 2):
            batch.append(Event("assert", "grant", (f"agent{i % 500}", f"scope{i}", 1), "bench"))
            batch.append(Event("assert", "claim", (f"c{i}", f"host{i % 900}", "role", f"v{i % 3}"), "bench"))
        store.append(batch)
        gate = Gate(policy, store)
        payloads = []
        for n in range(decisions):
            agent = f"agent{n % 500}"
            scope = f"scope{n % (facts // 2)}" if n % 3 else "nowhere"
            request = Request(f"r{n}", "deploy", scope, agent, 1)
            decision = gate.decide(request, START + n // now_every)
            payloads.append(Event("decision", "decision", (), "gate", agent, payload=decision.payload()))
            if len(payloads) == 5000:
                store.append(payloads)
                payloads = []
        if payloads:
            store.append(payloads)


def timed(name: str, args: list[str], scale: str) -> float:
    t0 = time.perf_counter()
    result = CliRunner().invoke(cli, args + ["--deadline", "0"])
    took = time.perf_counter() - t0
    ok = "ok" if result.exit_code in (0, 1) else f"exit {result.exit_code}: {result.stderr.strip()[:80]}"
    print(f"{name:<34} {took:8.2f} s   {scale}  ({ok})")
    return took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--facts", type=int, default=10_000)
    ap.add_argument("--decisions", type=int, default=100_000)
    ap.add_argument("--now-every", type=int, default=100)
    ap.add_argument("--rules", type=int, default=8_000)
    ap.add_argument("--examples", type=int, default=200)
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "ops.db")
        policy = Path(tmp) / "policy.rules"
        policy.write_text(POLICY)
        t0 = time.perf_counter()
        build(db, opts.facts, opts.decisions, opts.now_every)
        scale = f"{opts.facts} facts, {opts.decisions} decisions"
        print(f"{'building the store':<34} {time.perf_counter() - t0:8.2f} s   {scale}")
        common = ["--db", db]
        timed("log (newest 50)", ["log", *common], scale)
        timed("log --denied --agent agent7", ["log", "--denied", "--agent", "agent7", *common], scale)
        timed(
            "log --after SEQ --limit 100",
            ["log", "--after", str(opts.decisions // 2), "--limit", "100", *common],
            scale,
        )
        timed("log --json --limit 1000", ["log", "--json", "--limit", "1000", *common], scale)
        took = timed("replay", ["replay", *common, "--policy", str(policy)], scale)
        print(f"{'  replay per decision':<34} {took / max(opts.decisions, 1) * 1e3:8.3f} ms")
        fuzzed = Path(tmp) / "fuzzed.rules"
        fuzzed.write_text(POLICY + '.invariant "no push-force" :- request(A, "git-push-force", _, _, _), permit(A).\n')
        timed("fuzz", ["fuzz", str(fuzzed), "--examples", str(opts.examples)], f"{opts.examples} histories")
        lint = Path(tmp) / "big.rules"
        lines = [f".decl e{i}(x: number)\np{i}(X) :- e{i}(X), q{i}_missing(X)." for i in range(opts.rules)]
        lint.write_text("\n".join(lines) + "\n")
        timed("lint (unknown relations)", ["lint", str(lint)], f"{opts.rules} rules")


if __name__ == "__main__":
    main()

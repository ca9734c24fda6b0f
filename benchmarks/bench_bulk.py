"""Bulk evaluation: ordinance's engine, the SQL backend on DuckDB, and DuckDB
running hand-written SQL, on the same four workloads, each in its own process.

    .venv/bin/python benchmarks/bench_bulk.py [--runs 3] [--nodes 1000] [--graph 2000]
                                              [--claims 100000 1000000] [--skip-python]

Workloads: (1) transitive closure of a chain of `--nodes` edges; (2) the
transitive closure of a random graph (`--graph` nodes, twice as many random
edges, seeded: 2000 nodes give about 2.5M tuples); (3, 4) supersession + conflict over each `--claims` count (the
generator of bench_engine.py). Each system is given the facts as Python
tuples and the time covers loading them, evaluation and counting the answer.
Every (system, workload) runs in a fresh child process, `--runs` times, best
time kept; peak memory is the child's peak RSS less its RSS before the facts
were made. Prints times, the ratios SQL-backend / hand-written (target <= 1)
and Python / SQL backend (target >= 5 at 1M claims), and peak memory.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from bench_engine import CLAIMS, TC, claim_facts, tc_facts  # noqa: E402

HAND = {
    "tc": """
        WITH RECURSIVE path(x, y) AS (
            SELECT c0, c1 FROM edge
            UNION SELECT p.x, e.c1 FROM path AS p JOIN edge AS e ON p.y = e.c0)
        SELECT count(*) FROM path""",
    "claims": """
        WITH superseded AS (SELECT DISTINCT c1 AS c FROM supersedes),
        current AS (SELECT * FROM claim WHERE c0 NOT IN (SELECT c FROM superseded))
        SELECT count(*) FROM (SELECT DISTINCT a.c0, b.c0 FROM current AS a JOIN current AS b
            ON a.c1 = b.c1 AND a.c2 = b.c2 AND a.c3 <> b.c3)""",
}


def graph_facts(n: int, seed: int = 1) -> dict[str, list[tuple[Any, ...]]]:
    rng = random.Random(seed)
    edges = {(rng.randrange(n), rng.randrange(n)) for _ in range(2 * n)}  # out-degree 2: a giant component
    return {"edge": sorted(edges)}


def workload(name: str, size: int) -> tuple[str, dict[str, list[tuple[Any, ...]]], str, str]:
    """(rules, facts, answer relation, hand-written query key)."""
    if name == "chain":
        return TC, tc_facts(size), "path", "tc"
    if name == "graph":
        return TC, graph_facts(size), "path", "tc"
    return CLAIMS, claim_facts(size), "conflict", "claims"


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(system: str, name: str, size: int, runs: int) -> None:
    base = rss_mb()
    rules, facts, answer, hand = workload(name, size)
    best, count = float("inf"), 0
    import duckdb
    import numpy as np

    from ordinance.engine import evaluate
    from ordinance.engine.sql import evaluate_sql
    from ordinance.rules import compile_text

    # the program is parsed and checked once, outside the timed region (the same for both engines)
    program = compile_text(rules, extensional={k: len(v[0]) for k, v in facts.items()})
    for _ in range(runs):
        start = time.perf_counter()
        if system == "python":
            count = len(evaluate(program, facts).tuples(answer))
        elif system == "sql":
            with evaluate_sql(program, facts) as model:
                count = model.count(answer)
        else:
            con = duckdb.connect()
            for rel, rows in facts.items():
                cols = list(zip(*rows))
                arrays = {
                    f"c{i}": np.array(c, dtype=np.int64 if isinstance(c[0], int) else object)
                    for i, c in enumerate(cols)
                }
                con.register(f"v_{rel}", arrays)
                con.execute(f"CREATE TABLE {rel} AS SELECT * FROM v_{rel}")
            count = con.execute(HAND[hand]).fetchone()[0]
            con.close()
        best = min(best, time.perf_counter() - start)
    print(json.dumps({"time": best, "count": count, "peak_mb": rss_mb() - base}))


def measure(system: str, name: str, size: int, runs: int) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", system, name, str(size), "--runs", str(runs)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--graph", type=int, default=2000)
    ap.add_argument("--claims", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--skip-python", action="store_true")
    ap.add_argument("--child", nargs=3, metavar=("SYSTEM", "WORKLOAD", "SIZE"))
    args = ap.parse_args()
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]), args.runs)
        return
    cases = [("chain", args.nodes), ("graph", args.graph)] + [("claims", n) for n in args.claims]
    systems = ["sql", "duckdb"] + ([] if args.skip_python else ["python"])
    print(
        "| workload | derived | ordinance | SQL backend | DuckDB hand-written | SQL/hand | ordinance/SQL"
        " | peak MB (ord / SQL / hand) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, size in cases:
        got = {s: measure(s, name, size, args.runs) for s in systems}
        counts = {r["count"] for r in got.values()}
        if len(counts) != 1:
            raise SystemExit(f"{name} {size}: the systems disagree: {got}")
        sql, hand = got["sql"], got["duckdb"]
        py = got.get("python")
        print(
            f"| {name} {size} | {counts.pop()} | {py['time']:.3f} s | {sql['time']:.3f} s | {hand['time']:.3f} s"
            if py
            else f"| {name} {size} | {counts.pop()} | – | {sql['time']:.3f} s | {hand['time']:.3f} s",
            end="",
        )
        ratio = f" | {sql['time'] / hand['time']:.2f} | "
        ratio += f"{py['time'] / sql['time']:.2f}" if py else "–"
        mem = f"{py['peak_mb']:.0f} / " if py else "– / "
        print(f"{ratio} | {mem}{sql['peak_mb']:.0f} / {hand['peak_mb']:.0f} |")


if __name__ == "__main__":
    main()

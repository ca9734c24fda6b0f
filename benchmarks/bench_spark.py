"""One small workload on the Spark SQL dialect (pyspark, local mode) beside
the Python engine and DuckDB: the same compiled program, timed.

    .venv/bin/python benchmarks/bench_spark.py            # a 20-chain's closure
    .venv/bin/python benchmarks/bench_spark.py --chain 40 --runs 2
    .venv/bin/python benchmarks/bench_spark.py --stock   # Spark's own settings

`--stock` starts the session with Spark's defaults but the ones the answers
need (local[1], one shuffle partition, ANSI mode) instead of
`spark_session()`'s tuning (no adaptive execution, one partition per table
whatever its estimate, a C1-only JIT with serial GC), to measure what the
tuning buys; run both, one after the other, on the same load.

The program is checked outside the timed region; a run covers handing the
facts over, every round, and counting the answer. Spark's first run is
reported apart (it starts the JVM's session and warms it); the others are
best of `--runs`. docs/sql.md ("Spark") quotes its output.
"""

from __future__ import annotations

import argparse
import time

from ordinance.engine import evaluate
from ordinance.engine.sql import evaluate_sql
from ordinance.engine.sql import spark_session
from ordinance.rules import compile_text

PROGRAM = """
.decl edge(a: number, b: number)
.decl blocked(a: number)
path(X, Y) :- edge(X, Y), !blocked(Y).
path(X, Z) :- path(X, Y), edge(Y, Z), !blocked(Z).
node(X) :- edge(X, _).
node(Y) :- edge(_, Y).
unreach(X, Y) :- node(X), node(Y), !path(X, Y).
fanout(X, N) :- node(X), N = count : { path(X, _) }.
"""


def stock() -> object:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master("local[1]").appName("ordinance-stock")
    for key, value in [
        ("spark.ui.enabled", "false"),
        ("spark.sql.shuffle.partitions", "1"),
        ("spark.sql.ansi.enabled", "true"),
        ("spark.ui.showConsoleProgress", "false"),
    ]:
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("FATAL")
    return session


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chain", type=int, default=20, help="nodes in the chain")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--stock", action="store_true", help="Spark's default settings, not spark_session()'s")
    args = ap.parse_args()
    program = compile_text(PROGRAM)
    db = {"edge": [(i, i + 1) for i in range(args.chain)], "blocked": [(args.chain + 5,)]}
    want = evaluate(program, db).tuples("path")

    def python() -> int:
        return len(evaluate(program, db).tuples("path"))

    def on(engine: str, **options: object) -> int:
        with evaluate_sql(program, db, engine=engine, **options) as model:
            return model.count("path")

    start = time.perf_counter()
    session = stock() if args.stock else spark_session()
    started = time.perf_counter() - start
    start = time.perf_counter()
    first = on("spark", session=session)
    cold = time.perf_counter() - start
    assert first == len(want)
    rows = [("python", python), ("duckdb", lambda: on("duckdb")), ("spark", lambda: on("spark", session=session))]
    print(f"transitive closure + negation + count, {args.chain}-chain: {len(want)} path tuples")
    print(f"{'stock' if args.stock else 'spark_session()'} settings")
    print(f"spark session start {started:.2f} s; first spark run {cold:.2f} s")
    print("| engine | best of %d |" % args.runs)
    print("|---|---|")
    for name, fn in rows:
        best = float("inf")
        for _ in range(args.runs):
            start = time.perf_counter()
            assert fn() == len(want), name
            best = min(best, time.perf_counter() - start)
        print(f"| {name} | {best:.3f} s |")


if __name__ == "__main__":
    main()

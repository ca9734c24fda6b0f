"""Engine vs clingo vs pyDatalog on the same programs, in one process.

    .venv/bin/python benchmarks/bench_engine.py [--runs 3] [--claims 100000] [--nodes 1000]
                                                [--skip-pydatalog]

(1) transitive closure of a chain of `--nodes` edges (1000 edges: 500,500
tuples); (2) `--claims` claims, every tenth superseded, `current` = claim and
not superseded, `conflict` = two current claims with the same subject and
attribute and different values. Each system gets the facts as its own input
(Python tuples for the engine, program text for clingo, `+ fact` assertions for
pyDatalog) and the time covers loading them, evaluation and reading the answer.
Prints the best of `--runs` times per system and the ratios engine/clingo and
pyDatalog/engine (targets: <= 1 and >= 30). pyDatalog runs once: it is slow.
"""

from __future__ import annotations

import argparse
import re
import time
from typing import Any, Callable

TC = """
path(X, Y) :- edge(X, Y).
path(X, Z) :- path(X, Y), edge(Y, Z).
"""

CLAIMS = """
superseded(C) :- supersedes(_, C).
current(C, S, A, V) :- claim(C, S, A, V), !superseded(C).
conflict(C1, C2) :- current(C1, S, A, V1), current(C2, S, A, V2), V1 != V2.
"""


def tc_facts(n: int) -> dict[str, list[tuple[Any, ...]]]:
    return {"edge": [(i, i + 1) for i in range(n)]}


def claim_facts(n: int) -> dict[str, list[tuple[Any, ...]]]:
    # 4 claims per subject, 3 attributes, 7 values: about 40% of pairs conflict
    claims = [(f"c{i}", f"s{i // 4}", f"a{i % 3}", f"v{i % 7}") for i in range(n)]
    supersedes = [(f"n{i}", f"c{i}") for i in range(0, n, 10)]
    return {"claim": claims, "supersedes": supersedes}


def best(fn: Callable[[], int], runs: int) -> tuple[float, int]:
    times, size = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        size = fn()
        times.append(time.perf_counter() - start)
    return min(times), size


def run_engine(rules: str, facts: dict[str, list[tuple[Any, ...]]], answer: str) -> int:
    from ordinance.engine import evaluate
    from ordinance.rules import compile_text

    program = compile_text(rules, extensional={k: len(v[0]) for k, v in facts.items()})
    return len(evaluate(program, facts).tuples(answer))


def _clingo_value(v: Any) -> str:
    return str(v) if isinstance(v, int) else f'"{v}"'


def run_clingo(rules: str, facts: dict[str, list[tuple[Any, ...]]], answer: str, arity: int) -> int:
    import clingo

    lines = [f"{rel}({','.join(map(_clingo_value, t))})." for rel, rows in facts.items() for t in rows]
    program = re.sub(r"!(?!=)", "not ", rules) + "\n".join(lines) + f"\n#show {answer}/{arity}.\n"
    ctl = clingo.Control(["--warn=none"])
    ctl.add("base", [], program)
    ctl.ground([("base", [])])
    size = 0
    with ctl.solve(yield_=True) as handle:  # type: ignore[union-attr]
        for model in handle:
            size = len(model.symbols(shown=True))
    return size


PYDATALOG = {
    "tc": "path(X, Y) <= edge(X, Y)\npath(X, Z) <= path(X, Y) & edge(Y, Z)",
    "claims": "superseded(C) <= supersedes(N, C)\n"
    "current(C, S, A, V) <= claim(C, S, A, V) & ~superseded(C)\n"
    "conflict(C1, C2) <= current(C1, S, A, V1) & current(C2, S, A, V2) & (V1 != V2)",
}


def run_pydatalog(case: str, facts: dict[str, list[tuple[Any, ...]]], answer: str) -> int:
    from pyDatalog import pyDatalog

    pyDatalog.clear()
    for rel, rows in facts.items():
        for t in rows:
            pyDatalog.assert_fact(rel, *t)
    pyDatalog.load(PYDATALOG[case])
    result = pyDatalog.ask(f"{answer}(X1, X2)")
    return len(result.answers) if result else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--claims", type=int, default=100_000)
    ap.add_argument("--skip-pydatalog", action="store_true")
    args = ap.parse_args()

    cases = [
        ("tc", f"transitive closure, chain of {args.nodes} edges", TC, tc_facts(args.nodes), "path", 2),
        ("claims", f"{args.claims} claims, conflict join", CLAIMS, claim_facts(args.claims), "conflict", 2),
    ]
    for case, title, rules, facts, answer, arity in cases:
        engine, n1 = best(lambda: run_engine(rules, facts, answer), args.runs)
        clingo_t, n2 = best(lambda: run_clingo(rules, facts, answer, arity), args.runs)
        if n1 != n2:
            raise SystemExit(f"{case}: engine found {n1} tuples, clingo {n2}")
        print(f"{title}: {n1} `{answer}` tuples")
        print(f"  engine     {engine:8.3f} s")
        print(f"  clingo     {clingo_t:8.3f} s   engine/clingo    = {engine / clingo_t:6.2f}  (target <= 1)")
        if not args.skip_pydatalog:
            pyd, n3 = best(lambda: run_pydatalog(case, facts, answer), 1)
            if n3 != n1:
                raise SystemExit(f"{case}: engine found {n1} tuples, pyDatalog {n3}")
            print(f"  pyDatalog  {pyd:8.3f} s   pyDatalog/engine = {pyd / engine:6.1f}  (target >= 30)")


if __name__ == "__main__":
    main()

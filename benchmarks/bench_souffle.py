"""Soufflé's own test programs, run as a user runs them: `ordinance run`.

    .venv/bin/python benchmarks/bench_souffle.py --suite SOUFFLE/tests [CASE ...]

`--suite` is the `tests/` directory of a Soufflé checkout (its programs are
not copied here). A CASE is a directory under it (default: the three that
took over 60 s before, `example/tak`, `evaluation/magic_samegen`,
`example/inline_nats`); each runs in a fresh process with its own `facts/`
and no deadline, its `.output` files are compared with the case's expected
`.csv` files as Soufflé's harness compares them (rows sorted), and the
child's CPU time (user + system) and wall time are printed, with the
machine's load average: figures from a loaded machine say so.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES = ("example/tak", "evaluation/magic_samegen", "example/inline_nats")


def rows(path: Path) -> list[str]:
    """A file's lines, trailing blanks cut, sorted: Soufflé's harness
    compares outputs so (its order of symbols is not part of the answer)."""
    return sorted(line.rstrip() for line in path.read_text().splitlines())


def run_case(suite: Path, case: str, timeout: float) -> tuple[str, float, float]:
    """(verdict, cpu seconds, wall seconds) of one case; a multi-test (a
    directory per set of facts and answers, as `lucas/fibonacci`) runs each."""
    where = suite / case
    program = where / f"{where.name}.dl"
    sets = [d for d in sorted(where.iterdir()) if d.is_dir() and d.name != "facts" and any(d.glob("*.csv"))]
    if any(where.glob("*.csv")) or (where / "facts").is_dir() or not sets:
        facts = where / "facts"
        return run_one(program, facts if facts.is_dir() else where, where, timeout)
    verdicts, cpu, wall = [], 0.0, 0.0
    for d in sets:
        verdict, c, w = run_one(program, d, d, timeout)
        verdicts.append(f"{d.name}: {verdict}")
        cpu, wall = cpu + c, wall + w
    return "; ".join(verdicts), cpu, wall


def run_one(program: Path, facts: Path, expected: Path, timeout: float) -> tuple[str, float, float]:
    with tempfile.TemporaryDirectory() as out:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        cmd = [str(Path(sys.executable).parent / "ordinance"), "run", str(program), "-F", str(facts)]
        try:
            done = subprocess.run([*cmd, "-D", out, "--deadline", "0"], capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return f"timeout after {timeout:.0f} s", float("nan"), timeout
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        if done.returncode != 0:
            return f"failed: {done.stderr.strip().splitlines()[-1:]}", cpu, wall
        wrong = [
            csv.name
            for csv in sorted(expected.glob("*.csv"))
            if not (Path(out) / csv.name).exists() or rows(Path(out) / csv.name) != rows(csv)
        ]
        return ("wrong: " + ", ".join(wrong)) if wrong else "same answers", cpu, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", required=True, type=Path, help="the tests/ directory of a Soufflé checkout")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per case")
    parser.add_argument("cases", nargs="*", default=list(CASES))
    args = parser.parse_args()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} cores")
    print("| case | answers | CPU s | wall s |\n|---|---|---|---|")
    for case in args.cases:
        verdict, cpu, wall = run_case(args.suite, case, args.timeout)
        print(f"| {case} | {verdict} | {cpu:.2f} | {wall:.2f} |", flush=True)


if __name__ == "__main__":
    main()

"""Load a revision of 100,000 claims into the engine's input form, per backend.

Each claim is three facts (claim, claim_source, claim_valid): 300,000 facts.
Prints facts/second for `store.facts()` (folding the events into dict[relation,
set[tuple]]) on SQLite and on PostgreSQL (ORDINANCE_TEST_PG_URL, or a
throw-away cluster started for the run), best of 3, against the target of
100,000 facts/s.

    .venv/bin/python benchmarks/bench_store.py [--claims N]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import psycopg  # noqa: E402
from pgserver import PgServer  # noqa: E402

from ordinance.facts import Event, Store, open_store  # noqa: E402
from ordinance.values import FOREVER  # noqa: E402

TARGET = 100_000
SCHEMA = {
    "claim": ("symbol", "symbol", "symbol", "symbol"),
    "claim_source": ("symbol", "symbol", "symbol"),
    "claim_valid": ("symbol", "time", "time"),
}
KINDS = ("observed", "reported", "hearsay", "inferred", "speculation")


def claims(n: int) -> list[Event]:
    events = []
    for i in range(n):
        c = f"c{i}"
        events.append(Event("assert", "claim", (c, f"host{i % 5000}", "role", f"v{i % 3}"), "bench"))
        events.append(Event("assert", "claim_source", (c, f"agent{i % 50}", KINDS[i % 5]), "bench"))
        events.append(Event("assert", "claim_valid", (c, 1_780_000_000 + i, FOREVER), "bench"))
    return events


def measure(name: str, store: Store, events: list[Event]) -> None:
    t0 = time.perf_counter()
    store.append(events)
    load = time.perf_counter() - t0
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        facts = store.facts()
        best = min(best, time.perf_counter() - t0)
    count = sum(len(v) for v in facts.values())
    assert count == len(events), (count, len(events))
    rate = count / best
    print(
        f"{name:<10} append {len(events) / load:>10,.0f} events/s   "
        f"facts() {rate:>10,.0f} facts/s  ({count:,} facts in {best * 1000:.0f} ms, "
        f"{rate / TARGET:.1f}x target)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--claims", type=int, default=100_000)
    args = parser.parse_args()
    events = claims(args.claims)
    with tempfile.TemporaryDirectory() as tmp, open_store(os.path.join(tmp, "bench.db"), SCHEMA) as s:
        measure("sqlite", s, events)

    server = None
    url = os.environ.get("ORDINANCE_TEST_PG_URL")
    if not url:
        server = PgServer()
        url = server.start()
    name = "bench_" + uuid.uuid4().hex[:8]
    try:
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")
        db_url = urlunsplit(urlsplit(url)._replace(path="/" + name))
        with open_store(db_url, SCHEMA) as s:
            measure("postgresql", s, events)
    finally:
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        if server:
            server.stop()


if __name__ == "__main__":
    main()

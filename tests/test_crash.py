"""Crash safety: SIGKILL a writer mid-batch; the log stays readable, every
acknowledged batch is there and no batch is there in part."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import defaultdict

from ordinance.facts import Event, open_store

BATCH = 3000
ROUNDS = 3

WRITER = """
import sys
from ordinance.facts import Event, open_store
url, batch, first = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
make = lambda b: [Event("assert", "w", (b, i)) for i in range(batch)]
with open_store(url, {"w": ("number", "number"), "write": ("number", "number")}) as store:
    b, ready = first, make(first)
    while True:
        store.append(ready)
        ready = make(b + 1)
        print(b, flush=True)  # acknowledged: committed
        b += 1
"""


def crash_writer(url: str, first: int, acks_before_kill: int) -> set[int]:
    """Run a writer from batch `first` and SIGKILL it half a batch after an
    ack (most of a batch's time is its write transaction); return the acked
    batches."""
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, url, str(BATCH), str(first)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    acked = set()
    times = []
    for _ in range(acks_before_kill):
        line = proc.stdout.readline()
        times.append(time.monotonic())
        assert line.endswith("\n"), "the writer died before acknowledging"
        acked.add(int(line))
    time.sleep((times[-1] - times[-2]) / 2)  # where to kill; nothing is asserted on time
    os.kill(proc.pid, signal.SIGKILL)
    rest = proc.stdout.read()
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    acked |= {int(x) for x in rest.splitlines()}
    return acked


def test_sigkill_mid_batch_loses_nothing_acknowledged(store_url: str) -> None:
    with open_store(store_url, {"w": ("number", "number"), "write": ("number", "number")}) as store:
        store.append([Event("assert", "w", (-1, 0))])
    acked: set[int] = set()
    committed: set[int] = set()  # batches an earlier round found (one may be committed, never acked)
    first = 0
    for round_ in range(ROUNDS):
        acked |= crash_writer(store_url, first, acks_before_kill=2 + round_)
        with open_store(store_url, {"w": ("number", "number"), "write": ("number", "number")}) as store:
            events = store.events()
            assert [e.seq for e in events] == list(range(1, len(events) + 1))
            batches: dict[int, list[int]] = defaultdict(list)
            for e in events[1:]:
                batches[int(e.args[0])].append(int(e.args[1]))
            assert acked <= set(batches)  # every acknowledged batch is there
            for b, items in batches.items():  # and no batch is there in part
                assert items == list(range(BATCH)), f"batch {b} is partial"
            # beyond the acked ones, at most the batch the kill cut off after its commit
            assert set(batches) <= acked | committed | {max(acked) + 1}
            committed = set(batches)
            assert len(store.facts()["w"]) == len(events)
            first = max(batches) + 1
    if not store_url.startswith("postgresql"):
        with sqlite3.connect(store_url) as db:
            assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    with open_store(
        store_url, {"w": ("number", "number"), "write": ("number", "number")}
    ) as store:  # and the store still takes writes
        revision = store.revision()
        assert store.append([Event("assert", "w", (first, 0))]) == revision + 1

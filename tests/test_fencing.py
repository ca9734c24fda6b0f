"""Fencing under a race: several OS processes, each holding its own epoch,
write to one resource at once, on both backends."""

from __future__ import annotations

import multiprocessing
import random
import re
import time
from collections import Counter
from typing import Any

import pytest

from ordinance.diagnostics import StaleEpochError
from ordinance.facts import Event, open_store

WRITERS = 6
ATTEMPTS = 8
RESOURCE = "deploy/db"
STALE = re.compile(r"epoch (\d+) for `deploy/db` is older than the newest epoch (\d+) \(revision (\d+)\)")


def racer(url: str, epoch: int, barrier: Any, out: Any) -> None:
    """One writer: wait for the others, then append ATTEMPTS single-event batches."""
    results: list[tuple[str, int, str]] = []
    pause = random.Random(epoch)
    with open_store(url, {"w": ("number", "number"), "write": ("number", "number")}) as store:
        barrier.wait()
        for attempt in range(ATTEMPTS):
            time.sleep(pause.random() / 500)  # let the writers interleave
            try:
                revision = store.append([Event("assert", "write", (epoch, attempt))], fence=(RESOURCE, epoch))
                results.append(("ok", attempt, str(revision)))
            except StaleEpochError as err:
                results.append(("stale", attempt, err.diagnostics[0].message))
    out.put((epoch, results))


def run_race(url: str, epochs: list[int]) -> dict[int, list[tuple[str, int, str]]]:
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(len(epochs))
    out = ctx.Queue()
    procs = [ctx.Process(target=racer, args=(url, e, barrier, out)) for e in epochs]
    for p in procs:
        p.start()
    results = dict(out.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    return results


@pytest.mark.parametrize("seed", [1, 2])
def test_racing_writers_are_fenced_by_epoch(store_url: str, seed: int) -> None:
    with open_store(
        store_url, {"w": ("number", "number"), "write": ("number", "number")}
    ) as store:  # create the schema before the race
        store.fence(RESOURCE, 1)
    epochs = list(range(1, WRITERS + 1))
    random.Random(seed).shuffle(epochs)
    results = run_race(store_url, epochs)

    with open_store(store_url, {"w": ("number", "number"), "write": ("number", "number")}) as store:
        events = store.events()
        # no lost or duplicated event: seqs are gapless, each accepted write is there once
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        accepted: dict[tuple[object, ...], int] = {
            (epoch, a): int(r) for epoch, rs in results.items() for ok, a, r in rs if ok == "ok"
        }
        assert Counter(e.args for e in events) == Counter(accepted.keys())
        assert all(accepted[e.args] == e.seq for e in events)  # reported revision is its seq
        # accepted writes carry monotonic epochs, and the fence recorded on each
        assert all(e.epoch == e.args[0] and e.resource == RESOURCE for e in events)
        epochs = [int(e.args[0]) for e in events]
        assert epochs == sorted(epochs)
        # every refused writer was stale at its time: a newer epoch had been accepted
        by_seq = {e.seq: e for e in events}
        refused = 0
        for epoch, rs in results.items():
            states = [ok for ok, _, _ in rs]
            assert states == sorted(states)  # "ok"* then "stale"*: once stale, stale forever
            for ok, _, message in rs:
                if ok == "stale":
                    refused += 1
                    m = STALE.fullmatch(message)
                    assert m, message
                    mine, newest, revision = map(int, m.groups())
                    assert mine == epoch < newest
                    assert any(by_seq[s].epoch == newest for s in range(1, revision + 1))
        assert refused + len(events) == WRITERS * ATTEMPTS
        # the highest epoch is never stale
        assert all(ok == "ok" for ok, _, _ in results[WRITERS])
        with pytest.raises(StaleEpochError):
            store.fence(RESOURCE, WRITERS - 1)
        assert store.fence(RESOURCE, WRITERS) == len(events)

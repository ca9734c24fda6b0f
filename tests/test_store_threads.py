"""A store object shared across threads: every acknowledged write is kept."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

from ordinance.diagnostics import StoreError
from ordinance.facts import Event, open_store

SCHEMA = {"w": ("number", "number")}
THREADS, WRITES = 8, 25


def test_a_shared_store_keeps_every_acknowledged_write(store_url: str) -> None:
    acked: list[tuple[int, int]] = []
    errors: list[BaseException] = []
    with open_store(store_url, SCHEMA) as store:
        start = threading.Barrier(THREADS)

        def writer(t: int) -> None:
            start.wait()
            for i in range(WRITES):
                try:
                    store.append([Event("assert", "w", (t, i))])
                    acked.append((t, i))
                except StoreError as err:  # refusing is allowed; losing is not
                    errors.append(err)

        threads = [threading.Thread(target=writer, args=(t,)) for t in range(THREADS)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        kept = store.facts().get("w", set())
        seqs = [e.seq for e in store.events()]
    assert errors == []
    assert set(acked) == kept and len(kept) == THREADS * WRITES
    assert seqs == list(range(1, THREADS * WRITES + 1))


def test_a_new_sqlite_store_is_private_to_its_owner(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    old = os.umask(0o022)
    try:
        with open_store(str(path), SCHEMA) as store:
            store.assert_facts([("w", (1, 2))])
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for side in ("-wal", "-shm"):
        p = Path(str(path) + side)
        if p.exists():
            assert stat.S_IMODE(p.stat().st_mode) & 0o077 == 0


def test_opening_without_create_refuses_a_missing_store(tmp_path: Path) -> None:
    path = tmp_path / "missing.db"
    try:
        open_store(str(path), create=False)
    except StoreError as err:
        assert err.code == "no_store" and str(path) in str(err)
    else:
        raise AssertionError("a missing store was created")
    assert not path.exists()

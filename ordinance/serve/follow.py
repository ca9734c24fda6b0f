"""Following the store between decisions.

Every decision already reads the store's revision first (one indexed read,
on SQLite and PostgreSQL alike), so a write by any process or host counts
on the very next decision. On PostgreSQL, `follow` also LISTENs: a trigger
NOTIFYs channel `ordinance_log` on every insert into the log, and a
listener thread extends the warm model as soon as it hears, so the next
decision finds the model ready instead of reading the new events itself.

`keep_snapshot` writes the gate's snapshot (gate/snapshot.py) when it is
due, from a thread of its own, in a quiet moment (a second in which nothing
was decided or written: writing holds the service's lock for about half a
second at 100k facts), and once more on the way out, so the next `ordinance
check`, `state` or `serve` starts warm.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from .service import Service

__all__ = ["follow", "keep_snapshot", "CHANNEL", "TRIGGER_SQL", "SNAPSHOT_POLL"]

CHANNEL = "ordinance_log"
SNAPSHOT_POLL = 1.0  # seconds between looks at whether the gate's snapshot is due
TRIGGER_SQL = f"""
CREATE OR REPLACE FUNCTION ordinance_notify() RETURNS trigger AS $$
BEGIN PERFORM pg_notify('{CHANNEL}', ''); RETURN NULL; END $$ LANGUAGE plpgsql;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'ordinance_notify') THEN
    CREATE TRIGGER ordinance_notify AFTER INSERT ON events
      FOR EACH STATEMENT EXECUTE FUNCTION ordinance_notify();
  END IF;
END $$;
"""


def follow(service: Service, url: str) -> Callable[[], None]:
    """Start following `url` for `service`; return a function that stops."""
    if not url.startswith(("postgresql://", "postgres://")):
        return lambda: None
    import psycopg

    done = threading.Event()
    conn = psycopg.connect(url, autocommit=True)
    try:
        conn.execute(TRIGGER_SQL)
        conn.execute(f"LISTEN {CHANNEL}")
    except psycopg.Error as exc:  # no right to create the trigger: decisions still read the revision
        conn.close()
        import sys

        print(f"ordinance serve: not listening for the log's NOTIFY ({str(exc).splitlines()[0]})", file=sys.stderr)
        return lambda: None

    def listen() -> None:
        while not done.is_set():
            try:
                heard = any(True for _ in conn.notifies(timeout=0.5, stop_after=1))
            except Exception:  # the connection went away: decisions still read the revision
                return
            if heard and not done.is_set():
                with service.lock:
                    service.gate.warm.revision()

    thread = threading.Thread(target=listen, name="ordinance-follow", daemon=True)
    thread.start()

    def stop() -> None:
        done.set()
        thread.join(timeout=2)
        conn.close()

    return stop


def keep_snapshot(service: Service, every: float = SNAPSHOT_POLL) -> Callable[[], None]:
    """Write `service.gate`'s snapshot when `snapshot_due` says it would
    spare the next process more than it costs and the store's revision has
    not moved for `every` seconds (under the service's lock: the model must
    not change while it is written); return a function that stops, writing
    it a last time if due."""
    done = threading.Event()

    def save() -> None:
        if service.gate.warm.snapshot_due:
            with service.lock:
                service.gate.warm.save_if_due()  # (a cache: serving goes on without it)

    def keep() -> None:
        seen = None  # the revision when the snapshot was last found due
        while not done.wait(every):
            if not service.gate.warm.snapshot_due:
                seen = None
                continue
            try:
                revision = service.store.revision()
            except Exception:  # the store is unreachable: decisions will say so
                continue
            if revision == seen:  # a quiet moment
                save()
            seen = revision

    thread = threading.Thread(target=keep, name="ordinance-snapshot", daemon=True)
    thread.start()

    def stop() -> None:
        done.set()
        thread.join(timeout=every + 2)
        save()

    return stop

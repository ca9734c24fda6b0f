"""`open_store(url)`: the backend a store URL names.

`store.py` holds what every backend shares; this module alone knows the
backends, so the shared code never imports them.
"""

from __future__ import annotations

from .schema import Schema
from .store import Store, _error

__all__ = ["open_store"]


def open_store(url: str, schema: Schema | None = None) -> Store:
    """Open (creating if needed) the store at `url`.

    `postgresql://...` (or `postgres://...`) selects PostgreSQL; `sqlite://`
    followed by a path (`sqlite:///var/ordinance.db` is `/var/ordinance.db`),
    or a bare path such as `./ordinance.db`, selects SQLite.
    """
    if url.startswith(("postgresql://", "postgres://")):
        from .postgres import PostgresStore  # psycopg only for postgresql:// urls

        return PostgresStore(url, schema)
    if url.startswith("sqlite://"):
        url = url[len("sqlite://"):]
    elif "://" in url:
        raise _error("unknown_backend", f"no store backend for `{url.split('://')[0]}://` urls")
    if not url:
        raise _error("unknown_backend", "a sqlite store needs a file path")
    from .sqlite import SqliteStore

    return SqliteStore(url, schema)

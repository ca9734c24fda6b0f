"""`open_store(url)`: the backend a store URL names.

`store.py` holds what every backend shares; this module alone knows the
backends, so the shared code never imports them.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from .store import Store, _error

__all__ = ["open_store"]


def open_store(url: str, schema: Mapping[str, Sequence[str]] | None = None, *, create: bool = True) -> Store:
    """Open the store at `url`; with `create=False` a store that does not
    exist yet is refused (`no_store`) instead of created.

    `postgresql://...` (or `postgres://...`) selects PostgreSQL (the
    `postgres` extra: `pip install 'ordinance[postgres]'`); `sqlite://`
    followed by a path (`sqlite:///var/ordinance.db` is `/var/ordinance.db`),
    or a bare path such as `./ordinance.db`, selects SQLite. A new SQLite
    file is created 0600. `schema` (see `schema_of`) is what writes are
    validated against; without one the store takes log events only.
    """
    if not isinstance(url, str):
        raise _error("unknown_backend", "a store url is a string")
    if url.startswith(("postgresql://", "postgres://")):
        try:
            from .postgres import PostgresStore  # psycopg only for postgresql:// urls
        except ImportError as err:
            if (err.name or "").split(".")[0] != "psycopg":
                raise
            raise _error(
                "missing_extra",
                "a postgresql:// store needs the PostgreSQL driver: pip install 'ordinance[postgres]'",
            ) from None
        return PostgresStore(url, schema, create=create)
    if url.startswith("sqlite://"):
        url = url[len("sqlite://") :]
    elif "://" in url:
        raise _error("unknown_backend", f"no store backend for `{url.split('://')[0]}://` urls")
    if not url:
        raise _error("unknown_backend", "a sqlite store needs a file path")
    from .sqlite import SqliteStore

    return SqliteStore(url, schema, create=create)

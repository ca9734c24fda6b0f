"""Snapshots of the gate's warm model, so a fresh process starts warm.

Building the warm model is most of what a fresh `ordinance check` costs
(seconds at 100k facts). A snapshot is that model written to a sealed file
(see `ordinance.sealed`: an HMAC under a key only its owner can read, so a
file anyone else wrote is never unmarshalled) after a gate built it, and
read back by the next gate over the same store and policy.

Where it lives: beside a SQLite store, `<db file>.snapshot` (one per store:
the model of the last policy saved); for PostgreSQL, in the cache
directory, `snapshots/<digest of the URL without its password>.snapshot`
(each host keeps its own). A `:memory:` store has none.

When it is used: its header must match
- the snapshot format, the Python version (marshal's format) and the source
  of ordinance's engine and rule language (a digest of the files),
- the policy hash (`CheckedProgram.source_hash`),
- the log: its revision R is at most the store's, and the store's digest
  of its fact and purge events up to R (`Store.fact_digest`: a sha256 chain
  the store records with each batch that changes the facts, read in one
  lookup) is the one recorded when it was written (another store, or one
  rebuilt or re-imported, does not match).
Anything else (missing, foreign, tampered, truncated, stale, unreadable) is
ignored, and the gate evaluates the store as it would without one. A store
that moved past R extends the loaded model with the events after R, as the
gate extends a warm model (new facts in place, purges retracted); a `now`
the model's horizon does not reach moves it (engine/clock.py). Decisions and
proofs are those of a fresh evaluation.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .. import sealed
from ..engine import Limits, Model, Prepared
from ..engine.snapshot import FORMAT as MODEL_FORMAT
from ..engine.snapshot import dump_model, load_model
from ..facts import Store

__all__ = ["FORMAT", "snapshot_path", "read_snapshot", "write_snapshot"]

FORMAT = 2  # 2: the log digest is the store's recorded digest (Store.fact_digest)
_CODE: dict[str, str] = {}


def _code() -> str:
    """The digest of the code a snapshot's meaning depends on (computed once)."""
    if not _CODE:
        _CODE["digest"] = sealed.source_digest("engine", "rules")
    return _CODE["digest"]


def _identity(policy_hash: str) -> dict[str, Any]:
    return {
        "format": [FORMAT, MODEL_FORMAT, marshal.version],
        "python": list(sys.version_info[:2]),
        "code": _code(),
        "policy": policy_hash,
    }


def snapshot_path(store: Store) -> Path | None:
    """Where the snapshot of `store` lives (see the module docstring)."""
    url = getattr(store, "url", "")
    if not isinstance(url, str) or not url or url == ":memory:":
        return None
    if url.startswith(("postgresql://", "postgres://")):
        root = sealed.cache_dir()
        if root is None:
            return None
        parts = urlsplit(url)
        host = parts.netloc.rpartition("@")[2]
        user = parts.username or ""
        bare = urlunsplit(parts._replace(netloc=f"{user}@{host}" if user else host))
        return root / "snapshots" / (hashlib.sha256(bare.encode("utf-8")).hexdigest()[:32] + ".snapshot")
    return Path(url + ".snapshot")


def read_snapshot(
    path: Path, store: Store, prepared: Prepared, policy_hash: str, revision: int, limits: Limits | None
) -> tuple[Model, int] | None:
    """(the model, the revision R it reflects) from the snapshot at `path`
    if it matches the store at R <= `revision` and the policy; else None."""
    found = sealed.unseal(path)
    if found is None:
        return None
    header, payload = found
    at = header.get("revision")
    if any(header.get(k) != v for k, v in _identity(policy_hash).items()):
        return None
    if not isinstance(at, int) or not 0 <= at <= revision or header.get("log") != store.fact_digest(at):
        return None
    try:
        return load_model(prepared, payload, limits), at
    except ValueError:
        return None


def write_snapshot(path: Path, store: Store, model: Model, policy_hash: str, revision: int) -> bool:
    """Write `model` (the store's model at `revision`) to `path`; False if it
    cannot be written (no key, an unwritable place, values marshal cannot hold)."""
    try:
        payload = dump_model(model)
    except ValueError:
        return False
    header = dict(_identity(policy_hash), revision=revision, log=store.fact_digest(revision), now=model.now)
    if not sealed.seal(path, header, payload):
        return False
    try:
        os.chmod(path, 0o600)
    except OSError:
        pass
    return True

"""Sealed files: what ordinance caches on disk, authenticated before it is read.

Two caches speed up a fresh process: the checked policy (rules/cache.py)
and a snapshot of the gate's warm model (gate/snapshot.py). Both are
`marshal` data, which is fast to read but must never be read from a file
someone else wrote (the marshal module is not safe against malicious data).
So each file is sealed with an HMAC-SHA256 under a key only its owner can
read: `<cache dir>/key`, 32 random bytes, created 0600 in a 0700 directory
on first use. A file whose seal does not verify (another user's, tampered
with, truncated, corrupted) is ignored as if it were not there, before a
byte of it is unmarshalled; a key file that others can read, or that
belongs to another user, disables the caches rather than being trusted.

The cache directory is `$ORDINANCE_CACHE`, else `$XDG_CACHE_HOME/ordinance`,
else `~/.cache/ordinance`; `ORDINANCE_CACHE=off` turns both caches off.

Layout: a magic line, the header's length (8 bytes, big-endian), the header
(JSON: what the file is for, checked by its reader), the seal (32 bytes),
the payload. The seal covers the header and the payload. Writes go to a
temporary file renamed into place, so a reader sees a whole file or none.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["CACHE_ENV", "cache_dir", "seal", "unseal", "source_digest"]

CACHE_ENV = "ORDINANCE_CACHE"
_MAGIC = b"ordinance sealed v1\n"
_KEY_BYTES = 32


def cache_dir() -> Path | None:
    """Where caches live; None when turned off (`ORDINANCE_CACHE=off`)."""
    named = os.environ.get(CACHE_ENV)
    if named is not None:
        return None if named.strip().lower() in ("", "off", "0", "no", "false") else Path(named)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ordinance"


def _private(st: os.stat_result) -> bool:
    owner = not hasattr(os, "getuid") or st.st_uid == os.getuid()
    return owner and not st.st_mode & (stat.S_IRWXG | stat.S_IRWXO)


def _key() -> bytes | None:
    """The owner's sealing key, made on first use; None if it cannot be made
    or is not private to this user."""
    root = cache_dir()
    if root is None:
        return None
    path = root / "key"
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "wb") as f:
                f.write(os.urandom(_KEY_BYTES))
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as f:
            if not _private(os.fstat(f.fileno())):
                return None
            key = f.read(_KEY_BYTES + 1)
    except OSError:
        return None
    return key if len(key) == _KEY_BYTES else None


def seal(path: str | os.PathLike[str], header: dict[str, Any], payload: bytes) -> bool:
    """Write `header` and `payload` to `path`, sealed (0600, atomically);
    False (and nothing written) when there is no key or the write fails."""
    key = _key()
    if key is None:
        return False
    head = json.dumps(header, sort_keys=True).encode("utf-8")
    mac = hmac.new(key, len(head).to_bytes(8, "big") + head, hashlib.sha256)
    mac.update(payload)
    target = Path(path)
    tmp = None
    try:
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=target.name + ".", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "wb") as f:  # mkstemp makes it 0600
            f.write(_MAGIC + len(head).to_bytes(8, "big") + head + mac.digest())
            f.write(payload)
        os.replace(tmp, target)
    except OSError:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False
    return True


def unseal(path: str | os.PathLike[str]) -> tuple[dict[str, Any], bytes] | None:
    """(header, payload) of a sealed file whose seal verifies under this
    user's key; None for a missing, foreign, tampered or truncated file."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    if not data.startswith(_MAGIC):
        return None
    at = len(_MAGIC)
    size = int.from_bytes(data[at : at + 8], "big")
    head_end = at + 8 + size
    body = head_end + hashlib.sha256().digest_size
    if len(data) < body:
        return None
    key = _key()
    if key is None:
        return None
    mac = hmac.new(key, data[at:head_end], hashlib.sha256)
    mac.update(memoryview(data)[body:])
    if not hmac.compare_digest(mac.digest(), data[head_end:body]):
        return None
    try:
        header = json.loads(data[at + 8 : head_end])
    except ValueError:
        return None
    return (header, data[body:]) if isinstance(header, dict) else None


def source_digest(*packages: str) -> str:
    """A digest of the source files (`.py`, `.lark`, `.rules`) of ordinance's
    `packages` (e.g. "rules"): what a cache made by other code must not be
    read by (a version number would not change with every edit)."""
    root = Path(__file__).parent
    h = hashlib.sha256(b"ordinance\n")
    for package in packages:
        for path in sorted((root / package).rglob("*")):
            if path.suffix in (".py", ".lark", ".rules") and path.is_file():
                h.update(path.relative_to(root).as_posix().encode() + b"\0")
                h.update(path.read_bytes() + b"\0")
    return h.hexdigest()

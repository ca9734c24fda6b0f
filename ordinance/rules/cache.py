"""The checked-policy cache: `load` without parsing and checking again.

Parsing and checking the standard library takes a fresh process about a
quarter of a second. `cached_load(path)` keeps the checked program in a
sealed file of the cache directory (see `ordinance.sealed`), one per policy
path and include allowance, and uses it while it is current:

- the cache was written by the same code: the source of `ordinance/rules`
  (standard library included), and the Python version (marshal's format);
- every file the policy read (the top file and its includes) has the same
  sha256 and real path as then, and no file `x` appeared beside an included `x.rules`
  (an include resolves to the first of `x` and `x.rules` that exists);
- the seal verifies.

Anything else (or any error while reading it) loads and checks the policy
as `load` does, and rewrites the cache. A policy with errors is never
cached: its diagnostics come from a real check every time.

The program is stored as plain marshal data: each dataclass node of
`rules/ast.py`, `rules/checked.py` and `diagnostics.py` (spans) becomes a
list `[class name, field values...]`; nothing else is ever constructed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import marshal
import os
import sys
import time
from typing import Any, Callable

from .. import diagnostics, sealed
from . import ast, checked
from .checked import CheckedProgram
from .loader import STDLIB_PREFIX, read_bytes

__all__ = ["cached_load", "encode_program", "decode_program"]

FORMAT = 1
_CLASSES: dict[str, type] = {
    name: cls
    for module in (ast, checked, diagnostics)
    for name, cls in vars(module).items()
    if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == module.__name__
}


def encode_program(program: CheckedProgram) -> Any:
    """The program as plain marshal data (TypeError if it holds anything else)."""
    return _encode(program)


def decode_program(data: Any) -> CheckedProgram:
    """The program `encode_program` encoded (ValueError if `data` is not one)."""
    try:
        program = _decode(data)
    except (TypeError, KeyError, IndexError) as exc:
        raise ValueError(f"not an encoded program: {exc}") from None
    if not isinstance(program, CheckedProgram):
        raise ValueError("not an encoded program")
    return program


def _encode(x: Any) -> Any:
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if isinstance(x, tuple):
        return tuple(_encode(i) for i in x)
    if isinstance(x, dict) and all(type(k) in (str, int) for k in x):
        return {k: _encode(v) for k, v in x.items()}
    name = type(x).__name__
    cls = _CLASSES.get(name)
    if cls is type(x):
        return [name] + [_encode(getattr(x, f.name)) for f in dataclasses.fields(cls) if f.init]
    raise TypeError(f"cannot cache a {name}")


def _decode(x: Any) -> Any:
    kind = type(x)
    if kind is list:
        return _CLASSES[x[0]](*[_decode(i) if type(i) in _NESTED else i for i in x[1:]])
    if kind is tuple:
        return tuple([_decode(i) if type(i) in _NESTED else i for i in x])
    if kind is dict:
        return {k: _decode(v) for k, v in x.items()}
    if x is None or kind in (bool, int, float, str):
        return x
    raise TypeError(f"unexpected {kind.__name__}")


_NESTED = (list, tuple, dict)


def _file_digest(name: str) -> str:
    return hashlib.sha256(read_bytes(name)).hexdigest()


def _written_since(mtime_ns: int, started_ns: int) -> bool:
    """Whether a file may have been written after `started_ns`, when its
    reading began. A file system's clock is coarse: Linux stamps a write with
    the time of the last tick (up to 10 ms behind `time.time_ns()`), and one
    that keeps whole seconds (FAT, some network mounts) up to a second
    behind; whole-second stamps get the second's margin."""
    margin = 10**9 if mtime_ns % 10**9 == 0 else 50 * 10**6
    return mtime_ns >= started_ns - margin


def _witness(files: tuple[str, ...]) -> dict[str, Any]:
    """What must not change for the cache to hold: each file read, with its
    digest and real path (stdlib modules are part of the code digest), and
    the absence of `x` beside each `x.rules` (an include names `x` or
    `x.rules`, and `x` is tried first)."""
    real = [f for f in files if not f.startswith(STDLIB_PREFIX)]
    return {
        "files": [[f, _file_digest(f), os.path.realpath(f)] for f in real],
        "shadows": [f[: -len(".rules")] for f in real if f.endswith(".rules") and os.path.lexists(f[: -len(".rules")])],
    }


def cached_load(path: str, load: Callable[..., CheckedProgram], **check_kwargs: Any) -> CheckedProgram:
    """`load(path, **check_kwargs)`, from the cache when it is current."""
    root = sealed.cache_dir()
    if root is None:
        return load(path, **check_kwargs)
    key = json.dumps([os.path.abspath(path), path, repr(sorted(check_kwargs.items()))])
    entry = root / "policies" / (hashlib.sha256(key.encode()).hexdigest()[:32] + ".policy")
    code = f"{sealed.source_digest('rules')} python {sys.version_info[:2]} marshal {marshal.version}"
    found = sealed.unseal(entry)
    if found is not None:
        header, payload = found
        try:
            if (
                header.get("format") == FORMAT
                and header.get("code") == code
                and header.get("key") == key
                and header.get("witness") == _witness(tuple(f[0] for f in header["witness"]["files"]))
            ):
                return decode_program(marshal.loads(payload))
        except (OSError, ValueError, TypeError, KeyError, EOFError):
            pass  # gone, changed or unreadable: load afresh
    started = time.time_ns()
    program = load(path, **check_kwargs)
    try:
        witness = _witness(program.files)
        if any(_written_since(os.stat(f).st_mtime_ns, started) for f, *_ in witness["files"]):
            return program  # written while (or just before) it was read: it may not be what was read
        payload = marshal.dumps(encode_program(program))
    except (OSError, TypeError, ValueError):
        return program
    sealed.seal(entry, {"format": FORMAT, "code": code, "key": key, "witness": witness}, payload)
    return program

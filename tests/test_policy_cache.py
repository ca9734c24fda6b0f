"""The checked-policy cache (rules/cache.py): a fresh command reads the checked
program instead of parsing and checking again, only while every file the
policy read is as it was, and gives the very program `load` gives."""

from __future__ import annotations

import marshal
import os
import time
from pathlib import Path
from typing import Any

import pytest

from ordinance import sealed
from ordinance.diagnostics import CheckError, OrdinanceError
from ordinance.rules import load
from ordinance.rules.cache import cached_load, decode_program, encode_program
from ordinance.testing.scenario import load_scenario

ROOT = Path(__file__).resolve().parent.parent

OLD = time.time() - 60  # files written a minute ago (one written while it is read is not cached)


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    os.utime(path, (OLD, OLD))
    return path


class Counting:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, path: str, **kw: Any) -> Any:
        self.calls += 1
        return load(path, **kw)


def _same(a: Any, b: Any) -> None:
    assert a == b
    assert encode_program(a) == encode_program(b)  # spans and every field, not only what `==` compares


def test_the_encoding_round_trips_every_policy_of_the_tree():
    policies = sorted((ROOT / "ordinance" / "rules" / "stdlib").glob("*.rules")) + sorted(
        (ROOT / "tests" / "golden").rglob("*.rules")
    )
    programs = [load_scenario(p).policy for p in sorted((ROOT / "ordinance" / "testing" / "scenarios").glob("*.toml"))]
    for path in policies:
        try:
            programs.append(load(path))
        except OrdinanceError:
            continue  # (golden cases of errors)
    for program in programs:
        back = decode_program(marshal.loads(marshal.dumps(encode_program(program))))
        _same(back, program)
        assert [r.span for r in back.rules] == [r.span for r in program.rules]
    assert len(programs) >= 10 and any(p.tests for p in programs)


def test_a_current_cache_is_read_and_a_changed_file_is_not(tmp_path, monkeypatch):
    monkeypatch.setenv(sealed.CACHE_ENV, str(tmp_path / "cache"))
    top = _write(tmp_path / "policy.rules", '.include "continuity"\n.include "extra"\n')
    extra = _write(tmp_path / "extra.rules", 'forbid(A, "no-bob", "") :- request(A, _, _, "bob", _).\n')
    loader = Counting()
    first = cached_load(str(top), loader)
    second = cached_load(str(top), loader)
    assert loader.calls == 1
    _same(second, first)
    _same(second, load(top))

    _write(extra, 'forbid(A, "no-carol", "") :- request(A, _, _, "carol", _).\n')
    changed = cached_load(str(top), loader)
    assert loader.calls == 2 and changed != first
    _same(changed, load(top))
    cached_load(str(top), loader)
    assert loader.calls == 2

    _write(tmp_path / "extra", 'forbid(A, "no-dave", "") :- request(A, _, _, "dave", _).\n')  # shadows extra.rules
    shadowed = cached_load(str(top), loader)
    assert loader.calls == 3
    _same(shadowed, load(top))
    assert any("dave" in str(r.head) for r in shadowed.rules)


def test_a_tampered_cache_or_a_foreign_key_is_not_read(tmp_path, monkeypatch):
    monkeypatch.setenv(sealed.CACHE_ENV, str(tmp_path / "cache"))
    top = _write(tmp_path / "policy.rules", '.include "continuity"\n')
    loader = Counting()
    cached_load(str(top), loader)
    (entry,) = (tmp_path / "cache" / "policies").iterdir()
    data = bytearray(entry.read_bytes())
    data[-5] ^= 1
    entry.write_bytes(bytes(data))
    _same(cached_load(str(top), loader), load(top))
    assert loader.calls == 2
    monkeypatch.setenv(sealed.CACHE_ENV, str(tmp_path / "other"))
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "policies").symlink_to(tmp_path / "cache" / "policies")
    cached_load(str(top), loader)
    assert loader.calls == 3


def test_a_policy_with_errors_is_never_cached_and_fresh_files_wait(tmp_path, monkeypatch):
    monkeypatch.setenv(sealed.CACHE_ENV, str(tmp_path / "cache"))
    bad = _write(tmp_path / "bad.rules", '.include "continuity"\np(X) :- q(Y).\n')
    for _ in range(2):
        with pytest.raises(CheckError):
            cached_load(str(bad), load)

    # a file written while it was being read may not be what was read: not cached
    racing = _write(tmp_path / "racing.rules", '.include "continuity"\n')

    class Writing(Counting):
        def __call__(self, path: str, **kw: Any) -> Any:
            program = super().__call__(path, **kw)
            racing.write_text('.include "continuity"\nforbid(A, "x", "") :- request(A, _, _, "x", _).\n')
            return program

    writing = Writing()
    cached_load(str(racing), writing)
    cached_load(str(racing), writing)
    assert writing.calls == 2

    # one written a moment before (a script that writes it, then runs a command) is
    just = time.time_ns() - 300_000_000
    just += just % 10**9 == 0  # a stamp of this file system's fine clock, not a whole second
    fresh = tmp_path / "fresh.rules"
    fresh.write_text('.include "continuity"\n')
    os.utime(fresh, ns=(just, just))
    loader = Counting()
    cached_load(str(fresh), loader)
    cached_load(str(fresh), loader)
    assert loader.calls == 1


def test_cache_off(tmp_path, monkeypatch):
    monkeypatch.setenv(sealed.CACHE_ENV, "off")
    top = _write(tmp_path / "policy.rules", '.include "continuity"\n')
    loader = Counting()
    cached_load(str(top), loader)
    cached_load(str(top), loader)
    assert loader.calls == 2 and sealed.cache_dir() is None

"""JSON Lines import/export round-trips the log exactly, on both backends."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from ordinance.diagnostics import StaleEpochError, StoreError
from ordinance.facts import Event, Store, export_jsonl, import_jsonl, open_store

SCHEMA = {"claim": ("symbol", "symbol", "symbol", "symbol"), "edge": ("number", "number")}


def fill(store: Store) -> None:
    store.assert_facts([("claim", ("c1", "db", "röle", "primary")), ("edge", (1, 2))], source="ops", author="al")
    store.append([Event("assert", "claim", ("c2", "db", "role", '"quoted"\n'))], fence=("deploy", 3))
    store.log_decision(
        {
            "request": {"id": "a1", "kind": "deploy", "target": "prod", "agent": "al", "epoch": 1},
            "allowed": False,
            "now": 0,
            "revision": 3,
            "policy_hash": "h",
            "reasons": [],
            "nested": {"b": [1, "x", None], "a": 2.5},
        }
    )
    store.purge([2], "retention")


def test_export_then_import_into_an_empty_store_is_identical(store_url: str, tmp_path: Path) -> None:
    with open_store(store_url, SCHEMA) as source:
        fill(source)
        out = io.StringIO()
        assert export_jsonl(source, out) == 5
        original = source.events()
        original_facts = source.facts()
    text = out.getvalue()
    assert len(text.splitlines()) == 5
    with open_store(str(tmp_path / "copy.db"), SCHEMA) as copy:
        assert import_jsonl(copy, io.StringIO(text), decisions=True) == 5
        assert copy.events() == original
        assert copy.facts() == original_facts
        again = io.StringIO()
        export_jsonl(copy, again)
        assert again.getvalue() == text
        with pytest.raises(StaleEpochError):
            copy.fence("deploy", 2)  # the imported fence is in force


def test_import_into_postgres_from_sqlite_export(tmp_path: Path, pg_url: str) -> None:
    with open_store(str(tmp_path / "a.db"), SCHEMA) as source:
        fill(source)
        out = io.StringIO()
        export_jsonl(source, out)
        original = source.events()
    with open_store(pg_url, SCHEMA) as target:
        import_jsonl(target, io.StringIO(out.getvalue()), decisions=True)
        assert target.events() == original


def test_export_range_continues_in_a_second_import(store_url: str, tmp_path: Path) -> None:
    with open_store(store_url, SCHEMA) as source:
        fill(source)
        first, rest = io.StringIO(), io.StringIO()
        export_jsonl(source, first, until=2)
        export_jsonl(source, rest, since=2)
        original = source.events()
    with open_store(str(tmp_path / "b.db"), SCHEMA) as copy:
        import_jsonl(copy, io.StringIO(first.getvalue()), decisions=True)
        import_jsonl(copy, io.StringIO(rest.getvalue()), decisions=True)
        assert copy.events() == original


def _line(seq: int, **changes: object) -> str:
    obj = {
        "seq": seq,
        "kind": "assert",
        "relation": "edge",
        "args": [seq, seq + 1],
        "source": "",
        "author": "",
        "time": "2026-01-01T00:00:00.000000Z",
        "resource": None,
        "epoch": None,
        "payload": None,
    }
    obj.update(changes)
    return json.dumps(obj)


@pytest.mark.parametrize(
    "bad, message",
    [
        ("{not json", "jsonl:3: not JSON: expecting property name enclosed in double quotes at column 2"),
        ('{"a": "x\ty"}', "jsonl:3: not JSON: invalid control character at column 9"),
        ('{"a": "cut', "jsonl:3: not JSON: unterminated string starting at column 7"),
        ("[1, 2]", "jsonl:3: expected a JSON object"),
        (_line(3, args="1,2"), "jsonl:3: field `args` has the wrong type"),
        (_line(3, epoch=True), "jsonl:3: field `epoch` has the wrong type"),
        (_line(3, extra=1), "jsonl:3: fields missing: [], unexpected: ['extra']"),
        (_line(7), "jsonl:3: seq 7 does not follow revision 2"),
        (_line(3, args=["a", 1]), 'jsonl:3: argument 1 of `edge` is "a", declared `number`'),
        (_line(3, relation="nope"), "jsonl:3: relation `nope` is not declared by the policy"),
    ],
)
def test_malformed_lines_are_refused_with_a_line_number(store_url: str, bad: str, message: str) -> None:
    text = "\n".join([_line(1), _line(2), bad, _line(4)]) + "\n"
    with open_store(store_url, SCHEMA) as store:
        with pytest.raises(StoreError) as err:
            import_jsonl(store, io.StringIO(text))
        assert err.value.diagnostics[0].message == message
        assert store.revision() == 0


def test_import_must_continue_the_log(store_url: str) -> None:
    with open_store(store_url, SCHEMA) as store:
        store.assert_facts([("edge", (0, 0))])
        with pytest.raises(StoreError) as err:
            import_jsonl(store, io.StringIO(_line(1) + "\n"))
        assert err.value.diagnostics[0].message == "jsonl:1: seq 1 does not follow revision 1"
        assert import_jsonl(store, io.StringIO(_line(2) + "\n\n")) == 2


def test_a_decision_in_an_import_is_refused_unless_the_owner_restores(store_url: str, tmp_path: Path) -> None:
    """A forged allowed decision in a file: this store's gate never made it,
    so `load` refuses the file whole; `log` and `replay` never see it."""
    forged = {
        "seq": 1,
        "kind": "decision",
        "relation": "decision",
        "args": [],
        "source": "gate",
        "author": "gate",
        "time": "2026-12-01T12:00:00.000000Z",
        "resource": None,
        "epoch": None,
        "payload": {
            "request": {"id": "x1", "kind": "deploy", "target": "prod", "agent": "mallory", "epoch": 1},
            "allowed": True,
            "now": 0,
            "revision": 0,
            "policy_hash": "h",
            "reasons": [],
        },
        "layer": "public",
    }
    with open_store(store_url, SCHEMA) as store:
        with pytest.raises(StoreError) as err:
            import_jsonl(store, io.StringIO(json.dumps(forged) + "\n"))
        assert err.value.code == "imported_decision"
        assert store.events() == [] and store.decisions() == []

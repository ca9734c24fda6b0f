"""No way around the gate: every write path refuses the same things.

Each bypass the hardening sweep found is tried through the CLI (assert,
load in both forms) and the library (append, assert_facts, import_jsonl),
on both backends; then the gate is asked and must still deny.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from ordinance.cli import cli
from ordinance.diagnostics import StaleEpochError, StoreError
from ordinance.facts import Event, export_jsonl, import_jsonl, open_store, schema_of
from ordinance.rules import load

REQUEST = 'request("m1", "deploy", "prod", "mallory", 1).'
NOW = "2026-12-24T12:00:00Z"


def run(*args: str, input: str | bytes | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def error_code(result: Result) -> str:
    assert result.exit_code == 2, (result.output, result.stderr)
    [line] = result.stderr.strip().splitlines()
    assert "Traceback" not in result.output + result.stderr
    return line.split("]")[0].removeprefix("error[")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_url: str) -> tuple[Path, str]:
    """An `init` project whose store is `store_url` (SQLite or PostgreSQL)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ORDINANCE_POLICY", raising=False)
    monkeypatch.setenv("ORDINANCE_DB", store_url)
    assert run("init", ".", "--db", store_url).exit_code == 0  # the store at store_url, made
    return tmp_path, store_url


def denied(project: tuple[Path, str]) -> bool:
    result = run("check", REQUEST, "--now", NOW)
    assert result.exit_code in (0, 1), result.stderr
    return result.exit_code == 1


def events_of(url: str) -> list[Event]:
    with open_store(url) as store:
        return store.events()


@pytest.mark.parametrize(
    "fact, code",
    [
        ('permit("m1").', "derived_relation"),
        ('current_grant("mallory", "prod", 1).', "derived_relation"),
        ('forbid("x", "y", "z").', "derived_relation"),
        ('evidence_rank("observed", 9).', "derived_relation"),  # a table written in the policy
        ('request("m1", "deploy", "prod", "mallory", 1).', "request_fact"),
        ('request_scope("m1", "prod").', "request_fact"),
    ],
)
def test_assert_refuses_derived_and_request_relations(project: tuple[Path, str], fact: str, code: str) -> None:
    assert error_code(run("assert", fact)) == code
    assert events_of(project[1]) == []
    assert denied(project)


def exported(**fields: Any) -> str:
    """One line of `ordinance export`: an assert of `grant("alice", "prod", 1)`
    unless `fields` say otherwise."""
    line = {
        "seq": 1,
        "kind": "assert",
        "relation": "grant",
        "args": ["alice", "prod", 1],
        "source": "x",
        "author": "x",
        "time": "2026-01-01T00:00:00.000000Z",
        "resource": None,
        "epoch": None,
        "payload": None,
    }
    return json.dumps({**line, **fields}) + "\n"


def test_load_refuses_them_in_both_forms(project: tuple[Path, str]) -> None:
    plain = json.dumps({"relation": "permit", "args": ["m1"]})
    assert error_code(run("load", "-", input=plain + "\n")) == "derived_relation"
    lines = [
        exported(relation="permit", args=["m1"]),
        exported(relation="request", args=["m1", "deploy", "prod", "mallory", 1]),
    ]
    for line in lines:
        assert error_code(run("load", "-", input=line)) in ("derived_relation", "request_fact")
    assert events_of(project[1]) == []
    assert denied(project)


def test_an_imported_event_under_a_stale_epoch_is_refused(project: tuple[Path, str]) -> None:
    url = project[1]
    policy = load(project[0] / "policy.rules")
    with open_store(url, schema_of(policy)) as store:
        store.fence("prod", 5)
        revision = store.revision()
    line = {
        "seq": revision + 1,
        "kind": "assert",
        "relation": "grant",
        "args": ["mallory", "prod", 1],
        "source": "x",
        "author": "x",
        "time": "2026-01-01T00:00:00.000000Z",
        "resource": "prod",
        "epoch": 1,
        "payload": None,
    }
    assert error_code(run("load", "-", input=json.dumps(line) + "\n")) == "stale_epoch"
    with open_store(url, schema_of(policy)) as store:
        with pytest.raises(StaleEpochError):
            import_jsonl(store, io.StringIO(json.dumps(line) + "\n"))
        assert store.revision() == revision


def test_the_library_api_runs_the_same_checks(store_url: str, tmp_path: Path) -> None:
    policy = load(Path(__file__).parents[1] / "ordinance/rules/stdlib/continuity.rules")
    with open_store(store_url, schema_of(policy)) as store:
        for write in (
            lambda: store.assert_facts([("permit", ("m1",))]),
            lambda: store.append([Event("assert", "current_grant", ("m", "prod", 1))]),
            lambda: store.append([Event("assert", "request_uses", ("m1", "c1"))]),
        ):
            with pytest.raises(StoreError) as err:
                write()
            assert err.value.code in ("derived_relation", "request_fact")
        assert store.revision() == 0
    with open_store(str(tmp_path / "none.db")) as bare:  # no policy: no facts at all
        with pytest.raises(StoreError) as err:
            bare.assert_facts([("permit", ("m1",))])
        assert err.value.code == "no_schema"


@pytest.mark.parametrize(
    "payload",
    [
        {"allowed": True},
        {"request": {"id": "[/x]"}, "allowed": True, "now": 0, "revision": 0, "policy_hash": "h"},
        {
            "request": {"id": "a", "kind": "k", "target": "t", "agent": "g", "epoch": 1},
            "allowed": "yes",
            "now": 0,
            "revision": 0,
            "policy_hash": "h",
        },
        {
            "request": {"id": "a", "kind": "k", "target": "t", "agent": "g", "epoch": 1},
            "allowed": True,
            "now": 0,
            "revision": 0,
            "policy_hash": "h",
            "reasons": ["stale"],
        },
        # a `now` past year 9999 (`log` and `replay` read it as an instant), a negative revision
        *(
            {
                "request": {"id": "a", "kind": "k", "target": "t", "agent": "g", "epoch": 1},
                "allowed": True,
                "policy_hash": "h",
                **fields,
            }
            for fields in (
                {"now": 253402300800, "revision": 0},
                {"now": -(2**63), "revision": 0},
                {"now": 0, "revision": -1},
            )
        ),
    ],
)
def test_an_imported_decision_must_be_a_decision(project: tuple[Path, str], payload: dict[str, Any]) -> None:
    line = exported(kind="decision", relation="decision", args=[], source="gate", author="g", payload=payload)
    assert error_code(run("load", "--decisions", "-", input=line)) == "bad_decision"
    assert events_of(project[1]) == []
    assert run("log").exit_code == 0


@pytest.mark.parametrize("time", ["99999-01-01T00:00:00.000000Z", "0000-01-01T00:00:00.000000Z", "yesterday", ""])
def test_an_imported_event_has_a_log_time_the_store_could_have_written(project: tuple[Path, str], time: str) -> None:
    assert error_code(run("load", "-", input=exported(time=time))) == "time_range"
    assert events_of(project[1]) == []


def test_a_real_export_still_round_trips(project: tuple[Path, str], tmp_path: Path) -> None:
    assert run("assert", 'grant("alice", "prod", 1).').exit_code == 0
    run("check", 'request("a1", "deploy", "prod", "alice", 1).', "--now", NOW)
    out = io.StringIO()
    with open_store(project[1]) as store:
        export_jsonl(store, out)
    copy = str(tmp_path / "copy.db")
    assert error_code(run("load", "-", "--db", copy, input=out.getvalue())) == "imported_decision"
    assert events_of(copy) == []  # refused whole: the decision was not made by this store
    result = run("load", "--decisions", "-", "--db", copy, input=out.getvalue())
    assert result.exit_code == 0, result.stderr
    assert "loaded 2 events" in result.output
    assert [e.to_json() for e in events_of(copy)] == [e.to_json() for e in events_of(project[1])]


# ---------------------------------------------------------------- values at the edge

BAD_VALUES = [
    # (a JSON Lines fact line, the code)
    ('{"relation": "grant", "args": ["al\\u0000ice", "prod", 1]}', "nul_byte"),
    ('{"relation": "grant", "args": ["\\ud800", "prod", 1]}', "lone_surrogate"),
    ('{"relation": "grant", "args": ["alice", "prod", 1' + "0" * 400 + "]}", "integer_range"),
    ('{"relation": "grant", "args": ["alice", "prod", 9223372036854775808]}', "integer_range"),
    ('{"relation": "grant", "args": ["alice", "prod", -9223372036854775809]}', "integer_range"),
    ('{"relation": "stop", "args": ["prod", 253402300800]}', "time_range"),
    ('{"relation": "grant", "args": ["alice", "prod", 1], "source": "x\\u0000"}', "nul_byte"),
    ('{"relation": "grant", "args": ["alice", "prod", 1' + "0" * 5000 + "]}", "integer_range"),  # never converted
]


@pytest.mark.parametrize("line, code", BAD_VALUES)
def test_load_refuses_bad_values_with_a_code(project: tuple[Path, str], line: str, code: str) -> None:
    assert error_code(run("load", "-", input=line + "\n")) == code
    assert events_of(project[1]) == []
    assert run("query", "grant(A, S, E)").exit_code in (0, 1)  # no answers, no error


@pytest.mark.parametrize("epoch", [2**63, 10**400, -1])
def test_an_exported_event_s_epoch_is_checked_like_a_fence(project: tuple[Path, str], epoch: int) -> None:
    line = exported(args=["mallory", "prod", 1], resource="prod", epoch=epoch)
    assert error_code(run("load", "-", input=line)) in ("epoch_range", "integer_range")
    assert events_of(project[1]) == []
    assert denied(project)


def test_invalid_utf8_in_a_file_is_one_line(project: tuple[Path, str], tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"relation": "grant", "args": ["\xff", "prod", 1]}\n')
    result = run("load", str(path))
    assert error_code(result) == "encoding"
    assert "bad.jsonl:1" in result.stderr


@pytest.mark.parametrize(
    "fact, code",
    [
        ('grant("a\\u0000", "prod", 1).', "nul_byte"),
        ('grant("\\uD800", "prod", 1).', "lone_surrogate"),
    ],
)
def test_assert_refuses_bad_values(project: tuple[Path, str], fact: str, code: str) -> None:
    assert error_code(run("assert", fact)) == code


def test_the_api_refuses_bad_values_and_epochs(store_url: str) -> None:
    schema = {"stop": ("symbol", "time"), "w": ("any",)}
    with open_store(store_url, schema) as store:
        cases: list[tuple[Any, str]] = [
            (lambda: store.assert_facts([("w", (10**400,))]), "integer_range"),
            (lambda: store.assert_facts([("w", ("\x00",))]), "nul_byte"),
            (lambda: store.assert_facts([("stop", ("s", 2**62))]), "time_range"),
            (lambda: store.assert_facts([("w", ("x",))], source="\udc80"), "lone_surrogate"),
            (lambda: store.fence("r", 2**63), "epoch_range"),
            (lambda: store.fence("r", -1), "epoch_range"),
            (lambda: store.fence("r\x00", 1), "nul_byte"),
            (lambda: store.purge([1], "\udcff"), "lone_surrogate"),
        ]
        for write, code in cases:
            with pytest.raises(StoreError) as err:
                write()
            assert err.value.code == code
        assert store.revision() == 0
        store.assert_facts([("stop", ("s", 253402300799)), ("w", (2**63 - 1,)), ("w", (-(2**63),))])
        assert store.facts()["w"] == {(2**63 - 1,), (-(2**63),)}


def test_a_request_with_bad_values_is_refused_at_the_gate(project: tuple[Path, str]) -> None:
    assert error_code(run("check", 'request("m\\u0000", "deploy", "prod", "mallory", 1).')) == "nul_byte"
    assert error_code(run("check", 'request("m1", "deploy", "prod", "mallory", 9223372036854775808).')) == "syntax"
    assert events_of(project[1]) == []  # nothing logged for a request that is not one
    # the largest epoch is a value like any other: denied (no grant), logged, and logged readably
    largest = run("check", 'request("m1", "deploy", "prod", "mallory", 9223372036854775807).', "--now", NOW)
    assert largest.exit_code == 1 and "DENIED m1" in largest.output, (largest.output, largest.stderr)
    assert run("log").exit_code == 0 and run("replay").exit_code == 0
    [decision] = events_of(project[1])
    assert decision.payload is not None and decision.payload["request"]["epoch"] == 2**63 - 1


def test_the_store_api_raises_only_store_errors(store_url: str) -> None:
    junk: list[Any] = [
        None,
        1,
        "x",
        [1],
        [None],
        [Event("assert", 1, ())],  # type: ignore[arg-type]
        [Event("assert", "w", ("a",), source=None)],  # type: ignore[arg-type]
        [Event("decision", "decision", (), payload=[])],
    ]  # type: ignore[arg-type]
    with open_store(store_url, {"w": ("any",)}) as store:
        for batch in junk:
            with pytest.raises(StoreError):
                store.append(batch)
        for call in (
            lambda: store.purge(None, "r"),
            lambda: store.purge(["1"], "r"),  # type: ignore[arg-type]
            lambda: store.fence(None, 1),
            lambda: store.fence("r", "1"),  # type: ignore[arg-type]
            lambda: store.as_of(5),
            lambda: store.events(kinds=["nope"]),
            lambda: store.log_decision({"allowed": True}),
        ):
            with pytest.raises(StoreError):
                call()
        assert store.revision() == 0


def test_the_server_refuses_the_same_values(store_url: str, tmp_path: Path) -> None:
    from ordinance.cli.init import CLAUDE_CODE_POLICY
    from served import OWNER, Served, write_tokens

    (tmp_path / "policy.rules").write_text(CLAUDE_CODE_POLICY + "\n.decl stop2(s: symbol, t: time)\n")
    scope, request = "/home/me/p", {"kind": "Bash", "target": "/home/me/p", "epoch": 1}
    cases: list[tuple[str, Any, str]] = [
        ("/assert", {"text": 'grant("a\\u0000", "/home/me/p", 1).'}, "nul_byte"),
        ("/assert", {"text": 'grant("\\uD800", "/home/me/p", 1).'}, "lone_surrogate"),
        ("/assert", {"facts": [{"relation": "grant", "args": ["a", scope, 10**400]}]}, "integer_range"),
        ("/assert", {"facts": [{"relation": "grant", "args": ["a", scope, 2**63]}]}, "integer_range"),
        ("/assert", {"facts": [{"relation": "stop2", "args": ["x", 253402300800]}]}, "time_range"),
        ("/check", {"request": {**request, "epoch": 2**63}}, "integer_range"),
        ("/check", {"request": {**request, "kind": "Bash\u0000"}}, "nul_byte"),
        ("/check", {"request": request, "now": 253402300800}, "time_range"),
        ("/check", {"request": request, "now": "99999-01-01T00:00:00Z"}, "bad_request"),
        ("/query", {"pattern": "grant(A, S, E)", "now": 2**70}, "integer_range"),
    ]
    with Served(tmp_path / "policy.rules", store_url, write_tokens(tmp_path / "tokens.toml")) as server:
        for path, body, code in cases:
            r = server.post(path, OWNER, content=json.dumps(body).encode())
            assert (r.status_code, r.json()["error"]["code"]) == (400, code), (path, body, r.text)
        # invalid UTF-8 in a JSON body or a JSON Lines upload: refused, not replaced by U+FFFD
        bad = b'{"relation": "grant", "args": ["\xff", "/home/me/p", 1]}\n'
        r = server.post("/load", OWNER, content=bad)
        assert (r.status_code, r.json()["error"]["code"]) == (400, "encoding"), r.text
        assert server.post("/assert", OWNER, content=b'{"facts": [' + bad.strip() + b"]}").status_code == 400
        assert server.get("/health", None).json()["revision"] == 0  # nothing written, not even a decision
        assert "Traceback" not in server.stop()

"""Every JSON shape the CLI prints is the JSON Schema the package ships
(ordinance/output.schema.json, shown on docs/json.md), checked against real
output of each command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from jsonschema import Draft202012Validator

from ordinance.cli import cli

SCHEMA_FILE = Path(__file__).resolve().parents[1] / "ordinance" / "output.schema.json"
NOW = "2026-12-24T12:00:00Z"
REQUEST = 'request("a1", "deploy", "prod", "alice", 1).'
NOBODY = 'request("b1", "deploy", "prod", "bob", 1).'


def schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(data)
    return data


SCHEMA = schema()


def valid(shape: str, data: Any) -> None:
    """`data` is an instance of `$defs/<shape>` (a list of them for `[shape]`)."""
    many = shape.startswith("[")
    ref = {"$ref": f"#/$defs/{shape.strip('[]')}"}
    one = {**SCHEMA, **({"type": "array", "items": ref} if many else ref)}
    errors = sorted(Draft202012Validator(one).iter_errors(data), key=str)
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])


def run(*args: str) -> Any:
    result: Result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.output)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("json")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(path)
        mp.delenv("ORDINANCE_DB", raising=False)
        mp.delenv("ORDINANCE_POLICY", raising=False)
        CliRunner().invoke(cli, ["init", "."])
        CliRunner().invoke(cli, ["assert", 'grant("alice", "prod", 1).', 'freeze("prod", 2026-12-27T00:00:00Z).'])
        yield path


@pytest.fixture(autouse=True)
def inside(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    monkeypatch.delenv("ORDINANCE_DB", raising=False)
    monkeypatch.delenv("ORDINANCE_POLICY", raising=False)


def test_check_prints_a_decision_with_typed_proofs() -> None:
    blocked = run("check", "--json", REQUEST, "--now", NOW)
    valid("decision", blocked)
    assert blocked["now"] == NOW and blocked["reasons"][0]["proof"]["kind"] == "rule"
    assert blocked["reasons"][0]["proof"]["at"].endswith("policy.rules:11")
    missing = run("check", "--json", NOBODY, "--now", NOW)
    valid("decision", missing)
    assert "failures" in next(r for r in missing["reasons"] if r["kind"] == "missing-permit")["proof"]


def test_log_prints_logged_decisions() -> None:
    run("check", "--json", REQUEST, "--now", NOW)
    logged = run("log", "--json")
    valid("[logged]", logged)
    assert logged and all(d["now"] == NOW for d in logged)


def test_why_and_why_not_print_a_proof_and_an_answer() -> None:
    proof = run("why", "--json", 'forbid("a1", "frozen", "prod")', "--given", REQUEST, "--now", NOW)
    valid("proof", proof)
    assert proof["bindings"]["Until"] == "2026-12-27T00:00:00Z"
    assert any(c.get("annotation", "").startswith("r2 assert") for c in proof["children"])  # the provenance text shows
    answer = run("why-not", "--json", 'permit("b1")', "--given", NOBODY, "--now", NOW)
    valid("why_not", answer)
    assert answer["failures"][0]["at"].startswith("<stdlib>/")
    partial = run("why-not", "--json", "permit(_)", "--now", NOW)
    valid("why_not", partial)
    assert partial["tuple"] == [None]


def test_query_and_replay() -> None:
    answers = run("query", "--json", "freeze(S, U)", "--now", NOW)
    valid("[answer]", answers)
    assert answers == [{"S": "prod", "U": "2026-12-27T00:00:00Z"}]
    run("check", "--json", REQUEST, "--now", NOW)
    replayed = run("replay", "--json")
    valid("[replayed]", replayed)
    assert replayed and all(r["same"] for r in replayed)


def test_the_schema_refuses_untyped_times() -> None:
    data = run("check", "--json", REQUEST, "--now", NOW)
    data["now"] = 1798113600
    with pytest.raises(AssertionError):
        valid("decision", data)

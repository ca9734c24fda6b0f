"""`ordinance log` filters and pages in the store; `replay` streams."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from ordinance.cli import cli
from ordinance.facts import open_store

NOW = "2026-12-24T12:00:00Z"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def logged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_url: str) -> str:
    """Six decisions: alice allowed (a0, a2, a4), bob denied (b1, b3, b5)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ORDINANCE_POLICY", raising=False)
    monkeypatch.setenv("ORDINANCE_DB", store_url)
    assert run("init", ".", "--db", store_url).exit_code == 0  # the store at store_url, made
    assert run("assert", 'grant("alice", "prod", 1).').exit_code == 0
    for n in range(6):
        agent = "alice" if n % 2 == 0 else "bob"
        run("check", f'request("{agent[0]}{n}", "deploy", "prod", "{agent}", 1).', "--now", NOW)
    return store_url


def ids(result: Result) -> list[str]:
    assert result.exit_code == 0, result.stderr
    return [d["request"]["id"] for d in json.loads(result.output)]


def test_filters_run_in_the_store(logged: str) -> None:
    assert ids(run("log", "--json")) == ["a0", "b1", "a2", "b3", "a4", "b5"]
    assert ids(run("log", "--json", "--denied")) == ["b1", "b3", "b5"]
    assert ids(run("log", "--json", "--agent", "alice")) == ["a0", "a2", "a4"]
    assert ids(run("log", "--json", "--request", "b3")) == ["b3"]
    assert ids(run("log", "--json", "--denied", "--agent", "alice")) == []
    assert ids(run("log", "--json", "--since", "2000-01-01T00:00:00Z")) == ["a0", "b1", "a2", "b3", "a4", "b5"]
    assert ids(run("log", "--json", "--since", "2999-01-01T00:00:00Z")) == []


def test_paging(logged: str) -> None:
    assert ids(run("log", "--json", "--limit", "2")) == ["a4", "b5"]  # the newest
    first = json.loads(run("log", "--json", "--after", "0", "--limit", "4").output)
    assert [d["request"]["id"] for d in first] == ["a0", "b1", "a2", "b3"]
    assert ids(run("log", "--json", "--after", str(first[-1]["seq"]), "--limit", "4")) == ["a4", "b5"]
    text = run("log", "--after", "0", "--limit", "4").output
    assert f"next page: ordinance log --after {first[-1]['seq']}" in text


def test_purged_decisions_are_not_shown(logged: str) -> None:
    with open_store(logged) as store:
        [b1] = store.decision_page(request="b1")
        store.purge([b1.seq], "retention")
    assert ids(run("log", "--json", "--denied")) == ["b3", "b5"]


def test_markup_in_data_is_shown_as_text(logged: str) -> None:
    run("check", 'request("[/x]", "deploy", "prod", "[bold]bob", 1).', "--now", NOW)
    result = run("log", "--request", "[/x]")
    assert result.exit_code == 0, result.stderr
    assert "[/x]" in result.output and "[bold]bob" in result.output


def test_replay_streams_every_decision(logged: str) -> None:
    result = run("replay", "--json")
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.output)
    assert len(rows) == 6 and all(r["same"] for r in rows)
    assert [r["now"]["revision"] for r in rows] == [r["was"]["revision"] for r in rows]

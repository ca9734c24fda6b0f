"""Store operations from the command line: export, purge, retract; no
command creates a store silently; init --force keeps the store and says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from ordinance.cli import cli
from ordinance.diagnostics import StoreError
from ordinance.facts import open_store

NOW = "2026-12-24T12:00:00Z"
GRANT = 'grant("alice", "prod", 1).'
REQUEST = 'request("a1", "deploy", "prod", "alice", 1).'


def run(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def error(result: Result) -> str:
    assert result.exit_code == 2, (result.output, result.stderr)
    [line] = result.stderr.strip().splitlines()
    return line


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_url: str) -> str:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ORDINANCE_POLICY", raising=False)
    monkeypatch.setenv("ORDINANCE_DB", store_url)
    assert run("init", ".", "--db", store_url).exit_code == 0  # the store at store_url, made
    return store_url


def test_export_writes_what_load_reads_back(project: str, tmp_path: Path) -> None:
    assert run("assert", GRANT).exit_code == 0
    run("check", REQUEST, "--now", NOW)
    out = run("export")
    assert out.exit_code == 0
    lines = [json.loads(line) for line in out.output.splitlines()]
    assert [e["kind"] for e in lines] == ["assert", "decision"]
    assert run("export", str(tmp_path / "b.jsonl"), "--since", "1").exit_code == 0
    assert len((tmp_path / "b.jsonl").read_text().splitlines()) == 1


def test_purge_needs_a_reason_and_hides_the_fact(project: str) -> None:
    assert run("assert", GRANT).exit_code == 0
    assert run("check", REQUEST, "--now", NOW).exit_code == 0
    assert run("purge", "1").exit_code == 2  # --reason is required
    result = run("purge", "1", "--reason", "retention: 90 days")
    assert result.exit_code == 0, result.stderr
    assert "purged 1 events" in result.output
    assert run("check", REQUEST, "--now", NOW).exit_code == 1
    with open_store(project) as store:
        [purge] = store.events(kinds=["purge"])
        assert purge.payload == {"reason": "retention: 90 days"}
        assert store.as_of(2).facts() == {"grant": {("alice", "prod", 1)}}
    assert "no seq 99" in error(run("purge", "99", "--reason", "x"))


def test_retract_corrects_a_mistaken_fact(project: str) -> None:
    assert run("assert", 'grant("bob", "prod", 1).', GRANT).exit_code == 0
    result = run("retract", 'grant("bob", "prod", 1).', "--reason", "granted to the wrong agent")
    assert result.exit_code == 0, result.stderr
    assert "retracted 1 fact" in result.output
    with open_store(project) as store:
        assert store.facts() == {"grant": {("alice", "prod", 1)}}
        [purge] = store.events(kinds=["purge"])
        assert purge.payload == {"reason": "granted to the wrong agent", "retract": True}
        assert ("bob", "prod", 1) in store.as_of(2).facts()["grant"]
    assert "error[no_such_fact]" in error(run("retract", 'grant("bob", "prod", 1).', "--reason", "again"))


def test_assert_names_the_fact_and_the_relation_it_meant_and_writes_nothing(project: str) -> None:
    misspelt = error(run("assert", GRANT, 'clam("a", "b", "c", "d").'))
    assert misspelt == (
        "error[unknown_relation]: fact 2: relation `clam` is not declared by the policy; help: did you mean `claim`"
    )
    wrong = error(run("assert", 'claim("a", "b", "c", 1).'))
    assert wrong == "error[type_mismatch]: fact 1: argument 4 of `claim` is 1, declared `symbol`"
    with open_store(project) as store:
        assert store.revision() == 0  # neither batch wrote its good fact


def test_no_command_but_init_assert_load_creates_a_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ORDINANCE_DB", raising=False)
    monkeypatch.delenv("ORDINANCE_POLICY", raising=False)
    (tmp_path / "policy.rules").write_text('.include "continuity"\n')
    for args in (
        ["check", REQUEST, "--db", "new.db"],
        ["log"],
        ["replay"],
        ["query", "grant(A, S, E)"],
        ["export"],
        ["purge", "1", "--reason", "x"],
    ):
        line = error(run(*args))
        assert line.startswith("error[no_store]") and ("new.db" in line or "ordinance.db" in line), line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["policy.rules"]
    assert run("assert", GRANT, "--db", "made.db").exit_code == 0
    assert (tmp_path / "made.db").exists()


def test_init_force_says_what_it_kept(tmp_path: Path) -> None:
    assert run("init", str(tmp_path)).exit_code == 0
    assert (
        run(
            "assert", GRANT, "--db", str(tmp_path / "ordinance.db"), "--policy", str(tmp_path / "policy.rules")
        ).exit_code
        == 0
    )
    result = run("init", str(tmp_path), "--force")
    assert result.exit_code == 0
    assert "overwrote" in result.output and "kept" in result.output and "revision 1" in result.output


def test_a_file_that_is_not_a_store_is_not_made_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # an empty file, or another program's SQLite database, got the store's tables from any read
    import sqlite3

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ORDINANCE_DB", raising=False)
    (tmp_path / "policy.rules").write_text('.include "continuity"\n')
    (tmp_path / "empty.db").touch()
    other = sqlite3.connect(tmp_path / "other.db")
    other.execute("CREATE TABLE bookmarks (url TEXT)")
    other.commit()
    other.close()
    for name in ("empty.db", "other.db"):
        for args in (["log"], ["query", "grant(A, S, E)"], ["check", REQUEST], ["export"], ["replay"]):
            line = error(run(*args, "--db", name))
            assert line.startswith("error[no_store]") and name in line, (args, line)
    assert (tmp_path / "empty.db").stat().st_size == 0
    tables = sqlite3.connect(tmp_path / "other.db").execute("SELECT name FROM sqlite_master").fetchall()
    assert tables == [("bookmarks",)]


def test_load_reports_its_own_writes_while_others_write(project: str, tmp_path: Path) -> None:
    import threading

    from ordinance.facts import schema_of
    from ordinance.rules import load

    assert run("assert", GRANT).exit_code == 0
    lines = [json.dumps({"relation": "grant", "args": [f"agent{i}", "prod", 1]}) for i in range(300)]
    (tmp_path / "many.jsonl").write_text("\n".join(lines) + "\n")
    stop = threading.Event()

    def other_writer() -> None:
        with open_store(project, schema_of(load(tmp_path / "policy.rules"))) as store:
            while not stop.is_set():
                store.assert_facts([("grant", ("other", "prod", 1))])

    writer = threading.Thread(target=other_writer)
    writer.start()
    try:
        result = run("load", str(tmp_path / "many.jsonl"))
    finally:
        stop.set()
        writer.join()
    assert result.exit_code == 0, result.stderr
    assert result.output.startswith("loaded 300 events; store at revision ")
    with open_store(project) as store:
        assert sum(1 for e in store.events() if e.args[0].startswith("agent")) == 300


def test_init_db_makes_the_store_there_and_keeps_it_after(store_url: str, tmp_path: Path) -> None:
    # a fresh PostgreSQL database is no store until init (or a write) makes its tables
    with pytest.raises(StoreError) as refused:
        open_store(store_url, create=False)
    assert refused.value.code == "no_store" and "run `ordinance init" in str(refused.value)
    made = run("init", str(tmp_path / "p"), "--db", store_url)
    assert made.exit_code == 0, made.stderr
    assert ": an empty store (revision 0)" in made.output and "created" in made.output
    assert "://" not in made.output  # a URL may carry a password: never echoed
    assert not (tmp_path / "p" / "ordinance.db").exists()
    with open_store(store_url, create=False) as store:
        assert store.revision() == 0
    assert run("assert", GRANT, "--db", store_url, "--policy", str(tmp_path / "p" / "policy.rules")).exit_code == 0
    again = run("init", str(tmp_path / "p"), "--db", store_url, "--force")
    assert again.exit_code == 0 and "kept" in again.output and "(revision 1)" in again.output

"""The command line, driven in-process: a project from `init` to `replay`."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from ordinance.cli import cli
from ordinance.cli.demo import scenario_dir
from ordinance.facts import export_jsonl, open_store

NOW = "2026-12-24T12:00:00Z"
GRANT = 'grant("alice", "prod", 1).'
FREEZE = 'freeze("prod", 2026-12-27T00:00:00Z).'
REQUEST = 'request("a1", "deploy", "prod", "alice", 1).'


def run(*args: str, env: dict[str, str] | None = None, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), env=env, input=input, catch_exceptions=False)


def one_error_line(result: Result, code: str | None = None) -> str:
    """The run failed with exit 2 and exactly one `error[...]` line on stderr."""
    assert result.exit_code == 2, (result.output, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error[{code}]" if code else "error["), lines[0]
    assert "Traceback" not in result.output + result.stderr
    return lines[0]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh `ordinance init` project as the working directory."""
    monkeypatch.delenv("ORDINANCE_DB", raising=False)
    monkeypatch.delenv("ORDINANCE_POLICY", raising=False)
    monkeypatch.chdir(tmp_path)
    result = run("init", ".")
    assert result.exit_code == 0, result.output
    return tmp_path


def revision(path: Path) -> int:
    with open_store(str(path / "ordinance.db")) as store:
        return store.revision()


# ---------------------------------------------------------------- init, test


def test_init_creates_a_policy_that_passes_its_tests_and_an_empty_store(project: Path) -> None:
    assert "continuity" in (project / "policy.rules").read_text()
    assert revision(project) == 0
    result = run("test")
    assert result.exit_code == 0, result.output
    assert "PASS" in result.output and result.output.strip().endswith("1 passed, 0 failed")


def test_init_refuses_to_overwrite_without_force(project: Path) -> None:
    (project / "policy.rules").write_text("// mine\n")
    one_error_line(run("init", "."), "exists")
    assert (project / "policy.rules").read_text() == "// mine\n"
    assert run("init", ".", "--force").exit_code == 0
    assert "continuity" in (project / "policy.rules").read_text()


def test_init_into_a_new_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = run("init", "sub/proj")
    assert result.exit_code == 0
    assert (tmp_path / "sub/proj/policy.rules").is_file()
    assert (tmp_path / "sub/proj/ordinance.db").is_file()
    assert "cd sub/proj" in result.output


def test_test_reports_failures_with_explanations(project: Path) -> None:
    with (project / "policy.rules").open("a") as fh:
        fh.write(
            'test "wrongly expects a permit" {\n'
            '  request("a1", "deploy", "prod", "bob", 1). request_scope("a1", "prod").\n'
            "  now 2026-12-24T12:00:00Z.\n"
            '  expect permit("a1").\n'
            "}\n"
            'test "wrongly expects no freeze" {\n'
            '  freeze("prod", 2026-12-27T00:00:00Z).\n'
            '  request("a1", "deploy", "prod", "bob", 1). request_scope("a1", "prod").\n'
            "  now 2026-12-24T12:00:00Z.\n"
            '  expect not forbid("a1", "frozen", "prod").\n'
            "}\n"
        )
    result = run("test")
    assert result.exit_code == 1
    out = result.output
    assert out.count("FAIL") == 2 and out.count("PASS") == 1
    assert out.strip().endswith("1 passed, 2 failed")
    # why-not for the missing permit, why for the unwanted forbid
    assert 'expect permit("a1"): it does not hold' in out
    assert 'would hold with current_grant("bob", "prod", 1)' in out
    assert 'expect not forbid("a1", "frozen", "prod"): it holds' in out
    assert 'freeze("prod", ' in out and "fact" in out


def test_test_reports_a_broken_invariant(project: Path) -> None:
    (project / "inv.rules").write_text(
        '.decl p(x: symbol)\n.invariant "p is empty" :- p(X).\ntest "p gets a fact" {\n  p("a").\n  expect p("a").\n}\n'
    )
    result = run("test", "inv.rules")
    assert result.exit_code == 1
    assert 'invariant "p is empty" is broken: X = "a"' in result.output
    assert 'p("a")  fact  (test fact)' in result.output
    assert "invariant_0_broken" not in result.output  # internal names never show


def test_test_all_runs_the_stdlib_blocks_too(project: Path) -> None:
    mine = run("test")
    everything = run("test", "--all")
    assert everything.exit_code == 0, everything.output
    assert "<stdlib>/" in everything.output and "<stdlib>/" not in mine.output
    assert everything.output.count("PASS") > mine.output.count("PASS") + 20


# ---------------------------------------------------------------- assert, load, query


def test_assert_then_query(project: Path) -> None:
    result = run("assert", GRANT, FREEZE, "--source", "owner", "--author", "jw")
    assert result.exit_code == 0, result.stderr
    assert "revision 2" in result.output
    table = run("query", "grant(A, S, E)")
    assert table.exit_code == 0 and "alice" in table.output and "1 answer" in table.output
    times = run("query", "freeze(S, Until)")
    assert "2026-12-27T00:00:00Z" in times.output  # times shown as instants
    answers = json.loads(run("query", 'freeze("prod", U)', "--json").output)
    assert answers == [{"U": "2026-12-27T00:00:00Z"}]  # typed: a time is an ISO-8601 string
    assert run("query", 'grant("alice", "prod", 1)').output.strip() == "yes"
    nothing = run("query", 'grant("bob", S, E)')
    assert nothing.exit_code == 1 and "no answers" in nothing.output
    assert run("query", "grant(A, A, E)").exit_code == 1  # a repeated variable must agree


def test_assert_records_source_and_author(project: Path) -> None:
    run("assert", GRANT, "--source", "owner", "--author", "jw")
    with open_store(str(project / "ordinance.db")) as store:
        [event] = store.events()
    assert (event.kind, event.relation, event.args, event.source, event.author) == (
        "assert",
        "grant",
        ("alice", "prod", 1),
        "owner",
        "jw",
    )


def test_assert_logs_special_relations_under_their_kind(project: Path) -> None:
    result = run("assert", 'supersedes("c2", "c1").', 'receipt("x", "intent", "w", 2026-01-01T00:00:00Z).')
    assert result.exit_code == 0, result.stderr
    with open_store(str(project / "ordinance.db")) as store:
        assert [e.kind for e in store.events()] == ["supersede", "receipt"]


@pytest.mark.parametrize(
    "facts,code",
    [
        (['nope("x").'], "unknown_relation"),
        (['grant("alice", "prod").'], "arity_mismatch"),
        (['grant("alice", "prod", "one").'], "type_mismatch"),
        (['grant(X, "prod", 1).'], "not_ground"),
        (["permit(A) :- request(A, _, _, _, _)."], "not_a_fact"),
        (['grant("alice", "prod", 1'], "syntax"),
        ([GRANT, 'nope("x").'], "unknown_relation"),  # nothing of the batch is written
        ([GRANT, REQUEST], "request_fact"),  # requests live in the gate's overlay only
    ],
)
def test_assert_validates_before_writing(project: Path, facts: list[str], code: str) -> None:
    one_error_line(run("assert", *facts), code)
    assert revision(project) == 0


def test_load_fact_lines_with_iso_times(project: Path) -> None:
    lines = [
        {"relation": "grant", "args": ["alice", "prod", 1], "author": "jw"},
        {"relation": "freeze", "args": ["prod", "2026-12-27T00:00:00Z"]},
    ]
    (project / "facts.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n\n")
    result = run("load", "facts.jsonl", "--source", "import")
    assert result.exit_code == 0, result.stderr
    assert "loaded 2 events" in result.output
    with open_store(str(project / "ordinance.db")) as store:
        events = store.events()
    assert [(e.args, e.source, e.author) for e in events][0] == (("alice", "prod", 1), "import", "jw")
    assert events[1].args == ("prod", 1798329600)


def test_load_refuses_a_bad_file_whole(project: Path) -> None:
    good = json.dumps({"relation": "grant", "args": ["alice", "prod", 1]})
    bad = json.dumps({"relation": "grant", "args": ["alice", "prod"]})
    line = one_error_line(run("load", "-", input=f"{good}\n{bad}\n"), "arity_mismatch")
    assert "<stdin>:2:" in line
    one_error_line(run("load", "-", input=f"{good}\n{{not json\n"), "bad_jsonl")
    assert revision(project) == 0


def test_load_an_export_round_trips(project: Path) -> None:
    run("assert", GRANT, FREEZE, "--author", "jw")
    run("check", REQUEST, "--now", NOW)
    buffer = io.StringIO()
    with open_store(str(project / "ordinance.db")) as store:
        export_jsonl(store, buffer)
        original = [e.to_json() for e in store.events()]
    result = run("load", "--decisions", "-", "--db", str(project / "copy.db"), input=buffer.getvalue())
    assert result.exit_code == 0, result.stderr
    with open_store(str(project / "copy.db")) as copy:
        assert [e.to_json() for e in copy.events()] == original


# ---------------------------------------------------------------- check, why, why-not


def test_check_allowed_and_blocked_exit_codes(project: Path) -> None:
    run("assert", GRANT)
    allowed = run("check", REQUEST, "--now", NOW)
    assert allowed.exit_code == 0 and allowed.output.startswith("ALLOWED a1")
    run("assert", FREEZE)
    blocked = run("check", REQUEST, "--now", NOW)
    assert blocked.exit_code == 1
    assert blocked.output.startswith("DENIED a1") and "forbid frozen prod" in blocked.output
    assert "freeze(" in blocked.output and "this request" in blocked.output  # the proof, annotated
    nobody = run("check", 'request("b1", "deploy", "prod", "bob", 1).', "--now", NOW)
    assert nobody.exit_code == 1 and "no-grant" in nobody.output


def test_check_json_has_exactly_the_documented_shape(project: Path) -> None:
    run("assert", GRANT, FREEZE)
    result = run("check", "--json", REQUEST, "--now", NOW)
    assert result.exit_code == 1
    data = json.loads(result.output)
    fields = {"request", "allowed", "reasons", "flags", "errors", "revision", "policy_hash", "now", "clock", "seq"}
    assert set(data) == fields and data["clock"] == "owner"  # the CLI is the local owner: its `--now` decides
    assert data["allowed"] is False and data["now"] == NOW and data["revision"] == 2
    assert [set(r) for r in data["reasons"]] == [{"code", "detail", "kind", "proof", "unblock"}]
    assert (data["reasons"][0]["code"], data["reasons"][0]["detail"]) == ("frozen", "prod")
    assert data["reasons"][0]["proof"]["relation"] == "forbid"


def test_check_request_side_facts_and_their_errors(project: Path) -> None:
    run("assert", 'grant("alice", "deploy", 1).', 'member("job", "deploy").')
    scoped = run("check", 'request("a1", "write", "job", "alice", 1).', 'request_scope("a1", "deploy")', "--now", NOW)
    assert scoped.exit_code == 0, scoped.output
    one_error_line(run("check", REQUEST, REQUEST.replace("a1", "a2")), "gate")
    one_error_line(run("check", REQUEST, GRANT), "gate")
    one_error_line(run("check", REQUEST, 'request_uses("zz", "c1").'), "gate")
    one_error_line(run("check", 'request_uses("a1", "c1").'), "gate")
    one_error_line(run("check", REQUEST, "--now", "yesterday"), "usage")
    one_error_line(run("check"), "usage")


def test_check_logs_each_decision(project: Path) -> None:
    run("assert", GRANT)
    run("check", REQUEST, "--now", NOW)
    run("check", 'request("b1", "deploy", "prod", "bob", 1).', "--now", NOW)
    log = json.loads(run("log", "--json").output)
    assert [(d["request"]["id"], d["allowed"]) for d in log] == [("a1", True), ("b1", False)]
    table = run("log")
    assert table.exit_code == 0
    assert table.output.index("a1") < table.output.index("b1") and "DENIED" in table.output
    assert [d["request"]["id"] for d in json.loads(run("log", "--json", "--last", "1").output)] == ["b1"]


def test_now_accepts_iso_8601_with_an_offset_or_a_date(project: Path) -> None:
    run("assert", GRANT, FREEZE)
    z = json.loads(run("check", "--json", REQUEST, "--now", NOW).output)
    offset = json.loads(run("check", "--json", REQUEST, "--now", "2026-12-24T13:00:00+01:00").output)
    assert z["now"] == offset["now"] == NOW
    later = json.loads(run("check", "--json", REQUEST, "--now", "2026-12-28").output)
    assert later["now"] == "2026-12-28T00:00:00Z" and later["allowed"] is True


def test_why_and_why_not(project: Path) -> None:
    run("assert", GRANT, FREEZE, "--author", "jw")
    given = ("--given", REQUEST, "--now", NOW)
    tree = run("why", 'forbid("a1", "frozen", "prod")', *given)
    assert tree.exit_code == 0, tree.output + tree.stderr
    assert "by rule" in tree.output and "by jw" in tree.output and "this request" in tree.output
    data = json.loads(run("why", 'forbid("a1", "frozen", "prod")', "--json", *given).output)
    assert data["relation"] == "forbid" and data["children"]
    dot = run("why", 'forbid("a1", "frozen", "prod")', "--dot", *given).output
    assert dot.startswith("digraph") and "->" in dot
    missing = run("why", 'permit("b1")', "--given", 'request("b1", "deploy", "prod", "bob", 1).')
    assert missing.exit_code == 1 and "why-not" in missing.output
    not_ = run("why-not", 'permit("b1")', "--given", 'request("b1", "deploy", "prod", "bob", 1).')
    assert not_.exit_code == 0 and 'would hold with current_grant("bob", "prod", 1)' in not_.output
    assert json.loads(run("why-not", 'permit("b1")', "--json").output)["holds"] is False
    assert run("why-not", 'grant("alice", "prod", 1)').exit_code == 1  # it holds
    one_error_line(run("why", "grant(A, S, E)"), "not_ground")


def test_why_given_a_stored_fact_beside_a_request(project: Path) -> None:
    """--given facts of stored relations join the request in the gate's overlay:
    the proof shows them, the store does not keep them."""
    run("assert", FREEZE)
    asked = ("--given", 'request("b1", "deploy", "prod", "bob", 1).', "--now", NOW)
    assert run("why", 'permit("b1")', *asked).exit_code == 1  # bob has no grant
    tree = run("why", 'permit("b1")', *asked, "--given", 'grant("bob", "prod", 1).')
    assert tree.exit_code == 0, tree.output + tree.stderr
    assert 'grant("bob", "prod", 1)' in tree.output and "this request" in tree.output
    assert run("why", 'permit("b1")', *asked).exit_code == 1  # nothing was stored
    # a policy without a gate (no permit, no forbid) is explained the same way
    (project / "plain.rules").write_text(
        ".decl edge(a: symbol, b: symbol)\n.decl path(a: symbol, b: symbol)\n"
        "path(A, B) :- edge(A, B).\npath(A, C) :- path(A, B), edge(B, C).\n"
    )
    assert run("init", "plain").exit_code == 0
    plain = ("--policy", "plain.rules", "--db", str(project / "plain" / "ordinance.db"))
    hop = run("why", 'path("x", "z")', *plain, "--given", 'edge("x", "y").', "--given", 'edge("y", "z").')
    assert hop.exit_code == 0, hop.output + hop.stderr
    assert 'edge("y", "z")' in hop.output and "by rule" in hop.output


# ---------------------------------------------------------------- replay


def test_replay_same_policy_agrees_and_a_changed_policy_differs(project: Path) -> None:
    run("assert", GRANT, FREEZE)
    run("check", REQUEST, "--now", NOW)
    run("assert", 'grant("bob", "prod", 1).')
    run("check", 'request("b1", "deploy", "prod", "bob", 1).', "--now", "2026-12-28T00:00:00Z")
    same = run("replay")
    assert same.exit_code == 0 and "2 decisions re-checked, 0 differ" in same.output
    text = (project / "policy.rules").read_text()
    (project / "thaw.rules").write_text(text.replace('forbid(A, "frozen", S)', 'flag(A, "frozen", S)'))
    changed = run("replay", "--policy", "thaw.rules")
    assert changed.exit_code == 1
    assert "1 differ" in changed.output and "denied (frozen)" in changed.output
    rows = json.loads(run("replay", "--json", "--policy", "thaw.rules").output)
    assert [(r["request"], r["same"]) for r in rows] == [("a1", False), ("b1", True)]
    # against the store before bob's grant, bob's request has no grant
    early = json.loads(run("replay", "--json", "--revision", "2").output)
    assert [(r["request"], r["same"], r["now"]["codes"]) for r in early][1] == ("b1", False, ["no-grant"])
    one_error_line(run("replay", "--revision", "99"), "unknown_revision")


# ---------------------------------------------------------------- environment, errors


def test_env_vars_choose_the_store_and_the_policy(
    project: Path, tmp_path_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    monkeypatch.chdir(elsewhere)
    env = {"ORDINANCE_DB": str(project / "ordinance.db"), "ORDINANCE_POLICY": str(project / "policy.rules")}
    assert run("assert", GRANT, env=env).exit_code == 0
    assert revision(project) == 1
    assert run("check", REQUEST, "--now", NOW, env=env).exit_code == 0
    assert not (elsewhere / "ordinance.db").exists()
    one_error_line(run("check", REQUEST), "no_policy")  # no ./policy.rules here


def test_a_postgresql_url_in_ordinance_db(project: Path, pg_url: str) -> None:
    env = {"ORDINANCE_DB": pg_url}
    assert run("assert", GRANT, FREEZE, env=env).exit_code == 0
    blocked = run("check", "--json", REQUEST, "--now", NOW, env=env)
    assert blocked.exit_code == 1 and json.loads(blocked.output)["revision"] == 2
    assert [d["allowed"] for d in json.loads(run("log", "--json", env=env).output)] == [False]
    assert revision(project) == 0  # the local SQLite store was not used


def test_a_policy_with_errors_is_one_line(project: Path) -> None:
    (project / "policy.rules").write_text('.include "continuity"\nok(X) :- grant(Y, _, _).\n')
    line = one_error_line(run("check", REQUEST))
    assert "policy.rules:2" in line


@pytest.mark.parametrize(
    "args",
    [
        ["assert", "grant(("],
        ["load", "missing.jsonl"],
        ["query", "current(C"],
        ["query", "nope(X)"],
        ["query", "current(C), superseded(C)"],
        ["check", "request(1)."],
        ["why", 'nope("x")'],
        ["why-not", "permit("],
        ["test", "missing.rules"],
        ["log", "--last", "0"],
        ["replay", "--policy", "missing.rules"],
        ["init", "policy.rules"],
        ["demo", "--dir", "nowhere"],
        ["demo", "no-such-scenario"],
        ["no-such-command"],
    ],
)
def test_bad_input_is_one_error_line(project: Path, args: list[str]) -> None:
    one_error_line(run(*args))


def test_an_unreachable_store_is_one_line(project: Path) -> None:
    one_error_line(run("log", "--db", "mysql://nowhere/db"), "unknown_backend")
    missing = str(project / "no" / "such" / "dir.db")
    assert missing in one_error_line(run("log", "--db", missing), "no_store")
    assert missing in one_error_line(run("assert", GRANT, "--db", missing), "store_failed")


def test_main_never_raises(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from ordinance import cli as module

    monkeypatch.setattr("sys.argv", ["ordinance", "query"])
    with pytest.raises(SystemExit) as exit_:
        module.main()
    assert exit_.value.code == 2
    assert capsys.readouterr().err.startswith("error[usage]: missing argument")


# ---------------------------------------------------------------- demo


def test_demo_plays_the_seed_scenarios_with_explanations() -> None:
    result = run("demo", "arc_c", "incident_unpushed")
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.count("== ") == 2 and "UNEXPECTED" not in out
    assert "DENIED" in out and "ALLOWED" in out and "by rule" in out
    assert out.strip().endswith("2 of 2 scenarios behaved as their story says")
    brief = run("demo", "--brief", "arc_c").output
    assert "by rule" not in brief and "DENIED" in brief
    assert "\\u000a" not in out  # the story's line breaks are wrapped as spaces, not escaped


def test_demo_finds_every_fixture() -> None:
    assert len(list(scenario_dir().glob("*.toml"))) >= 8


def test_demo_reports_a_scenario_that_misbehaves(tmp_path: Path) -> None:
    source = next(scenario_dir().glob("arc_c*.toml")).read_text()
    (tmp_path / "broken.toml").write_text(source.replace("allowed = false", "allowed = true", 1))
    result = run("demo", "--dir", str(tmp_path))
    assert result.exit_code == 1
    assert "UNEXPECTED" in result.output and "0 of 1 scenarios" in result.output


def test_a_bare_command_shows_the_help() -> None:
    result = run()
    assert result.exit_code == 0
    assert "Commands:" in result.output and "demo" in result.output


def test_explanations_show_times_by_declared_type_in_text_and_json(project: Path) -> None:
    run("assert", GRANT, FREEZE)
    until = 'freeze("prod", 2026-12-27T00:00:00Z)'
    tree = run("why", 'forbid("a1", "frozen", "prod")', "--given", REQUEST, "--now", NOW).output
    assert f"{until}  fact" in tree, tree
    assert "Until=2026-12-27T00:00:00Z" in tree and "$now < 2026-12-27T00:00:00Z  holds" in tree, tree
    assert "1798329600" not in tree
    check = run("check", REQUEST, "--now", NOW).output
    assert f"{until}  fact" in check and "$now < 2026-12-27T00:00:00Z  holds" in check, check
    later = run("why-not", 'forbid("a1", "frozen", "prod")', "--given", REQUEST, "--now", "2026-12-28").output
    assert "fails at $now < 2026-12-27T00:00:00Z: is false" in later, later
    data = json.loads(run("why", 'forbid("a1", "frozen", "prod")', "--json", "--given", REQUEST, "--now", NOW).output)
    assert data["bindings"]["Until"] == "2026-12-27T00:00:00Z"
    assert "1798329600" not in json.dumps(data)

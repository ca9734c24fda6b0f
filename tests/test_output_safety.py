"""Output a crafted string cannot hijack: control characters, ANSI/OSC
sequences and bidi overrides in anything a user or an agent wrote (ids,
agents, authors, sources, test and invariant names, include paths, file
names) come out escaped in every text output, and rich markup in data is
printed as it is, never interpreted."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from ordinance.cli import cli
from ordinance.values import escape, format_value, quote, show_value

# an OSC 8 hyperlink, an ANSI colour, a C1 CSI, a bidi override, a bell
EVIL = "\x1b]8;;http://evil.example\x07link\x1b]8;;\x07\x1b[31mred\x9b2J\u202eevil\x07"
EVIL_LITERAL = quote(EVIL)  # as the rule language writes it: `"\u001b]8;;..."`
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
NOW = "2026-12-24T12:00:00Z"


def run(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def safe(result: Result) -> str:
    """The whole output (stdout and stderr) has no raw control character."""
    text = result.output + (result.stderr or "")
    assert not UNSAFE.search(text), repr(text)
    assert "Traceback" not in text
    return text


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("ORDINANCE_DB", raising=False)
    monkeypatch.delenv("ORDINANCE_POLICY", raising=False)
    monkeypatch.chdir(tmp_path)
    assert run("init", ".").exit_code == 0
    return tmp_path


def test_the_value_formatters_escape_every_control_character() -> None:
    assert not UNSAFE.search(escape(EVIL)) and "\\u001b]8;;" in escape(EVIL)
    assert not UNSAFE.search(quote(EVIL)) and quote('a"b\\') == '"a\\"b\\\\"'
    assert format_value(None) == "_" and show_value(None) == "_"
    assert format_value(86400 * 2, "duration") == "2d" and show_value(0, "time") == "1970-01-01T00:00:00Z"
    assert show_value("[/x]") == "[/x]"


def test_check_why_and_why_not_escape_request_and_store_strings(project: Path) -> None:
    request = f'request({EVIL_LITERAL}, "deploy", "prod", {EVIL_LITERAL}, 1).'
    assert (
        run(
            "assert",
            'grant("alice", "prod", 1).',
            'freeze("prod", 2026-12-27T00:00:00Z).',
            "--source",
            EVIL,
            "--author",
            EVIL,
        ).exit_code
        == 0
    )
    checked = run("check", request, "--now", NOW)
    assert checked.exit_code == 1
    text = safe(checked)
    assert "DENIED \\u001b]8;;http://evil.example\\u0007link" in text
    assert json.loads(run("check", "--json", request, "--now", NOW).output)["request"]["id"] == EVIL
    why = run("why", f'forbid({EVIL_LITERAL}, "frozen", "prod")', "--given", request, "--now", NOW)
    assert why.exit_code == 0 and "\\u001b" in safe(why)
    why_not = run("why-not", f"permit({EVIL_LITERAL})", "--given", request, "--now", NOW)
    assert why_not.exit_code == 0 and "\\u001b" in safe(why_not)
    as_author = run("check", 'request("a2", "deploy", "prod", "alice", 1).', "--now", NOW)
    assert "by \\u001b]8;;" in safe(as_author)  # the grant's author, in its annotation
    assert "does not hold" in safe(run("why", f"permit({EVIL_LITERAL})", "--given", request))


def test_log_prints_markup_and_escapes_as_data(project: Path) -> None:
    for rid in ("[/x]", "[bold red]loud[/]", EVIL):
        run("check", f'request({quote(rid)}, "deploy", "prod", "alice", 1).', "--now", NOW)
    log = run("log")
    assert log.exit_code == 0, log.output
    text = safe(log)
    assert "[/x]" in text and "[bold red]loud[/]" in text and "\\u001b" in text
    rows = json.loads(run("log", "--json").output)
    assert [r["request"]["id"] for r in rows] == ["[/x]", "[bold red]loud[/]", EVIL]
    assert all(r["now"] == NOW for r in rows)  # typed, as `check --json` prints it
    replay = run("replay")
    assert replay.exit_code == 0 and "3 decisions re-checked, 0 differ" in safe(replay)


def test_test_blocks_and_invariants_with_crafted_names(project: Path) -> None:
    (project / "t.rules").write_text(
        ".decl p(x: symbol)\n"
        f".invariant {EVIL_LITERAL} :- p(X).\n"
        f'test {EVIL_LITERAL} {{\n  p({EVIL_LITERAL}).\n  expect p("a").\n}}\n'
    )
    result = run("test", "t.rules")
    assert result.exit_code == 1
    text = safe(result)
    assert "FAIL  t.rules:3  \\u001b]8;;" in text and 'invariant "\\u001b]8;;' in text


def test_lint_escapes_include_paths_and_file_names(project: Path) -> None:
    (project / "inc.rules").write_text(f".include {EVIL_LITERAL}\n")
    result = run("lint", "inc.rules")
    assert result.exit_code == 1 and "\\u001b" in safe(result)
    name = "bad\x1b[2J.rules"
    (project / name).write_text("p(X) :- .\n")
    bad = run("lint", name)
    assert bad.exit_code == 1 and "bad\\u001b[2J.rules" in safe(bad)
    missing = run("lint", "gone\x1b[2J.rules")
    assert missing.exit_code == 2 and "gone\\u001b[2J.rules" in safe(missing)
    errors = run("check", 'request("a", "k", "t", "x", 1).', "--policy", "no\x1b[2J.rules")
    assert errors.exit_code == 2 and "no\\u001b[2J.rules" in safe(errors)


def test_demo_escapes_scenario_names_and_requests(tmp_path: Path) -> None:
    toml_evil = json.dumps(EVIL)  # a TOML basic string with \u escapes
    (tmp_path / "evil.toml").write_text(
        f"name = {toml_evil}\nstory = {toml_evil}\n\n"
        '[[step]]\nfacts = [["grant", "alice", "prod", 1]]\n\n'
        f"[[check]]\nname = {toml_evil}\nnow = 2026-08-14T21:30:00Z\n"
        f'request = {{ id = {toml_evil}, kind = "deploy", target = "prod", agent = {toml_evil}, epoch = 1 }}\n'
        'allowed = false\ncodes = ["no-grant"]\n'
    )
    result = run("demo", "--dir", str(tmp_path))
    text = safe(result)
    assert result.exit_code == 0, text
    assert "== \\u001b]8;;" in text and "DENIED \\u001b]8;;" in text


def test_json_output_and_the_projections_escape_c1_controls_and_bidi_overrides(project: Path) -> None:
    # JSON escapes what is below U+0020 by itself; DEL, the C1 controls (U+009B is a CSI)
    # and the bidi overrides it leaves raw, so every JSON text and projection escapes them
    assert run("assert", f"open_item({EVIL_LITERAL}, {EVIL_LITERAL}).", "--author", EVIL).exit_code == 0
    run("check", f'request({EVIL_LITERAL}, "deploy", "prod", "alice", 1).', "--now", NOW)
    for args in (("records",), ("rehydrate",), ("state", "--json"), ("query", "--json", "open_item(A, B)")):
        result = run(*args)
        assert result.exit_code == 0, (args, result.output)
        assert "\\u009b" in safe(result), args
    rows = json.loads(safe(run("log", "--json")))
    assert rows[0]["request"]["id"] == EVIL  # the escapes are JSON's: the data reads back the same
    exported = safe(run("export"))
    assert [json.loads(line)["args"][0] for line in exported.splitlines()[:1]] == [EVIL]

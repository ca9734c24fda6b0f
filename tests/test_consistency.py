"""What a user meets is consistent: every bad line of a file is reported,
under the file's name; counts agree with their noun; a bound is called a
bound; `--now` takes the times `export` writes; `state --json` names the
audience as the text does; a yes-or-no `query --json` answers `holds` as the
server does; an error's prefix is printed once; MCP tools refuse arguments
they do not take and report the package's version; and `assert`, `check` and
`query` suggest the relation a misspelt one meant, as `lint` does."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from mcp import Client

from ordinance import __version__
from ordinance.cli import cli
from ordinance.cli.init import CLAUDE_CODE_POLICY
from ordinance.facts import open_store, schema_of
from ordinance.rules import compile_text
from ordinance.serve import Principal, Service
from ordinance.hosts import claude_code
from ordinance.hosts.flow import handle
from ordinance.serve.mcp import create_mcp
from test_json_output import valid

NOW = "2026-12-24T12:00:00Z"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ORDINANCE_DB", raising=False)
    monkeypatch.delenv("ORDINANCE_POLICY", raising=False)
    assert CliRunner().invoke(cli, ["init", "."]).exit_code == 0
    return tmp_path


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def test_load_reports_every_bad_line_under_the_files_name(project: Path) -> None:
    (project / "two.jsonl").write_text('{"bad": 1}\n{"also": 2}\n')
    result = run("load", "two.jsonl")
    assert result.exit_code == 2 and "more)" not in result.output
    lines = result.output.splitlines()
    assert [line.split(": ", 2)[:2] for line in lines] == [
        ["error[bad_jsonl]", "two.jsonl:1"],
        ["error[bad_jsonl]", "two.jsonl:2"],
    ]


def test_bad_seq_names_the_file_and_counts_agree_with_their_noun(project: Path) -> None:
    assert run("assert", 'grant("alice", "prod", 1).').exit_code == 0
    exported = run("export", "backup.jsonl")
    assert "exported 1 event to backup.jsonl" in exported.output
    again = run("load", "backup.jsonl")  # the same seq once more: it does not follow revision 1
    assert again.exit_code == 2 and "error[bad_seq]: backup.jsonl:1: seq 1 does not follow revision 1" in again.output
    (project / "one.jsonl").write_text('{"relation": "grant", "args": ["bob", "prod", 1]}\n')
    assert "loaded 1 event; store at revision 2" in run("load", "one.jsonl").output


def test_a_bound_too_small_is_bad_bound(project: Path) -> None:
    result = run("rehydrate", "--bound", "10", "--now", NOW)
    assert result.exit_code == 2 and result.output.startswith("error[bad_bound]: a bound of 10 bytes")
    assert run("state", "--cap", "10", "--now", NOW).output.startswith("error[bad_cap]:")  # a cap stays a cap


def test_export_since_documents_that_it_starts_after_the_revision(project: Path) -> None:
    for fact in ('grant("a", "s", 1).', 'grant("b", "s", 1).', 'grant("c", "s", 1).'):
        run("assert", fact)
    lines = run("export", "--since", "2").output.splitlines()
    assert [json.loads(line)["seq"] for line in lines] == [3]
    assert "`--since 3` starts at revision 4" in " ".join(run("export", "--help").output.split())


def test_now_takes_the_seconds_export_writes(project: Path) -> None:
    run("assert", 'freeze("prod", 2026-12-27T00:00:00Z).')
    [line] = run("export").output.splitlines()
    written = json.loads(line)["args"][1]  # a time argument, as seconds since the epoch
    assert isinstance(written, int)
    at = run("query", 'freeze("prod", U)', "--now", str(written))
    iso = run("query", 'freeze("prod", U)', "--now", "2026-12-27T00:00:00Z")
    assert at.exit_code == 0 and at.output == iso.output
    assert run("query", 'freeze("prod", U)', "--now", "9" * 13).output.startswith("error[usage]:")


def test_state_json_names_the_audience_as_the_text_does(project: Path) -> None:
    text = run("state", "--now", NOW).output
    data = json.loads(run("state", "--json", "--now", NOW).output)
    assert "audience all" in text.splitlines()[0] and data["audience"] == "all"


def test_a_ground_query_answers_holds_as_the_server_does(project: Path) -> None:
    run("assert", 'grant("alice", "prod", 1).')
    yes = run("query", "--json", 'grant("alice", "prod", 1)', "--now", NOW)
    no = run("query", "--json", 'grant("bob", "prod", 1)', "--now", NOW)
    assert (json.loads(yes.output), yes.exit_code) == ({"holds": True}, 0)
    valid("holds", json.loads(yes.output))  # the shape the package's JSON Schema names
    assert (json.loads(no.output), no.exit_code) == ({"holds": False}, 1)
    with open_store(str(project / "ordinance.db")) as store:
        from ordinance.cli.common import load_policy

        service = Service(load_policy("policy.rules"), store)
        served = service.query(Principal("jw", owner=True), {"pattern": 'grant("alice", "prod", 1)', "now": NOW})
    assert served["holds"] is True


@pytest.mark.parametrize("relation", ["grnt", "reqest_scope"])
def test_a_misspelt_relation_gets_a_suggestion_everywhere(project: Path, relation: str) -> None:
    meant = {"grnt": "grant", "reqest_scope": "request_scope"}[relation]
    fact = f'{relation}("a1", "prod", 1).' if relation == "grnt" else f'{relation}("a1", "prod").'
    request = 'request("a1", "deploy", "prod", "alice", 1).'
    for args in (
        ["assert", fact],
        ["query", fact.rstrip(".")],
        ["check", request, fact, "--now", NOW],
    ):
        result = run(*args)
        assert result.exit_code == 2, (args, result.output)
        assert f"help: did you mean `{meant}`" in result.output, (args, result.output)
        assert result.output.count("error[unknown_relation]") == 1


def test_an_error_prefix_is_printed_once() -> None:
    service = Service(
        compile_text(CLAUDE_CODE_POLICY), open_store(":memory:", schema_of(compile_text(CLAUDE_CODE_POLICY)))
    )
    out = handle(claude_code, service, Principal("claude-code"), {"hook_event_name": "PreToolUse", "tool_input": {}})
    reason = json.dumps(out)
    assert reason.count("error[bad_hook_payload]") == 1, reason


def test_mcp_tools_refuse_unknown_arguments_and_report_the_version(tmp_path: Path) -> None:
    policy = compile_text(CLAUDE_CODE_POLICY)
    with open_store(str(tmp_path / "m.db"), schema_of(policy)) as store:
        server = create_mcp(Service(policy, store), Principal("claude-code"))

        async def go() -> tuple[Any, Any, Any]:
            async with Client(server) as c:
                request = {"id": "m1", "kind": "Bash", "target": "/p", "epoch": 1}
                wrong = await c.call_tool("check", {"given": request})
                right = await c.call_tool("check", {"request": request})
                tools = (await c.list_tools()).tools
                return c.server_info.version, (wrong, right), tools  # type: ignore[union-attr]

        version, (wrong, right), tools = asyncio.run(go())
    assert version == __version__ != ""
    assert wrong.is_error and "given" in wrong.content[0].text
    assert not right.is_error
    assert all(t.input_schema.get("additionalProperties") is False for t in tools)
    assert "rehydrate" in {t.name for t in tools}
    assert "rehydrate" in CliRunner().invoke(cli, ["mcp", "--help"]).output
    assert "rehydrate" in (cli.commands["mcp"].short_help or "")  # the line `ordinance --help` shows

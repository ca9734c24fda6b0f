"""`ordinance audit`: Claude Code transcripts replayed through a policy, read only."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from ordinance.audit import read_calls
from ordinance.audit.transcripts import HOOK_REFUSED, HOST_REFUSED
from ordinance.cli import cli
from ordinance.cli.init import CLAUDE_CODE_POLICY
from ordinance.facts import Event, import_jsonl, open_store, schema_of
from ordinance.rules import compile_text

PROJECT = "/home/me/p"
POLICY = compile_text(CLAUDE_CODE_POLICY)


def at(minute: int) -> str:
    return f"2026-06-01T10:{minute:02d}:00.123Z"


def use(n: int, tool: str, given: dict[str, Any], minute: int, session: str = "s1") -> dict[str, Any]:
    return {
        "type": "assistant",
        "sessionId": session,
        "cwd": PROJECT,
        "timestamp": at(minute),
        "message": {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": f"toolu_{n}", "name": tool, "input": given}],
        },
    }


def result(n: int, minute: int, *, error: bool = False, **extra: Any) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": "ok", "is_error": error}
    return {"type": "user", "timestamp": at(minute), "message": {"role": "user", "content": [block]}, **extra}


SESSION = [
    {"type": "summary", "summary": "a session"},  # a record of another type: skipped
    use(1, "Bash", {"command": "cd sub && git push -f origin main"}, 1),
    result(1, 1),  # it ran
    use(2, "Write", {"file_path": f"{PROJECT}/.env", "content": "K=1"}, 2),
    result(2, 2, error=True, toolUseResult="denied", permissionDecision={"decision": "deny", "source": "user"}),
    use(3, "Write", {"file_path": "/etc/passwd", "content": "x"}, 3),
    result(3, 3, error=True, toolDenialKind="hook", permissionDecision={"decision": "deny", "source": "hook"}),
    use(4, "Read", {"file_path": f"{PROJECT}/README.md"}, 4),
    result(4, 4),
    use(5, "Bash", {"command": "false"}, 5),
    result(5, 5, error=True, toolUseResult="Error: exit 1"),
    use(6, "Bash", {"command": "ls"}, 6),  # no result: the session ended
]
SUBAGENT = [
    use(7, "Bash", {"command": "git push origin main"}, 7, session="s1"),
    result(7, 7),
    use(1, "Bash", {"command": "cd sub && git push -f origin main"}, 1),  # the same call again: kept once
]


def write(path: Path, records: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Claude Code project (its policy and store) and its transcripts under `projects/`."""
    monkeypatch.chdir(tmp_path)
    for var in ("ORDINANCE_POLICY", "ORDINANCE_DB"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "policy.rules").write_text(CLAUDE_CODE_POLICY)
    events = [
        Event("assert", "grant", ("claude-code", PROJECT, 1), "init", "jw", seq=1, time="2026-06-01T09:00:00.000000Z"),
        # the owner stops everything at 10:30, after the session
        Event("assert", "stop", ("everything", 0), "cli", "jw", seq=2, time="2026-06-01T10:30:00.000000Z"),
    ]
    with open_store(str(tmp_path / "ordinance.db"), schema_of(POLICY)) as store:
        import_jsonl(store, io.StringIO("".join(json.dumps(e.to_json()) + "\n" for e in events)))
    write(tmp_path / "projects" / "p" / "s1.jsonl", SESSION)
    write(tmp_path / "projects" / "p" / "s1" / "subagents" / "agent-a.jsonl", SUBAGENT)
    return tmp_path


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def rows(result: Result) -> dict[str, dict[str, Any]]:
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert "summary" in lines[0]
    return {r["id"]: r for r in lines[1:]}


def test_every_call_once_with_what_the_policy_says_and_what_happened(project: Path) -> None:
    got = rows(run("audit", "projects", "--jsonl"))
    assert sorted(got) == [f"toolu_{n}" for n in range(1, 8)]  # the subagent's call too, the repeat once
    answers = {k: (r["answer"], [x["code"] for x in r["reasons"] + r["flags"]], r["happened"]) for k, r in got.items()}
    assert answers == {
        "toolu_1": ("deny", ["force-push-main"], "ran"),
        "toolu_2": ("ask", ["secret-file"], "refused-by-host"),
        # scope follows the target: the project's grant does not reach /etc/passwd either
        "toolu_3": ("deny", ["outside-project", "no-grant"], "refused-by-hook"),
        # permitted: the hook defers to Claude Code's own permission flow (nothing auto-allows)
        "toolu_4": ("defer", [], "ran"),
        "toolu_5": ("defer", [], "failed"),
        "toolu_6": ("defer", [], "no-result"),
        "toolu_7": ("defer", [], "ran"),
    }
    assert got["toolu_1"]["action"] == "claude-code Bash cd sub && git push -f origin main"
    assert got["toolu_3"]["reasons"][0]["detail"] == "/etc/passwd"
    assert got["toolu_2"]["flags"][0]["detail"] == f"{PROJECT}/.env"


def test_facts_count_as_the_store_held_them_at_each_calls_time(project: Path) -> None:
    late = [use(8, "Read", {"file_path": f"{PROJECT}/x"}, 45), result(8, 45)]  # 10:45, after the stop
    write(project / "late.jsonl", late)
    got = rows(run("audit", "projects", "late.jsonl", "--jsonl"))
    assert got["toolu_4"]["answer"] == "defer"  # 10:04: no stop yet
    assert got["toolu_8"]["answer"] == "deny" and got["toolu_8"]["reasons"][0]["code"] == "owner-stop"


def test_the_audit_writes_nothing(project: Path) -> None:
    with open_store(str(project / "ordinance.db")) as store:
        before = store.revision()
    assert run("audit", "projects", "--decisions").exit_code == 0
    with open_store(str(project / "ordinance.db")) as store:
        assert store.revision() == before and store.events(kinds=["decision"]) == []


def test_the_summary_counts_by_reason_tool_and_session(project: Path) -> None:
    out = run("audit", "projects")
    assert out.exit_code == 0, out.output
    text = out.output
    assert text.startswith("7 tool calls: 4 defer, 1 ask, 2 deny")
    assert re.search(r"1  deny force-push-main", text) and re.search(r"1  ask secret-file", text)
    assert re.search(r"4  Bash \(3 defer, 1 deny\)", text)
    assert re.search(r"7  s1 \(4 defer, 1 ask, 2 deny\)", text)
    assert re.search(r"1  refused-by-hook \(1 deny\)", text)


def test_against_an_older_policy_lists_exactly_the_calls_that_flip(project: Path) -> None:
    # (outside-project alone no longer flips: scope follows the target, so no grant reaches /etc/passwd)
    old = CLAUDE_CODE_POLICY.replace('forbid(A, "force-push-main"', 'forbid_x(A, "force-push-main"')
    assert old != CLAUDE_CODE_POLICY
    (project / "old.rules").write_text(".decl forbid_x(a: symbol, c: symbol, d: symbol)\n" + old)
    got = rows(run("audit", "projects", "--against", "old.rules", "--jsonl"))
    flips = {k: r["flip"] for k, r in got.items() if r["flip"]}
    assert flips == {"toolu_1": "newly-blocked"}
    back = rows(run("audit", "projects", "--policy", "old.rules", "--against", "policy.rules", "--jsonl"))
    assert {k: r["flip"] for k, r in back.items() if r["flip"]} == {"toolu_1": "newly-allowed"}
    text = run("audit", "projects", "--against", "old.rules").output
    assert "newly-blocked: 1\n  toolu_1  defer -> deny (force-push-main)" in text and "newly-allowed: 0" in text


def test_damaged_transcripts_are_reported_line_by_line_and_never_fatal(project: Path) -> None:
    good = (project / "projects" / "p" / "s1.jsonl").read_text().splitlines()
    damaged = [
        good[1],
        "{not json",
        json.dumps({"type": "mystery-record", "x": 1}),
        "[1, 2]",
        good[3],  # a call whose result is missing below
        good[5],
        good[6],
        good[7][: len(good[7]) // 2],  # truncated mid-line (the last line of a crashed session)
    ]
    path = project / "damaged.jsonl"
    path.write_text("\n".join(damaged))
    read = read_calls([path])
    assert [(p.line, p.message) for p in read.problems] == [
        (2, "not a JSON record (malformed or truncated)"),
        (4, "not a JSON object"),
        (8, "not a JSON record (malformed or truncated)"),
    ]
    assert {c.id: c.happened for c in read.calls} == {
        "toolu_1": "no-result",
        "toolu_2": "no-result",
        "toolu_3": HOOK_REFUSED,
    }
    out = CliRunner().invoke(cli, ["audit", str(path)])
    assert out.exit_code == 0
    assert f"warning: {path}:2: not a JSON record" in out.stderr and f"{path}:8:" in out.stderr
    assert out.stdout.startswith("3 tool calls:") and "3 lines or calls skipped" in out.stdout
    assert HOST_REFUSED not in {c.happened for c in read.calls}


def test_the_html_report_is_self_contained_escaped_and_has_the_proofs(project: Path) -> None:
    evil = [use(9, "Bash", {"command": "echo '<script>alert(1)</script>' && git push --force origin main"}, 9)]
    write(project / "evil.jsonl", evil)
    out = run("audit", "projects", "evil.jsonl", "--html", "report.html")
    assert out.exit_code == 0, out.output
    page = (project / "report.html").read_text()
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "http" not in page.replace("http-equiv", "")  # no external resource
    assert page.count("<details><summary>proof</summary>") == 4  # the three denials and the ask
    assert "by rule" in page and "force-push-main" in page


def test_the_decision_log_is_audited_too(project: Path) -> None:
    call = {"tool_name": "Write", "tool_input": {"file_path": "/etc/x"}, "cwd": PROJECT, "tool_use_id": "h1"}
    hooked = CliRunner().invoke(cli, ["hook", "claude-code", "--project", PROJECT], input=json.dumps(call))
    assert json.loads(hooked.output)["hookSpecificOutput"]["permissionDecision"] == "deny"
    got = rows(run("audit", "--decisions", "--jsonl"))
    assert got["cc-h1"]["happened"] == "logged-deny" and got["cc-h1"]["answer"] == "deny"


def test_a_logged_decision_is_audited_over_the_store_at_its_own_revision(project: Path) -> None:
    with open_store(str(project / "fresh.db"), schema_of(POLICY)) as store:
        store.assert_facts([("grant", ("claude-code", PROJECT, 1))])
    db = ["--db", str(project / "fresh.db")]
    call = {"tool_name": "Read", "tool_input": {"file_path": f"{PROJECT}/a"}, "cwd": PROJECT, "tool_use_id": "h2"}
    hooked = CliRunner().invoke(cli, ["hook", "claude-code", "--project", PROJECT, *db], input=json.dumps(call))
    assert hooked.exit_code == 0, hooked.output
    # permitted, not auto-allowed: the hook defers to Claude Code (no permissionDecision)
    assert "permissionDecision" not in json.loads(hooked.output or "{}").get("hookSpecificOutput", {}), hooked.output
    env = {"tool_name": "Write", "tool_input": {"file_path": f"{PROJECT}/.env"}, "cwd": PROJECT, "tool_use_id": "h3"}
    hooked = CliRunner().invoke(cli, ["hook", "claude-code", "--project", PROJECT, *db], input=json.dumps(env))
    assert json.loads(hooked.output)["hookSpecificOutput"]["permissionDecision"] == "ask", hooked.output
    assert run("assert", 'stop("everything", 2026-01-01T00:00:00Z).', *db).exit_code == 0  # after the decisions
    got = rows(run("audit", "--decisions", "--jsonl", *db))
    assert got["cc-h2"]["happened"] == "logged-defer" and got["cc-h2"]["answer"] == "defer"
    assert got["cc-h3"]["happened"] == "logged-ask" and got["cc-h3"]["answer"] == "ask"  # by its logged `asked`


# A transcript the real client wrote (Claude Code 2.1.332, tests/fixtures/transcripts/README.md):
# one Bash call, `git push -q origin feature`, let through by the hook (then: `allow`) and run.
REAL = Path(__file__).parent / "fixtures" / "transcripts" / "claude-code-push.jsonl"
REAL_PROJECT = "/tmp/e2e/project"


def real_store(tmp_path: Path) -> list[str]:
    """The owner's policy and a store granting the real session's project before it ran."""
    (tmp_path / "owner.rules").write_text(CLAUDE_CODE_POLICY)
    grant = Event(
        "assert", "grant", ("claude-code", REAL_PROJECT, 1), "init", "jw", seq=1, time="2026-12-02T13:00:00.000000Z"
    )
    with open_store(str(tmp_path / "owner.db"), schema_of(POLICY)) as store:
        import_jsonl(store, io.StringIO(json.dumps(grant.to_json()) + "\n"))
    return ["--db", str(tmp_path / "owner.db"), "--policy", str(tmp_path / "owner.rules")]


def test_a_real_claude_code_transcript_is_read_and_audited(tmp_path: Path) -> None:
    read = read_calls([REAL])
    assert read.problems == []  # its 29 other records (attachments, queue operations, api requests, ...) skipped
    (call,) = read.calls
    assert (call.id, call.tool, call.input["command"]) == ("toolu_e2e0001", "Bash", "git push -q origin feature")
    assert (call.session, call.cwd) == ("097385c4-83d7-475e-9724-3eef1a1f7d70", REAL_PROJECT)
    assert call.happened == "ran" and call.denial == ""  # joined with its tool_result
    # the spelling the real client writes for a call a hook let through: `accept`, by `hook`
    (result,) = [json.loads(line) for line in REAL.read_text().splitlines() if '"tool_result"' in line]
    assert result["permissionDecision"] == {"decision": "accept", "source": "hook", "reasonType": "hook"}
    assert "toolDenialKind" not in result
    got = rows(run("audit", str(REAL), "--jsonl", *real_store(tmp_path)))
    assert {k: (r["answer"], r["happened"]) for k, r in got.items()} == {"toolu_e2e0001": ("defer", "ran")}
    assert got["toolu_e2e0001"]["action"] == "claude-code Bash git push -q origin feature"


def test_a_force_push_in_the_real_transcripts_records_is_refused_by_the_policy(tmp_path: Path) -> None:
    """The real session has no force push: its records, with only the command edited, audit as one."""
    forced = REAL.read_text().replace("git push -q origin feature", "git push -f origin main")
    assert forced.count("git push -f origin main") == 1
    (tmp_path / "forced.jsonl").write_text(forced)
    got = rows(run("audit", str(tmp_path / "forced.jsonl"), "--jsonl", *real_store(tmp_path)))
    row = got["toolu_e2e0001"]
    assert (row["answer"], [r["code"] for r in row["reasons"]], row["happened"]) == ("deny", ["force-push-main"], "ran")

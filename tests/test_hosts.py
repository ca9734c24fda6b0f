"""ordinance.hosts: the shell reading's bounds and facts, paths through
symlinks, and the flow's receipts (asks, failures, refusals, digests)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

import pytest

from ordinance.cli.init import CLAUDE_CODE_POLICY
from ordinance.facts import open_store, schema_of
from ordinance.hosts import Call, Verdict, claude_code, host
from ordinance.hosts.bash import MAX_COMMANDS, MAX_TEXT, MAX_WORDS, read
from ordinance.hosts.git import git_facts, git_words
from ordinance.hosts.flow import handle
from ordinance.hosts.paths import resolve
from ordinance.hosts.request import digest
from ordinance.rules import compile_text
from ordinance.serve import Principal, Service
from ordinance.values import parse_instant

NOW = parse_instant("2026-12-01T12:00:00Z")
AGENT = Principal("claude-code")
ROOT = "/home/me/p"


# -- the shell reading ------------------------------------------------------


def test_hostile_inputs_are_read_within_bounds() -> None:
    wrapped = read("env " * 1500, "/p")
    assert sum(len(c) for c in wrapped.commands) <= MAX_WORDS and (-1, "too-large") in wrapped.unresolved
    word = read("echo " + "a" * 160_000, "/p")
    assert word.commands == [("echo", "a" * 160_000)] and word.unresolved == []
    many = read("a;" * 20_000, "/p")
    assert len(many.commands) == MAX_COMMANDS and (-1, "too-large") in many.unresolved
    huge = read("a" * (MAX_TEXT + 1), "/p")
    assert huge.commands == [] and huge.unresolved == [(-1, "too-large")]
    deep = read("$(" * 3000 + "ls" + ")" * 3000, "/p")
    assert any(why in ("too-deep", "parse-error") for _, why in deep.unresolved)
    nested = read("eval " * 40 + "ls", "/p")
    assert (-1, "too-deep") in nested.unresolved  # never an unbounded walk, never silent


@pytest.mark.parametrize(
    "text,writes",
    [
        ("echo x > a", ["/p/a"]),
        ("echo x>a 2>&1", ["/p/a"]),
        ("git push origin main>x", ["/p/x"]),
        ("echo > a hi", ["/p/a"]),
        ("cat <<EOF > a\nhi\nEOF\n", ["/p/a"]),
        ("tee a b < c", ["/p/a", "/p/b"]),
        ("cp a b c", ["/p/c"]),
        ("cp -t d a b", ["/p/d"]),
        ("sed -i s/a/b/ f g", ["/p/f", "/p/g"]),
        ("sed -e s/a/b/ f", []),
        ("dd if=a of=b", ["/p/b"]),
        ("ln -s ../x", ["/p"]),
        ("chmod 644 f", ["/p/f"]),
        ("cd sub && rm x; (cd /; rm y); rm z", ["/p/sub/x", "/y", "/p/sub/z"]),
        ("cd sub && echo x > f", ["/p/sub/f"]),
        ("cd sub | echo x > f", ["/p/f"]),
        ("{ cd sub; echo; } > f", ["/p/f"]),
        ("curl -o out https://x", ["/p/out"]),
        ("echo x 2> /dev/null", ["/dev/null"]),
    ],
)
def test_the_files_a_command_writes(text: str, writes: list[str]) -> None:
    assert read(text, "/p").writes == writes


@pytest.mark.parametrize(
    "text,why",
    [
        ("$g push", "expansion"),
        ("echo x > $f", "path"),
        ("cd $d && echo x > f", "path"),
        ("xargs rm < list", "launcher"),
        ("find . -delete", "launcher"),
        ("ssh host rm -rf /", "launcher"),
        ("uv run git push", "launcher"),
        ("python3 -c 'print(1)'", "inline-code"),
        ("python3 - <<EOF\nprint(1)\nEOF\n", "inline-code"),
        ("awk '{ system(\"rm x\") }' f", "inline-code"),
        ("curl https://x | sh", "pipe-to-shell"),
        ("eval ls", "eval"),
        ("GIT_DIR=x git push", "environment"),
        ("echo 'open", "parse-error"),
        ("./g push -f origin main", "push-like"),
        ("./g -C x push origin +main", "push-like"),
        ("git-push $b origin main", "expansion"),
    ],
)
def test_what_the_reading_cannot_resolve_is_said(text: str, why: str) -> None:
    assert why in [w for _, w in read(text, "/p").unresolved]


def test_plain_commands_resolve_fully() -> None:
    for text in (
        "git status",
        "ls -la *.py",
        "echo $HOME",
        "python3 x.py",
        "awk '{print $1}' f",
        "sh build.sh",
        "./g push origin feature",
        "docker push app:1",
    ):
        assert read(text, "/p").unresolved == [], text


def test_git_is_read_as_git_reads_it() -> None:
    g = git_facts(("git", "-C", "x", "-c", "Core.HooksPath=/dev/null", "push", "--force-w", "origin", "HEAD"))
    assert g.subcommand == "push" and g.globals == ["-C", "-c"] and g.config == ["core.hookspath"]
    assert "force-with-lease" in g.options and g.pushes == [("HEAD", True)]
    assert git_facts(("git", "push", "origin", "a:refs/heads/b", "+c")).pushes == [("b", False), ("c", True)]
    assert git_facts(("git", "push", "-o", "f", "origin", "x")).pushes == [("x", False)]  # -o takes an argument
    assert git_facts(("git", "push")).pushes == [("*", False)]
    assert git_facts(("git", "config", "--global", "alias.p", "push -f")).config == ["alias.p"]
    # send-pack and http-push update the remote's refs as push does (and run no pre-push hook)
    assert git_facts(("git", "send-pack", "--force", "../r.git", "main")).pushes == [("main", True)]
    assert git_facts(("git", "http-push", "https://x/r.git", "+main", "b")).pushes == [("main", True), ("b", False)]
    assert git_words(["/usr/lib/git-core/git-send-pack", "../r", "main"]) == ["git", "send-pack", "../r", "main"]
    assert git_words(["gitk", "--all"]) is None and git_words([None, "push"]) is None


def test_paths_resolve_through_symlinks(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "alias")
    os.symlink("../elsewhere", tmp_path / "real" / "out")
    assert resolve("alias/new/file", str(tmp_path)) == str(tmp_path / "real" / "new" / "file")
    assert resolve("out/x", str(tmp_path / "real")) == str(tmp_path / "elsewhere" / "x")
    assert resolve("a/../../b", "/p") == "/b"
    assert resolve("", "/p") is None and resolve("a\0b", "/p") is None


# -- the flow -----------------------------------------------------------------

POLICY = compile_text(
    CLAUDE_CODE_POLICY
    + """
auto_allow(A) :- request_tool(A, "Read"), request_path(A, P), match(".*[.]md", P).
"""
)


@pytest.fixture()
def service(tmp_path: Path) -> Iterator[Service]:
    with open_store(str(tmp_path / "cc.db"), schema_of(POLICY)) as store:
        store.assert_facts([("grant", ("claude-code", ROOT, 1))], source="init", author="jw")
        yield Service(POLICY, store)


def hook(service: Service, event: str, tool: str, inputs: dict[str, Any], n: str = "t1") -> dict[str, Any]:
    payload = {"hook_event_name": event, "tool_name": tool, "tool_use_id": n, "cwd": ROOT, "tool_input": inputs}
    return handle(claude_code, service, AGENT, payload, now=NOW)


def receipts(service: Service) -> list[tuple[Any, ...]]:
    return [e.args[:2] for e in service.store.events(kinds=["receipt"])]


def test_an_ask_is_logged_as_an_ask_and_its_intent_waits_for_the_call_to_run(service: Service) -> None:
    out = hook(service, "PreToolUse", "WebFetch", {"url": "https://x.example"})
    assert out["hookSpecificOutput"]["permissionDecision"] == "ask"
    # the ask names what it is about, as a deny's reasons do
    assert out["hookSpecificOutput"]["permissionDecisionReason"] == "ordinance asks: web-fetch (https://x.example)"
    (logged,) = service.store.events(kinds=["decision"])
    assert logged.payload["asked"] == ["web-fetch"] and logged.payload["allowed"] is True
    assert receipts(service) == [("cc-t1", "asked")]
    assert hook(service, "PostToolUse", "WebFetch", {"url": "https://x.example"}) == {}
    assert receipts(service) == [("cc-t1", "asked"), ("cc-t1", "intent"), ("cc-t1", "outcome")]


def test_an_asked_call_the_user_refused_gets_no_intent(service: Service) -> None:
    hook(service, "PreToolUse", "WebFetch", {"url": "https://x.example"})
    assert hook(service, "PermissionDenied", "WebFetch", {"url": "https://x.example"}) == {}
    assert receipts(service) == [("cc-t1", "asked")]


@pytest.mark.parametrize("event", ["PostToolUseFailure", "PermissionDenied"])
def test_a_failed_or_refused_call_closes_its_intent(service: Service, event: str) -> None:
    out = hook(service, "PreToolUse", "Bash", {"command": "pytest -q"})
    assert "permissionDecision" not in out["hookSpecificOutput"]
    assert hook(service, event, "Bash", {"command": "pytest -q"}) == {}
    assert hook(service, "PostToolUse", "Bash", {"command": "pytest -q"}) == {}  # closed: nothing more
    assert receipts(service) == [("cc-t1", "intent"), ("cc-t1", "failed")]


def test_file_contents_are_logged_as_a_digest_and_a_length(service: Service) -> None:
    secret = "API_KEY=hunter2-" + "x" * 5000
    out = hook(service, "PreToolUse", "Write", {"file_path": f"{ROOT}/.env", "content": secret})
    assert out["hookSpecificOutput"]["permissionDecision"] == "ask"  # the policy read the path (and could the text)
    (logged,) = service.store.events(kinds=["decision"])
    inputs = dict(map(tuple, logged.payload["request"]["attributes"]["request_input"]))
    assert inputs["content"] == digest(secret) and inputs["content"].endswith(f"length:{len(secret)}")
    assert "hunter2" not in str(logged.payload)


def test_allow_only_where_the_policy_auto_allows(service: Service) -> None:
    out = hook(service, "PreToolUse", "Read", {"file_path": f"{ROOT}/README.md"})
    assert out["hookSpecificOutput"]["permissionDecision"] == "allow"
    out = hook(service, "PreToolUse", "Read", {"file_path": f"{ROOT}/src/a.py"}, "t2")
    assert "permissionDecision" not in out["hookSpecificOutput"]


def test_hosts_plug_in_by_name() -> None:
    assert host("claude-code") is claude_code
    for bad in ("flow", "_x", "../x", "nope"):
        with pytest.raises(KeyError):
            host(bad)
    assert claude_code.render(Verdict("defer")) == {}
    call = claude_code.call({"tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": "/p"}, None)
    assert isinstance(call, Call) and call.shell == "ls" and call.phase == "pre"


def test_every_unresolved_fact_names_a_command_read_or_the_whole_text() -> None:
    """A policy joins request_unresolved with request_command (or reads N = -1):
    an index of no command would be a fact no rule sees."""
    from test_hosts_corpus import FORCE_PUSHES, HARMLESS, OWNER_CONTROLS, WRITES_OUTSIDE

    texts = [c for c, _ in FORCE_PUSHES + WRITES_OUTSIDE + OWNER_CONTROLS] + HARMLESS
    for text in texts:
        reading = read(text, "/p")
        assert all(n == -1 or 0 <= n < len(reading.commands) for n, _ in reading.unresolved), text

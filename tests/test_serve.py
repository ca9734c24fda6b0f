"""`ordinance serve` as a real process, driven by a real HTTP client."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from ordinance.cli.init import CLAUDE_CODE_POLICY
from ordinance.explain import decision_json
from ordinance.facts import open_store, schema_of
from ordinance.gate import Gate
from ordinance.rules import compile_text, load
from served import AGENT, OTHER, OWNER, Served, write_tokens

NOW = "2026-12-01T12:00:00Z"
HOOKS = Path(__file__).parent / "claude_code"


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "policy.rules").write_text(CLAUDE_CODE_POLICY)
    write_tokens(tmp_path / "tokens.toml")
    return tmp_path


@pytest.fixture()
def server(project: Path) -> Iterator[Served]:
    with Served(
        project / "policy.rules", str(project / "o.db"), project / "tokens.toml", extra=("--project", "/home/me/p")
    ) as s:
        yield s


def grant_agent(server: Served) -> None:
    r = server.post("/assert", OWNER, json={"text": 'grant("claude-code", "/home/me/p", 1).'})
    assert r.status_code == 200, r.text


def test_health_and_openapi_need_no_token(server: Served) -> None:
    health = server.get("/health", None).json()
    assert health["status"] == "ok" and health["revision"] == 0
    doc = server.get("/openapi.json", None).json()
    assert doc["openapi"].startswith("3.") and {
        "/check",
        "/assert",
        "/load",
        "/query",
        "/why",
        "/why-not",
        "/log",
        "/health",
        "/hooks/{host}",
    } <= set(doc["paths"])
    assert "4XX" in doc["paths"]["/check"]["post"]["responses"]
    assert set(doc["paths"]["/hooks/{host}"]["post"]["responses"]) == {"200"}  # failures are a 200 deny


def test_a_served_decision_is_logged_and_replays_identically(server: Served, project: Path) -> None:
    grant_agent(server)
    body = {
        "request": {"id": "a1", "kind": "write", "target": "/home/me/p/x", "epoch": 1, "scope": "/home/me/p"},
        "now": NOW,
    }
    served = server.post("/check", json=body).json()
    assert served["allowed"] is True and served["request"]["agent"] == "claude-code"
    policy = load(str(project / "policy.rules"))
    with open_store(str(project / "o.db"), schema_of(policy)) as store:
        logged = store.events(kinds=["decision"])
        assert len(logged) == 1 and logged[0].author == "claude-code" and logged[0].seq == served["seq"]
        replayed = Gate(policy, store).replay(logged[0])
    assert replayed.payload() == logged[0].payload
    # the served JSON is the typed shape of that same decision
    assert decision_json(replayed, program=policy, proofs=False) == {k: v for k, v in served.items() if k != "seq"}


def test_the_principal_is_the_agent(server: Served) -> None:
    grant_agent(server)
    r = server.post("/check", json={"request": {"kind": "write", "target": "t", "agent": "jw", "epoch": 1}})
    assert r.status_code == 403 and r.json()["error"]["code"] == "principal_mismatch"
    r = server.post(
        "/check",
        OTHER,
        json={"request": {"kind": "write", "target": "/home/me/p/x", "epoch": 1, "scope": "/home/me/p"}, "now": NOW},
    )
    assert r.json()["allowed"] is False and r.json()["request"]["agent"] == "bob"
    r = server.post(
        "/check", json={"request": {"kind": "w", "target": "t", "epoch": 1, "attributes": {"request_owner": [[]]}}}
    )
    assert r.status_code == 403 and r.json()["error"]["code"] == "reserved_attribute"


def test_an_agents_token_cannot_write_a_grant(server: Served) -> None:
    for text in (
        'grant("claude-code", "/", 1).',
        'resume("/home/me/p", 9).',
        'stop("everything", 2026-01-01T00:00:00Z).',
    ):
        r = server.post("/assert", AGENT, json={"text": text})
        assert r.status_code == 403 and r.json()["error"]["code"] == "may_not_assert", text
    r = server.post("/assert", AGENT, json={"facts": [{"relation": "owner_only", "args": ["claim"]}]})
    assert r.status_code == 403
    assert server.get("/health").json()["revision"] == 0
    # the agent writes what it may; the owner writes authority
    assert (
        server.post(
            "/assert", AGENT, json={"facts": [{"relation": "claim", "args": ["c1", "db", "role", "primary"]}]}
        ).status_code
        == 200
    )
    assert server.post("/assert", OWNER, json={"text": 'grant("claude-code", "/", 1).'}).status_code == 200


def test_bad_requests_get_error_data_and_write_nothing(server: Served) -> None:
    cases = [
        ("/check", {"content": b"{not json"}, 400, "bad_json"),
        ("/check", {"json": {"request": {"kind": "w", "target": "t", "epoch": "one"}}}, 400, "bad_field"),
        ("/check", {"json": {"request": {"kind": "w", "target": "t", "epoch": 1, "colour": 1}}}, 400, "gate"),
        ("/assert", {"json": {"text": 'grant("a", "b"'}}, 400, "syntax"),
        (
            "/assert",
            {
                "json": {
                    "facts": [{"relation": "claim", "args": ["c", "s", "a", "v"]}, {"relation": "nope", "args": []}]
                }
            },
            400,
            "unknown_relation",
        ),
        (
            "/assert",
            {
                "json": {
                    "facts": [
                        {"relation": "claim", "args": ["c", "s", "a", "v"]},
                        {"relation": "claim_valid", "args": ["c", "yesterday", "forever"]},
                    ]
                }
            },
            400,
            "bad_value",
        ),
        ("/assert", {"json": {"text": 'permit("x").'}}, 403, "derived_relation"),
        ("/assert", {"json": {"text": 'request_tool("x", "Bash").'}}, 400, "request_fact"),
        ("/load", {"content": b'{"relation": "claim", "args": ["c", "s", "a", "v"]}\n{oops\n'}, 400, "bad_jsonl"),
        ("/query", {"json": {"pattern": "nope(X)"}}, 400, "unknown_relation"),
        ("/why", {"json": {"fact": "current(C)"}}, 400, "not_ground"),
        ("/nowhere", {"json": {}}, 404, "not_found"),
        ("/hooks/nope", {"json": {}}, 404, "not_found"),  # the hot routes answer as Starlette's would
        ("/hooks/claude-code/more", {"json": {}}, 404, "not_found"),
        ("/check", {"json": {"request": None}}, 400, "bad_request"),
        ("/why", {"json": {"fact": 'permit("x")', "request": ["x"]}}, 400, "bad_request"),
        ("/assert", {"json": {"text": 'claim("c", "s", "a", "v").', "source": {"x": 1}}}, 400, "bad_request"),
    ]
    for path, kw, status, code in cases:
        r = server.post(path, **kw)  # type: ignore[arg-type]
        assert r.status_code == status, (path, r.text)
        error = r.json()["error"]
        assert error["code"] == code, (path, error)
        assert "Traceback" not in r.text and set(error) == {"code", "message", "span"}
    assert "`request` is a JSON object" in server.post("/check", json={}).json()["error"]["message"]
    wrong = server.get("/check")
    assert wrong.status_code == 405 and wrong.json()["error"]["code"] == "method_not_allowed"
    assert server.post("/check", None, json={}).status_code == 401
    assert server.post("/check", "wrong-token", json={}).json()["error"]["code"] == "unauthorized"
    syntax = server.post("/assert", json={"text": 'claim("a", "b"'}).json()["error"]
    assert syntax["span"] is not None and syntax["span"]["line"] == 1
    assert server.get("/health").json()["revision"] == 0  # nothing half-written
    stderr = server.stop()
    assert "Traceback" not in stderr and AGENT not in stderr and OWNER not in stderr


def test_query_why_why_not_log_and_state(server: Served) -> None:
    grant_agent(server)
    q = server.post("/query", json={"pattern": "current_grant(A, S, E)", "now": NOW}).json()
    assert q["answers"] == [{"A": "claude-code", "S": "/home/me/p", "E": 1}]
    request = {"id": "a9", "kind": "Bash", "target": "/home/me/p", "epoch": 1, "scope": "/home/me/p"}
    why = server.post("/why", json={"fact": 'permit("a9")', "request": request, "now": NOW}).json()
    assert why["holds"] and "grant" in json.dumps(why["proof"])
    not_ = server.post(
        "/why-not", OTHER, json={"fact": 'permit("b9")', "now": NOW, "request": {**request, "id": "b9"}}
    ).json()
    assert not not_["holds"] and "current_grant" in json.dumps(not_["why_not"])
    log = server.get("/log", params={"kind": "assert"}).json()
    assert [e["relation"] for e in log["events"]] == ["grant"]
    state = server.get("/state", params={"now": NOW}).json()
    assert state["projection"] == "state" and state["audience"] == "public" and state["revision"] == 1
    assert state["text"].startswith("# state ") and "audience public" in state["text"].splitlines()[0]


def test_a_tokens_principal_bounds_the_audiences_it_reads_as(project: Path) -> None:
    tokens = project / "tokens.toml"
    tokens.write_text(tokens.read_text().replace('name = "bob"', 'name = "bob"\naudiences = ["federation"]'))
    with Served(project / "policy.rules", str(project / "o.db"), tokens) as server:
        assert (
            server.post(
                "/assert", OWNER, json={"text": 'standing_agent("prime"). open_item("pub", "public work").'}
            ).status_code
            == 200
        )
        hidden = server.post(
            "/assert", OWNER, json={"text": 'open_item("vault", "rotate the vault key").', "layer": "sovereign"}
        )
        assert hidden.status_code == 200
        assert (
            server.post(
                "/assert", OWNER, json={"text": 'open_item("fed", "federation work").', "layer": "federation"}
            ).status_code
            == 200
        )
        assert (
            server.post("/assert", OWNER, json={"text": 'open_item("x", "y").', "layer": "nope"}).json()["error"][
                "code"
            ]
            == "unknown_layer"
        )
        loaded = server.post(
            "/load",
            OWNER,
            content=b'{"relation": "open_item", "args": ["arch", "architect work"], "layer": "architect"}\n',
        )
        assert loaded.status_code == 200, loaded.text
        # a request that derives through the private fact: its facts are never in the agent's model
        ask = {"pattern": "open_item(K, T)", "now": NOW}

        def keys(token: str, **extra: Any) -> list[str]:
            r = server.post("/query", token, json={**ask, **extra})
            assert r.status_code == 200, r.text
            return sorted(a["K"] for a in r.json()["answers"])

        assert keys(AGENT) == ["pub"]
        assert keys(OTHER) == ["fed", "pub"] and keys(OTHER, audience="public") == ["pub"]
        assert keys(OWNER) == ["arch", "fed", "pub", "vault"] and keys(OWNER, audience="public") == ["pub"]
        request = {"id": "q1", "kind": "Bash", "target": "/p", "epoch": 1}
        assert keys(AGENT, request=request) == ["pub"]  # a request's model too
        vault = 'open_item("vault", "rotate the vault key")'
        assert server.post("/why", AGENT, json={"fact": vault, "now": NOW}).json() == {"holds": False, "proof": None}
        assert server.post("/why", OWNER, json={"fact": vault, "now": NOW}).json()["holds"] is True
        assert server.post("/why-not", AGENT, json={"fact": vault, "now": NOW}).json()["holds"] is False
        for token in (AGENT, OTHER, OWNER):
            state = server.get("/state", token, params={"now": NOW}).json()
            assert ("vault" in state["text"]) is (token == OWNER), state["text"]
            log = server.get("/log", token).json()["events"]
            assert ("vault" in json.dumps(log)) is (token == OWNER)
            bundle = server.get("/rehydrate", token, params={"now": NOW}).json()
            assert ("vault" in bundle["text"]) is (token == OWNER)
        assert "vault" not in server.get("/state", OWNER, params={"now": NOW, "audience": "public"}).text
        assert server.get("/state", OWNER, params={"now": NOW, "cap": 250}).json()["left_out"].get("Open")
        # asking for more than the principal may see is refused, with error data
        for path, token, audience in (
            ("/query", AGENT, "federation"),
            ("/why", AGENT, "architect"),
            ("/query", OTHER, "sovereign"),
        ):
            r = server.post(path, token, json={"pattern": "open_item(K, T)", "fact": vault, "audience": audience})
            assert r.status_code == 403 and r.json()["error"]["code"] == "audience_forbidden", r.text
            assert set(r.json()["error"]) == {"code", "message", "span"}
        for path in ("/state", "/log", "/rehydrate"):
            r = server.get(path, AGENT, params={"audience": "sovereign"})
            assert r.status_code == 403 and r.json()["error"]["code"] == "audience_forbidden", (path, r.text)
        assert server.get("/state", AGENT, params={"audience": "nobody"}).json()["error"]["code"] == "unknown_audience"


def test_the_server_follows_writes_by_other_processes(server: Served, project: Path) -> None:
    request = {"kind": "write", "target": "/home/me/p/x", "epoch": 1, "scope": "/home/me/p"}
    assert server.post("/check", json={"request": request, "now": NOW}).json()["allowed"] is False
    policy = compile_text(CLAUDE_CODE_POLICY)
    with open_store(str(project / "o.db"), schema_of(policy)) as store:
        store.assert_facts([("grant", ("claude-code", "/home/me/p", 1))], author="jw")
    assert server.post("/check", json={"request": request, "now": NOW}).json()["allowed"] is True
    with open_store(str(project / "o.db"), schema_of(policy)) as store:
        store.assert_facts([("stop", ("everything", 0))], author="jw")
    denied = server.post("/check", json={"request": request, "now": NOW}).json()
    assert denied["allowed"] is False and denied["reasons"][0]["code"] == "owner-stop"


def test_the_claude_code_http_hook(server: Served, project: Path) -> None:
    grant_agent(server)
    out = server.post("/hooks/claude-code", json=json.loads((HOOKS / "write_inside.json").read_text())).json()
    assert out["hookSpecificOutput"].get("permissionDecision", "defer") == "defer"  # Claude Code's own flow decides
    out = server.post("/hooks/claude-code", json=json.loads((HOOKS / "compound_force_push.json").read_text())).json()
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    post = server.post("/hooks/claude-code", json=json.loads((HOOKS / "write_inside_post.json").read_text()))
    assert post.status_code == 200 and post.json() == {}
    receipts = [(e["args"][0], e["args"][1]) for e in server.get("/log", params={"kind": "receipt"}).json()["events"]]
    assert receipts == [("cc-toolu_04", "intent"), ("cc-toolu_04", "outcome")]
    # a bad token or a bad body: still a 200, and a deny (Claude Code ignores other statuses)
    for token, body in ((None, b"{}"), ("nope", b"{}"), (AGENT, b"not json")):
        r = server.post("/hooks/claude-code", token, content=body)
        assert r.status_code == 200 and r.json()["hookSpecificOutput"]["permissionDecision"] == "deny"
    r = server.post("/hooks/claude-code", "nope", content=(HOOKS / "write_inside_post.json").read_bytes())
    assert r.status_code == 200 and "error[unauthorized]" in r.json()["systemMessage"]  # PostToolUse: nothing to deny
    stderr = server.stop()
    stored = b"".join(p.read_bytes() for p in project.glob("o.db*"))  # the store, its WAL included
    assert b"cc-toolu_04" in stored  # what was written is there...
    for token in (AGENT, OWNER):  # ...and no token, in the store or the server's output
        assert token.encode() not in stored and token not in stderr


def test_the_command_hook_takes_its_token_from_a_file(server: Served, tmp_path: Path) -> None:
    """Claude Code's CLAUDE_CODE_SUBPROCESS_ENV_SCRUB=1 strips the environment:
    the token file still works, and a missing token is named as such."""
    grant_agent(server)
    token_file = tmp_path / "agent.token"
    token_file.write_text(AGENT + "\n")
    token_file.chmod(0o600)

    def hook(*options: str) -> dict[str, Any]:
        run = subprocess.run(
            [
                sys.executable,
                "-c",
                "from ordinance.cli import main; main()",
                "hook",
                "claude-code",
                "--server",
                server.url,
            ]
            + list(options),
            input=(HOOKS / "bash_push.json").read_bytes(),
            capture_output=True,
            timeout=60,
            env={"PATH": ""},  # scrubbed: no ORDINANCE_TOKEN
        )
        assert run.returncode == 0, run.stderr
        return dict(json.loads(run.stdout)["hookSpecificOutput"])

    assert hook("--token-file", str(token_file))["additionalContext"].startswith("ordinance permits this")
    unset = hook()
    assert unset["permissionDecision"] == "deny" and "no token" in unset["permissionDecisionReason"]
    assert "ORDINANCE_TOKEN" in unset["permissionDecisionReason"]
    missing = hook("--token-file", str(tmp_path / "nope"))
    assert missing["permissionDecision"] == "deny" and "cannot be read" in missing["permissionDecisionReason"]


def test_the_project_is_one_directory_whatever_the_calls_cwd(project: Path) -> None:
    """`--project .` is the server's directory (not each call's), and a call
    made from a subdirectory is asked in the project's scope."""
    root = project / "repo"
    (root / "sub").mkdir(parents=True)
    with Served(
        project / "policy.rules", str(project / "o.db"), project / "tokens.toml", extra=("--project", "."), cwd=root
    ) as s:
        assert s.post("/assert", OWNER, json={"text": f'grant("claude-code", "{root}", 1).'}).status_code == 200
        call = json.loads((HOOKS / "write_inside.json").read_text())

        def decide(cwd: Path, path: str, n: int) -> str:
            body = {**call, "cwd": str(cwd), "tool_use_id": f"p{n}", "tool_input": {"file_path": path, "content": "x"}}
            return str(
                s.post("/hooks/claude-code", json=body).json()["hookSpecificOutput"].get("permissionDecision", "defer")
            )

        assert decide(root / "sub", "../a.py", 1) == "defer"
        assert decide(root / "sub", "b.py", 2) == "defer"
        assert decide(root / "sub", "../../elsewhere.py", 3) == "deny"


def test_the_command_hook_asks_the_server(server: Served) -> None:
    grant_agent(server)

    def hook(name: str, token: str = AGENT, *extra: str) -> dict[str, str]:
        run = subprocess.run(
            [
                sys.executable,
                "-X",
                "importtime",
                "-c",
                "from ordinance.cli import main; main()",
                "hook",
                "claude-code",
                "--server",
                server.url,
                *extra,
            ],
            input=(HOOKS / f"{name}.json").read_bytes(),
            capture_output=True,
            timeout=60,
            env={"ORDINANCE_TOKEN": token, "PATH": ""},
        )
        assert run.returncode == 0, run.stderr
        loaded = {line.split("|")[-1].strip() for line in run.stderr.decode().splitlines()}
        # the server's answer is had with the standard library alone, unless an option needs the click command
        assert ("click" in loaded) == bool(extra) and ("ordinance.diagnostics" in loaded) == bool(extra), extra
        return dict(json.loads(run.stdout)["hookSpecificOutput"])

    assert "permissionDecision" not in hook("bash_push")  # permitted: Claude Code's own permissions decide
    assert hook("bash_c_wrapper")["permissionDecision"] == "deny"
    assert hook("bash_push", "stolen")["permissionDecision"] == "deny"
    for extra in ((), ("--agent", "claude-code")):  # the same answers through the click command
        assert hook("bash_c_wrapper", AGENT, *extra)["permissionDecisionReason"].startswith("ordinance blocked this")
        assert hook("write_inside", AGENT, *extra)["additionalContext"].startswith("ordinance permits this")
    wrong = subprocess.run(  # no hook endpoint there: a 404, which denies
        [sys.executable, "-c", "from ordinance.cli import main; main()", "hook", "claude-code"],
        input=(HOOKS / "bash_push.json").read_bytes(),
        capture_output=True,
        timeout=60,
        env={"ORDINANCE_TOKEN": AGENT, "ORDINANCE_SERVER": server.url + "/elsewhere", "PATH": ""},
    )
    out = json.loads(wrong.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and "answered 404" in out["permissionDecisionReason"]
    call = {
        **json.loads((HOOKS / "bash_push.json").read_text()),
        "tool_input": {"command": "git push -f origin main grün"},
    }
    ascii_locale = subprocess.run(  # the answer is UTF-8 JSON even where stdout's encoding cannot write it
        [sys.executable, "-c", "from ordinance.cli import main; main()", "hook", "claude-code", "--server", server.url],
        input=json.dumps(call).encode(),
        capture_output=True,
        timeout=60,
        env={"ORDINANCE_TOKEN": AGENT, "PYTHONIOENCODING": "ascii", "PATH": ""},
    )
    assert ascii_locale.returncode == 0, ascii_locale.stderr
    out = json.loads(ascii_locale.stdout.decode("utf-8"))["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and "main grün" in out["permissionDecisionReason"]


def test_serving_on_a_unix_socket(project: Path, tmp_path: Path) -> None:
    sock = str(tmp_path / "o.sock")
    with Served(project / "policy.rules", str(project / "o.db"), project / "tokens.toml", uds=sock) as s:
        assert s.get("/health", None).json()["status"] == "ok"
        run = subprocess.run(
            [
                sys.executable,
                "-c",
                "from ordinance.cli import main; main()",
                "hook",
                "claude-code",
                "--server",
                f"unix:{sock}",
            ],
            input=(HOOKS / "bash_push.json").read_bytes(),
            capture_output=True,
            timeout=60,
            env={"ORDINANCE_TOKEN": AGENT, "PATH": ""},
        )
        out = json.loads(run.stdout)["hookSpecificOutput"]
        assert out["permissionDecision"] == "deny" and "no-grant" in out["permissionDecisionReason"]


def test_two_servers_on_one_postgresql_share_a_lease(project: Path, pg_url: str) -> None:
    policy = project / "policy.rules"
    with Served(policy, pg_url, project / "tokens.toml") as one, Served(policy, pg_url, project / "tokens.toml") as two:
        import psycopg

        with psycopg.connect(pg_url) as conn:  # `serve` follows the store: its NOTIFY trigger, and both listen
            assert conn.execute("SELECT count(*) FROM pg_trigger WHERE tgname = 'ordinance_notify'").fetchone() == (1,)
            listening = conn.execute(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND query = 'LISTEN ordinance_log'"
            ).fetchone()
            assert listening == (2,)
        assert (
            one.post(
                "/assert",
                OWNER,
                json={"text": 'grant("claude-code", "repo", 1). grant("bob", "repo", 1). member("job-7", "repo").'},
            ).status_code
            == 200
        )
        request = {"kind": "write", "target": "job-7", "epoch": 1, "scope": "repo"}
        assert two.post("/check", OTHER, json={"request": request, "now": NOW}).json()["allowed"] is True
        # claude-code takes the lease through server one...
        take = {"action": "take", "work": "job-7", "epoch": 1, "until": "2026-12-02T00:00:00Z", "now": NOW}
        taken = one.post("/lease", AGENT, json=take)
        assert taken.status_code == 200 and taken.json()["taken"] and taken.json()["epoch"] == 1, taken.json()
        # ...and bob's duplicate through server two is refused on its very next decision
        dup = two.post("/check", OTHER, json={"request": request, "now": NOW}).json()
        assert dup["allowed"] is False and [r["code"] for r in dup["reasons"]] == ["lease-held"]
        assert one.post("/check", json={"request": request, "now": NOW}).json()["allowed"] is True


@pytest.mark.settle
def test_a_server_settles_after_each_warm_build_and_the_hooks_one_shot_service_does_not(
    tmp_path: Path, monkeypatch: Any
) -> None:
    import ordinance.gate.warm as warm_module
    from ordinance.cli.hook import _local
    from ordinance.serve import Service

    calls: list[str] = []
    monkeypatch.setattr(warm_module, "settle", lambda: calls.append("settle"))
    policy = compile_text(CLAUDE_CODE_POLICY)
    with open_store(str(tmp_path / "a.db"), schema_of(policy)) as store:
        service = Service(policy, store)
        service.gate.model(service.gate.warm.revision(), 0)
        assert calls == ["settle"]  # the server's warm model, built: one full collection
        store.assert_facts([("grant", ("claude-code", "repo", 1))])
        service.gate.model(service.gate.warm.revision(), 0)
        assert calls == ["settle"]  # a write extends the model in place: no build, so no second collection
    calls.clear()
    (tmp_path / "policy.rules").write_text(CLAUDE_CODE_POLICY)
    with open_store(str(tmp_path / "b.db"), schema_of(policy)) as store:
        store.assert_facts([("grant", ("claude-code", "repo", 1))])
    call = {"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": str(tmp_path / "x")}}
    call |= {"session_id": "s", "tool_use_id": "t1", "cwd": str(tmp_path)}
    answer = _local(
        json.dumps(call).encode(), "claude-code", None, 1, str(tmp_path / "b.db"), str(tmp_path / "policy.rules")
    )
    assert "hookSpecificOutput" in json.dumps(answer)  # the hook decided: a warm model was built
    assert calls == []  # and the process that exits after it paid no full collection


def test_postgresql_notifies_the_follower_before_any_decision(pg_url: str) -> None:
    import time

    from ordinance.serve import Service
    from ordinance.serve.follow import follow

    policy = compile_text(CLAUDE_CODE_POLICY)
    with open_store(pg_url, schema_of(policy)) as store, open_store(pg_url, schema_of(policy)) as writer:
        service = Service(policy, store)
        service.gate.model(service.gate.warm.revision(), 0)  # warm, at revision 0
        stop = follow(service, pg_url)
        try:
            rev = writer.assert_facts([("grant", ("claude-code", "repo", 1))])
            deadline = time.monotonic() + 20
            while service.gate.warm.seen < rev and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            stop()
        assert service.gate.warm.seen == rev  # the listener extended the model, nobody asked


def test_the_server_writes_the_gate_snapshot_when_due_between_decisions(tmp_path: Path, monkeypatch: Any) -> None:
    import time

    import ordinance.gate.warm as warm_module
    from ordinance.gate import Request
    from ordinance.serve import Service
    from ordinance.serve.follow import keep_snapshot

    monkeypatch.setattr(warm_module, "SNAPSHOT_WORTH_S", 1e-9)  # a small store: due after any build
    policy = compile_text(CLAUDE_CODE_POLICY)
    with open_store(str(tmp_path / "s.db"), schema_of(policy)) as store:
        store.assert_facts([("grant", ("claude-code", "repo", 1))])
        service = Service(policy, store)
        path = service.gate.warm.snapshot_path
        assert path is not None and not path.exists()
        stop = keep_snapshot(service, every=0.05)
        try:
            service.gate.check(Request("r1", "write", "repo", "claude-code", 1, scope="repo"), 0)
            deadline = time.monotonic() + 20
            while not path.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert path.exists() and not service.gate.warm.snapshot_due  # written by the thread, nobody asked
            store.assert_facts([("grant", ("claude-code", "docs", 1))])
            service.gate.warm.revision()  # a change that would cost the next process work
        finally:
            stop()  # writes it a last time
        fresh = Gate(policy, store, snapshot=True)
        fresh.model(store.revision(), 0)
        assert fresh.warm.restored_from == store.revision()


def test_the_server_outlives_the_commands_deadline(project: Path) -> None:
    import time

    with Served(
        project / "policy.rules", str(project / "o.db"), project / "tokens.toml", env={"ORDINANCE_DEADLINE": "1"}
    ) as s:
        time.sleep(2.5)  # a one-shot command would have been stopped by now
        assert s.get("/health", None).json()["status"] == "ok"
        assert s.proc.poll() is None


def _wait_for(path: Path, holds: Any, what: str, seconds: float = 30) -> str:
    """The file's text once `holds(text)`, polled for at most `seconds`."""
    import time

    deadline, text = time.monotonic() + seconds, ""
    while time.monotonic() < deadline:
        text = path.read_text() if path.exists() else ""
        if holds(text):
            return text
        time.sleep(0.05)
    raise AssertionError(f"the state file never showed {what}:\n{text}")


def _as_state_renders_it(project: Path, text: str, *options: str) -> None:
    """`ordinance state` at the revision and `now` the file names gives its bytes."""
    import re

    from click.testing import CliRunner

    from ordinance.cli import cli

    heading = re.match(r"# state\b.* · revision (\d+) · now (\S+) · ", text)
    assert heading, text
    with open_store(str(project / "o.db")) as store:
        assert store.revision() == int(heading[1])  # the file is at the store's newest revision
    again = CliRunner().invoke(
        cli,
        [
            "state",
            "--db",
            str(project / "o.db"),
            "--policy",
            str(project / "policy.rules"),
            "--now",
            heading[2],
            *options,
        ],
    )
    assert again.exit_code == 0, again.output
    assert again.output == text


def test_the_server_keeps_the_state_file_current(project: Path) -> None:
    import threading
    import time

    out = project / "prime-state.md"
    options = ("--audience", "public", "--cap", "700")
    torn: list[str] = []
    done = threading.Event()

    def read_while_written() -> None:  # the file is replaced whole: a reader never sees part of it
        while not done.is_set():
            text = out.read_text() if out.exists() else "# state \n"
            if not (text.startswith("# state ") and text.endswith("\n")):
                torn.append(text)

    with Served(
        project / "policy.rules",
        str(project / "o.db"),
        project / "tokens.toml",
        extra=("--state-out", str(out), "--state-audience", "public", "--state-cap", "700"),
    ) as server:
        reader = threading.Thread(target=read_while_written, daemon=True)
        reader.start()
        first = out.read_text()  # written before the server answers its first request
        assert "· revision 0 · " in first and "audience public" in first
        _as_state_renders_it(project, first, *options)
        # a write through the API
        r = server.post("/assert", OWNER, json={"text": 'standing_agent("prime"). open_item("rc-2", "RC 2 review").'})
        assert r.status_code == 200, r.text
        text = _wait_for(out, lambda t: "- rc-2: RC 2 review" in t, "the API's write")
        _as_state_renders_it(project, text, *options)
        # writes by another process: a private one stays out of the public file
        policy = load(str(project / "policy.rules"))
        soon = int(time.time()) + 4
        with open_store(str(project / "o.db"), schema_of(policy)) as store:
            store.assert_facts([("open_item", ("vault", "rotate the vault key"))], author="jw", layer="sovereign")
            rev = store.assert_facts(
                [("open_item", ("rc-3", "RC 3 review")), ("resolved", ("rc-2", soon))], author="jw"
            )
        text = _wait_for(out, lambda t: f"· revision {rev} · " in t, f"revision {rev}")
        assert "- rc-3: RC 3 review [asserted jw " in text and "- rc-2: RC 2 review" in text and "vault" not in text
        _as_state_renders_it(project, text, *options)
        # a decision is a new revision too
        decided = server.post("/check", json={"request": {"id": "d1", "kind": "write", "target": "/x", "epoch": 1}})
        assert decided.status_code == 200
        text = _wait_for(out, lambda t: f"· revision {decided.json()['seq']} · " in t, "the decision's revision")
        # the clock alone: rc-2 is resolved at `soon`, with no new event
        text = _wait_for(out, lambda t: "rc-2" not in t, "rc-2 resolved by the clock", seconds=30)
        assert f"· revision {decided.json()['seq']} · " in text
        _as_state_renders_it(project, text, *options)
        done.set()
        reader.join()
        stderr = server.stop()
    assert not torn, torn[:1]
    assert "Traceback" not in stderr and "not current" not in stderr


def test_a_bad_state_file_option_is_an_error_before_serving(project: Path) -> None:
    base = [
        sys.executable,
        "-c",
        "from ordinance.cli import main; main()",
        "serve",
        "--policy",
        str(project / "policy.rules"),
        "--db",
        str(project / "o.db"),
        "--tokens",
        str(project / "tokens.toml"),
        "--port",
        "1",
    ]
    for extra, code in (
        (["--state-out", str(project / "s.md"), "--state-audience", "nobody"], "unknown_audience"),
        (["--state-out", str(project / "s.md"), "--state-cap", "10"], "bad_cap"),
        (["--state-cap", "900"], "usage"),
    ):
        done = subprocess.run(base + extra, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and f"error[{code}]" in done.stderr, (extra, done.stderr)
        assert not (project / "s.md").exists()


def test_the_state_file_is_rewritten_at_its_change_points_and_only_when_a_line_changes(
    store_url: str, tmp_path: Path
) -> None:
    from ordinance.serve.state_file import StateFile
    from ordinance.testing.scenario import load_scenario, load_steps
    from ordinance.values import parse_instant

    night = load_scenario(Path(__file__).parent.parent / "fixtures" / "incident_prime_state_file.toml")
    store = open_store(store_url, schema_of(night.policy))
    load_steps(store, night)
    clock = [parse_instant("2026-08-14T23:38:00Z")]
    keeper = StateFile(night.policy, store, str(tmp_path / "prime-state.md"), clock=lambda: clock[0])
    try:
        assert keeper.render() and keeper.writes == 1
        # news-rc's lease runs out at 23:40: the first change point
        assert keeper.due == parse_instant("2026-08-14T23:40:00Z") and not keeper.stale()
        clock[0] = parse_instant("2026-08-14T23:39:59Z")
        assert not keeper.stale()
        clock[0] = keeper.due
        assert keeper.stale() and keeper.render()
        assert (
            "news-rc: watch the two RCs, report merges · sib-news · silent" in (tmp_path / "prime-state.md").read_text()
        )
        clock[0] = keeper.due  # just after the instant: nothing else moved, the file is left as it is
        assert keeper.render() is False and keeper.writes == 2
        assert keeper.due == parse_instant("2026-08-14T23:41:00Z")  # the readback of 23:41 becomes valid
        clock[0] = parse_instant("2026-08-14T23:59:00Z")
        keeper.render()
        assert keeper.due == parse_instant("2026-08-15T00:00:00Z")  # stamps print their date from midnight
        late = store.assert_facts([("open_item", ("late", "a late item"))], author="jw")
        assert keeper.stale() and keeper.render()
        assert f"- late: a late item [asserted jw] (r{late})" in (tmp_path / "prime-state.md").read_text()
    finally:
        keeper.stop()


def test_a_policy_that_uses_now_as_a_value_has_its_state_file_refreshed_on_a_period(tmp_path: Path) -> None:
    from ordinance.serve.state_file import REFRESH, StateFile
    from ordinance.testing.scenario import compile_policy
    from ordinance.values import parse_instant

    policy = compile_policy(
        '.include "continuity"\n.decl looked(at: time)\nlooked(T) :- standing_agent(_), T = $now.\n'
    )
    store = open_store(str(tmp_path / "s.db"), schema_of(policy))
    store.assert_facts([("standing_agent", ("prime",)), ("open_item", ("rc-1", "review"))], author="jw")
    now = parse_instant("2026-08-14T23:00:00Z")
    keeper = StateFile(policy, store, str(tmp_path / "state.md"), clock=lambda: now)
    try:
        assert keeper.render() and keeper.projector.next_change(None, now) is None
        assert keeper.due == now + REFRESH
    finally:
        keeper.stop()


def test_writes_are_decided_by_the_policy(tmp_path: Path) -> None:
    """`may_assert` is the policy's: it can make a relation owner-only, or let
    a principal write one the owner alone writes by default."""
    from ordinance.serve import Forbidden, Principal, Service
    from ordinance.values import parse_instant

    now = parse_instant(NOW)

    policy = compile_text(
        CLAUDE_CODE_POLICY
        + """
owner_only("lease").                                              // leases are the owner's here
may_assert("ci", "revoke") :- request(_, "assert", "revoke", "ci", _).   // and CI may revoke
"""
    )
    with open_store(str(tmp_path / "w.db"), schema_of(policy)) as store:
        service = Service(policy, store)
        lease = [("lease", ("job", "claude-code", 1, now + 60))]
        with pytest.raises(Forbidden, match="may not assert `lease`"):
            service.write(Principal("claude-code"), lease)
        assert service.write(Principal("jw", owner=True), lease)["written"] == 1
        assert service.write(Principal("ci"), [("revoke", ("claude-code", "/p", 1))])["written"] == 1
        with pytest.raises(Forbidden, match="may not assert `grant`"):
            service.write(Principal("ci"), [("grant", ("ci", "/", 1))])
        assert [e.author for e in store.events()] == ["jw", "ci"]


def test_every_acknowledged_decision_survives_a_crash_of_the_server(project: Path) -> None:
    """Concurrent /check calls (decided in groups, one commit each) and
    hook calls (decision and intent receipt in one commit); SIGKILL the
    server mid-load: every decision a caller was answered with is in the
    log, as answered, with the hook's intent receipt beside it."""
    import signal
    import threading
    import time

    import httpx

    with Served(project / "policy.rules", str(project / "o.db"), project / "tokens.toml") as server:
        grant_agent(server)
        acked: list[tuple[str, int, bool]] = []  # (request id, seq, a hook's)
        stop = threading.Event()

        def client(n: int) -> None:
            with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {AGENT}"}, timeout=30) as c:
                for i in range(10**6):
                    if stop.is_set():
                        return
                    rid = f"c{n}-{i}"
                    try:
                        if n % 2:
                            body = {"tool_name": "Bash", "tool_use_id": rid, "cwd": "/home/me/p"}
                            body["tool_input"] = {"command": "git status"}
                            out = c.post("/hooks/claude-code", json=body).json()["hookSpecificOutput"]
                            assert "permissionDecision" not in out, out  # permitted: deferred to Claude Code
                            acked.append((f"cc-{rid}", int(out["additionalContext"].split()[-1][:-1]), True))
                        else:
                            request = {"id": rid, "kind": "write", "target": "/home/me/p/x", "epoch": 1}
                            got = c.post("/check", json={"request": {**request, "scope": "/home/me/p"}}).json()
                            assert got["allowed"] is True, got
                            acked.append((rid, got["seq"], False))
                    except (httpx.TransportError, ValueError):
                        return  # the server is gone: this call was never acknowledged

        clients = [threading.Thread(target=client, args=(n,)) for n in range(6)]
        for th in clients:
            th.start()
        deadline = time.monotonic() + 60
        while len(acked) < 60 and time.monotonic() < deadline:
            time.sleep(0.01)
        server.proc.send_signal(signal.SIGKILL)
        server.proc.wait(timeout=10)
        stop.set()
        for th in clients:
            th.join(timeout=60)
    assert len(acked) >= 60 and any(hook for *_, hook in acked) and not all(hook for *_, hook in acked)
    with open_store(str(project / "o.db")) as store:
        logged = {e.seq: e for e in store.events(kinds=["decision"])}
        intents = {e.args[0] for e in store.events(kinds=["receipt"]) if e.args[1] == "intent"}
    for rid, seq, hook in acked:
        assert seq in logged and logged[seq].payload["request"]["id"] == rid and logged[seq].payload["allowed"]
        assert (rid in intents) == hook

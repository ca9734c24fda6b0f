"""No request stalls another, and no input is an `error[internal]`: the
server authenticates and sizes a body before reading it, runs every handler
off the event loop, and refuses each bad field as its own request's 4xx."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

from ordinance.cli.init import CLAUDE_CODE_POLICY
from ordinance.serve.app import MAX_BODY
from served import AGENT, OWNER, Served, write_tokens

NOW = "2026-12-01T12:00:00Z"
# a request-side relation that makes a query's overlay slow: N * N candidates
# a filter rejects (cut by the gate's deadline)
SLOW = """
.decl request_size(a: symbol, n: number)
.decl hit(a: symbol)
hit(A) :- request_size(A, N), X = range(0, N), Y = range(0, N), X + Y < 0.
"""


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[Served]:
    (tmp_path / "policy.rules").write_text(CLAUDE_CODE_POLICY + SLOW)
    write_tokens(tmp_path / "tokens.toml")
    with Served(tmp_path / "policy.rules", str(tmp_path / "o.db"), tmp_path / "tokens.toml") as s:
        r = s.post("/assert", OWNER, json={"text": 'grant("claude-code", "/p", 1).'})
        assert r.status_code == 200, r.text
        yield s


def _raw(server: Served, head: str, body: bytes = b"") -> tuple[int, dict[str, Any]]:
    """Send `head` (and `body`) on a fresh connection; the status and JSON answer."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(head.encode() + body)
        data = b""
        while b"\r\n\r\n" not in data or len(data.split(b"\r\n\r\n", 1)[1]) < _length(data):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    status = int(data.split(b" ", 2)[1])
    return status, json.loads(data.split(b"\r\n\r\n", 1)[1])


def _length(data: bytes) -> int:
    for line in data.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 1 << 60


def _head(path: str, length: int, token: str | None) -> str:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    return (
        f"POST {path} HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    )


GIGABYTE = 1 << 30


@pytest.mark.parametrize("path", ["/check", "/assert", "/load", "/query", "/why", "/why-not"])
def test_a_huge_body_is_refused_before_it_is_read(server: Served, path: str) -> None:
    # the answers come with not one byte of the body sent: the server never waited to read it
    status, body = _raw(server, _head(path, GIGABYTE, None))
    assert status == 401 and body["error"]["code"] == "unauthorized"
    status, body = _raw(server, _head(path, GIGABYTE, AGENT))
    assert status == 413 and body["error"]["code"] == "too_large"
    assert server.get("/health", None).status_code == 200


def test_a_huge_hook_body_without_a_token_is_denied_unread(server: Served) -> None:
    status, body = _raw(server, _head("/hooks/claude-code", GIGABYTE, None))
    assert status == 200 and "error[unauthorized]" in body["hookSpecificOutput"]["permissionDecisionReason"]
    status, body = _raw(server, _head("/hooks/claude-code", GIGABYTE, AGENT))
    assert status == 200 and "error[too_large]" in body["hookSpecificOutput"]["permissionDecisionReason"]


def test_a_streamed_body_is_cut_at_the_cap(server: Served) -> None:
    """Without a Content-Length (chunked), the body is refused once it passes the cap."""
    chunk = b"[" * (1 << 20)

    def chunks() -> Iterator[bytes]:
        for _ in range(MAX_BODY // len(chunk) + 4):
            yield chunk

    try:
        r = server.post("/check", AGENT, content=chunks())
    except httpx.TransportError:  # the server closed the connection after its answer: also refused
        pass
    else:
        assert r.status_code == 413 and r.json()["error"]["code"] == "too_large"
    assert server.get("/health", None).status_code == 200


def test_health_answers_while_other_clients_send_slow_requests(server: Served) -> None:
    slow = {
        "pattern": 'hit("s1")',
        "request": {"id": "s1", "kind": "k", "target": "/p", "epoch": 1, "attributes": {"request_size": [[100000]]}},
    }
    answers: list[int] = []

    def send(path: str) -> None:
        with httpx.Client(base_url=server.url, timeout=120) as client:
            body = slow if path == "/query" else {"fact": 'hit("s1")', "request": slow["request"]}
            answers.append(client.post(path, json=body, headers={"Authorization": f"Bearer {AGENT}"}).status_code)

    threads = [threading.Thread(target=send, args=(p,)) for p in ("/query", "/why", "/why-not", "/query")]
    for t in threads:
        t.start()
    time.sleep(0.5)  # they have started
    during = 0  # /health answers that came back while a slow request was still being worked on
    while any(t.is_alive() for t in threads):
        assert server.get("/health", None).status_code == 200
        during += len(answers) < len(threads)
        time.sleep(0.1)
    for t in threads:
        t.join()
    assert during > 0  # a /health waiting for the others' work would only come back after their answers
    assert answers == [400] * 4  # each was cut by the gate's deadline: limit_exceeded, as data


def test_a_bad_field_fails_only_its_own_request(server: Served) -> None:
    """Good and bad checks at once: the bad ones are their own 400s, the good ones decided."""
    results: dict[int, httpx.Response] = {}

    def send(n: int) -> None:
        request: dict[str, Any] = {"id": f"r{n}", "kind": "write", "target": "/p/x", "epoch": 1}
        if n % 4 == 0:
            request["key"] = 5
        with httpx.Client(base_url=server.url, timeout=120) as client:
            results[n] = client.post("/check", json={"request": request}, headers={"Authorization": f"Bearer {AGENT}"})

    threads = [threading.Thread(target=send, args=(n,)) for n in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for n, r in results.items():
        if n % 4 == 0:
            assert r.status_code == 400 and r.json()["error"]["code"] == "bad_field", r.text
        else:
            assert r.status_code == 200 and "allowed" in r.json(), r.text
    logged = server.get("/log", OWNER, params={"kind": "decision", "limit": 1000}).json()["events"]
    assert len(logged) == 30


def _deep(n: int) -> bytes:
    return b'{"request": ' + b"[" * n + b"]" * n + b"}"


@pytest.mark.parametrize("path", ["/check", "/assert", "/query", "/why", "/why-not"])
def test_json_nested_too_deep_is_too_deep(server: Served, path: str) -> None:
    r = server.post(path, AGENT, content=_deep(100_000))
    assert r.status_code == 400 and r.json()["error"]["code"] == "too_deep", r.text
    r = server.post(path, AGENT, content=_deep(100))  # parses, but deeper than the limit
    assert r.status_code == 400 and r.json()["error"]["code"] == "too_deep", r.text


def test_deep_json_lines_and_hook_input(server: Served) -> None:
    line = b'{"relation": "grant", "args": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    r = server.post("/load", OWNER, content=line)
    assert r.status_code == 400 and r.json()["error"]["code"] == "too_deep", r.text
    r = server.post("/hooks/claude-code", AGENT, content=b"[" * 100_000 + b"]" * 100_000)
    assert r.status_code == 200 and "error[too_deep]" in r.json()["hookSpecificOutput"]["permissionDecisionReason"]


def test_a_huge_integer_is_integer_range(server: Served) -> None:
    big = "9" * 5000
    bodies = {
        "/check": '{"request": {"id": "a", "kind": "k", "target": "/p", "epoch": %s}}' % big,
        "/assert": '{"facts": [{"relation": "grant", "args": ["claude-code", "/p", %s]}]}' % big,
        "/query": '{"pattern": "permit(X)", "now": %s}' % big,
    }
    for path, body in bodies.items():
        r = server.post(path, OWNER, content=body.encode())
        assert r.status_code == 400 and r.json()["error"]["code"] == "integer_range", (path, r.text)
    r = server.post("/load", OWNER, content=b'{"relation": "grant", "args": ["x", "/p", %s]}\n' % big.encode())
    assert r.status_code == 400 and r.json()["error"]["code"] == "integer_range", r.text


@pytest.mark.parametrize(
    "field", [{"uses": 5}, {"needs": [1, 2]}, {"needs": 5}, {"key": 5}, {"scope": 7}, {"irreversible": "yes"}]
)
def test_a_request_field_of_the_wrong_type_is_bad_field(server: Served, field: dict[str, Any]) -> None:
    request = {"id": "a", "kind": "write", "target": "/p/x", "epoch": 1, **field}
    for path, body in (("/check", {"request": request}), ("/query", {"pattern": "permit(X)", "request": request})):
        r = server.post(path, AGENT, json=body)
        assert r.status_code == 400 and r.json()["error"]["code"] == "bad_field", (path, r.text)


def test_health_never_waits_for_the_service_lock(tmp_path: Path) -> None:
    """A decision stuck on the store (another process's SQLite writer) holds
    the service's lock: /health answers from the revision it last read."""
    from ordinance.facts import open_store, schema_of
    from ordinance.rules import compile_text
    from ordinance.serve import Service

    policy = compile_text(CLAUDE_CODE_POLICY)
    with open_store(str(tmp_path / "h.db"), schema_of(policy)) as store:
        service = Service(policy, store)
        store.assert_facts([("grant", ("claude-code", "/p", 1))])
        assert service.health()["revision"] == 1
        held, release = threading.Event(), threading.Event()

        def hold() -> None:
            with service.lock:
                held.set()
                release.wait(60)

        holder = threading.Thread(target=hold)
        holder.start()
        held.wait(60)
        try:
            store.assert_facts([("grant", ("bob", "/p", 1))])
            answered = service.health()  # would block until `release` if it took the lock
            assert answered["status"] == "ok" and answered["revision"] == 1
        finally:
            release.set()
            holder.join()
        assert service.health()["revision"] == 2


def test_a_group_commit_that_fails_decides_each_request_alone(tmp_path: Path) -> None:
    """Should a request slip past validation and fail the batch's append (here
    one whose key was forced to a number after it was built), its batch
    neighbours are decided and logged alone: only it hears the error. A body
    that is not JSON, read in the same batch, is refused alone too."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from ordinance.diagnostics import InputError, StoreError
    from ordinance.facts import open_store, schema_of
    from ordinance.rules import compile_text
    from ordinance.serve import Principal, Service
    from ordinance.serve.app import Batcher

    policy = compile_text(CLAUDE_CODE_POLICY)
    with open_store(str(tmp_path / "b.db"), schema_of(policy)) as store:
        service = Service(policy, store)
        real_ask = service.ask

        def ask(who: Any, body: Any) -> Any:
            request, now, clock, proofs = real_ask(who, body)
            if request.id == "r3":
                object.__setattr__(request, "key", 5)  # what the payload check refuses at the append
            return request, now, clock, proofs

        service.ask = ask  # type: ignore[method-assign]
        bodies = [
            json.dumps(
                {"request": {"id": f"r{n}", "kind": "write", "target": "/p/x", "epoch": 1}, "now": 1_800_000_000}
            ).encode()
            for n in range(6)
        ]
        bodies.append(b'{"request": ')

        async def go() -> list[Any]:
            batcher = Batcher(service, ThreadPoolExecutor(2))
            asks = [batcher.check(Principal("claude-code", clock=True), body) for body in bodies]
            return await asyncio.gather(*asks, return_exceptions=True)

        answers = asyncio.run(go())
        assert isinstance(answers[3], StoreError) and answers[3].code == "bad_decision"
        assert isinstance(answers[6], InputError) and answers[6].code == "bad_json", answers[6]
        assert [a["request"]["id"] for n, a in enumerate(answers) if n not in (3, 6)] == ["r0", "r1", "r2", "r4", "r5"]
        assert sorted(e.payload["request"]["id"] for e in store.events(kinds=["decision"])) == [
            "r0",
            "r1",
            "r2",
            "r4",
            "r5",
        ]


def test_health_reads_the_revision_off_the_event_loop(store_url: str) -> None:
    """A revision read that hangs (a PostgreSQL round trip, a SQLite file
    another process holds) does not hold /health: it answers the revision
    last read while the read is still out, and the next /health after the
    read came back answers the new one."""
    from starlette.testclient import TestClient

    from ordinance.facts import open_store, schema_of
    from ordinance.rules import compile_text
    from ordinance.serve import Service
    from ordinance.serve.app import create_app
    from ordinance.serve.identity import Principal

    policy = compile_text(CLAUDE_CODE_POLICY)
    with open_store(store_url, schema_of(policy)) as store:
        store.assert_facts([("grant", ("claude-code", "/p", 1))])
        service = Service(policy, store)
        read, release = threading.Event(), threading.Event()
        real = store.revision

        def stuck() -> int:
            read.set()
            release.wait(60)
            return real()

        app = create_app(service, anonymous=Principal("owner", owner=True))
        with TestClient(app) as client:
            assert client.get("/health").json()["revision"] == 1
            store.assert_facts([("grant", ("bob", "/p", 1))])
            store.revision = stuck  # type: ignore[method-assign]
            try:
                answered = client.get("/health").json()
                assert read.is_set() and not release.is_set()  # answered while the read was out
                assert answered["status"] == "ok" and answered["revision"] == 1
            finally:
                release.set()
                store.revision = real  # type: ignore[method-assign]
            for _ in range(200):  # the next /health reads it (once the stuck read has come back)
                if client.get("/health").json()["revision"] == 2:
                    break
                time.sleep(0.05)
            assert client.get("/health").json()["revision"] == 2

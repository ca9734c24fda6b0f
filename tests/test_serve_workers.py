"""`ordinance serve --workers N` (N processes on one socket and one store)
and `serve --deadline` (each request's evaluation bound)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import httpx

from ordinance.cli.init import CLAUDE_CODE_POLICY
from served import AGENT, OWNER, Served, write_tokens

NOW = "2026-12-01T12:00:00Z"
REQUEST = {"kind": "write", "target": "/home/me/p/x", "epoch": 1}
SLOW = """
.decl request_size(a: symbol, n: number)
.decl hit(a: symbol)
hit(A) :- request_size(A, N), X = range(0, N), Y = range(0, N), X + Y < 0.
"""


def _children(pid: int) -> list[int]:
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def _fresh(server: Served, rid: str) -> dict[str, object]:
    """One check on a connection of its own (so the kernel may hand it to either worker)."""
    with httpx.Client(base_url=server.url, timeout=30) as client:
        body = {"request": {**REQUEST, "id": rid}, "now": NOW}
        r = client.post("/check", json=body, headers={"Authorization": f"Bearer {AGENT}"})
    assert r.status_code == 200, r.text
    return dict(r.json())


def test_workers_share_one_socket_and_one_store(tmp_path: Path) -> None:
    (tmp_path / "policy.rules").write_text(CLAUDE_CODE_POLICY)
    write_tokens(tmp_path / "tokens.toml")
    server = Served(
        tmp_path / "policy.rules", str(tmp_path / "o.db"), tmp_path / "tokens.toml", extra=("--workers", "2")
    )
    with server:
        workers = _children(server.proc.pid)
        assert len(workers) == 2
        assert server.post("/assert", OWNER, json={"text": 'grant("claude-code", "/home/me/p", 1).'}).status_code == 200
        allowed = [_fresh(server, f"a{n}") for n in range(20)]
        assert all(d["allowed"] is True for d in allowed), allowed
        assert len({d["seq"] for d in allowed}) == 20  # every one logged, each at its own place
        # the owner's stop through one connection counts for every worker's next decision
        assert server.post("/assert", OWNER, json={"text": 'stop("everything", 0).'}).status_code == 200
        denied = [_fresh(server, f"d{n}") for n in range(20)]
        assert all(d["allowed"] is False for d in denied), denied
        assert {d["reasons"][0]["code"] for d in denied} == {"owner-stop"}  # type: ignore[index]
    assert server.proc.returncode == 0  # stopped as asked
    for pid in workers:  # the workers stop with the parent
        for _ in range(100):
            if not os.path.exists(f"/proc/{pid}") or "zombie" in _state(pid):
                break
            time.sleep(0.1)
        assert not os.path.exists(f"/proc/{pid}") or "zombie" in _state(pid)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().split("State:")[1].split("\n")[0].lower()
    except (FileNotFoundError, IndexError):
        return "zombie"


def test_a_worker_that_cannot_start_stops_the_server(tmp_path: Path) -> None:
    (tmp_path / "policy.rules").write_text(CLAUDE_CODE_POLICY)
    write_tokens(tmp_path / "tokens.toml")
    # a bad state-file audience: the first worker refuses it, and the parent stops the other one
    try:
        Served(
            tmp_path / "policy.rules",
            str(tmp_path / "o.db"),
            tmp_path / "tokens.toml",
            extra=("--workers", "2", "--state-out", str(tmp_path / "s.md"), "--state-audience", "nobody"),
        ).stop()
    except RuntimeError as exc:
        assert "unknown_audience" in str(exc) or "audience" in str(exc), exc
    else:
        raise AssertionError("the server started with a bad audience")


def test_serve_deadline_bounds_each_request(tmp_path: Path) -> None:
    (tmp_path / "policy.rules").write_text(CLAUDE_CODE_POLICY + SLOW)
    write_tokens(tmp_path / "tokens.toml")
    with Served(
        tmp_path / "policy.rules", str(tmp_path / "o.db"), tmp_path / "tokens.toml", extra=("--deadline", "0.5")
    ) as server:
        slow = {"id": "s1", "kind": "k", "target": "/p", "epoch": 1, "attributes": {"request_size": [[100000]]}}
        r = server.post("/query", json={"pattern": 'hit("s1")', "request": slow})
        assert r.status_code == 400, r.text
        error = r.json()["error"]
        assert error["code"] == "limit_exceeded" and "deadline of 0.5 seconds" in error["message"], error

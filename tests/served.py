"""Start `ordinance serve` as a real process for the tests (and benchmarks)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

__all__ = ["Served", "free_port", "write_tokens", "OWNER", "AGENT", "OTHER"]

OWNER, AGENT, OTHER = "owner-token-0123456789", "agent-token-0123456789", "other-token-0123456789"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_tokens(path: Path) -> Path:
    path.write_text(
        # a test rig: every principal holds the clock (its `now` decides; see test_boundary for one that does not)
        f'[[principal]]\nname = "jw"\nowner = true\nclock = true\ntoken = "{OWNER}"\n\n'
        f'[[principal]]\nname = "claude-code"\nclock = true\ntoken = "{AGENT}"\n\n'
        f'[[principal]]\nname = "bob"\nclock = true\ntoken = "{OTHER}"\n'
    )
    return path


class Served:
    """`ordinance serve` on a free port (or `uds`), stopped on exit."""

    def __init__(
        self,
        policy: Path,
        db: str,
        tokens: Path,
        *,
        uds: str | None = None,
        extra: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ):
        from ordinance.facts import open_store

        open_store(db).close()  # the store exists first, as after `ordinance init`
        args = [
            sys.executable,
            "-c",
            "from ordinance.cli import main; main()",
            "serve",
            "--policy",
            str(policy),
            "--db",
            db,
            "--tokens",
            str(tokens),
            *extra,
        ]
        self.uds = uds
        self.url = "http://localhost" if uds else ""
        transport = httpx.HTTPTransport(uds=uds) if uds else None
        # a port free when asked may be taken by a parallel test before the server
        # binds it: the server then exits, and starts again on another port
        for attempt in range(3):
            self.port = free_port()
            argv = args + (["--uds", uds] if uds else ["--port", str(self.port)])
            self.proc = subprocess.Popen(
                argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={**os.environ, "ORDINANCE_DEBUG": "", **(env or {})},
                cwd=cwd,
            )
            if not uds:
                self.url = f"http://127.0.0.1:{self.port}"
            self.http = httpx.Client(base_url=self.url, transport=transport, timeout=30)
            err = self._started()
            if err is None:
                return
            self.stop()
            if uds or "address already in use" not in err.lower() or attempt == 2:
                raise RuntimeError(f"ordinance serve did not start: {err[-2000:]}")

    def _started(self) -> str | None:
        """None once the server answers its health check (and is still this
        process), else what it wrote to stderr before it exited."""
        deadline = time.monotonic() + 60
        while True:
            try:
                if self.http.get("/health").status_code == 200 and self.proc.poll() is None:
                    return None
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                _, err = self.proc.communicate(timeout=5) if self.proc.poll() is not None else (b"", b"")
                return err.decode(errors="replace") or "no answer within 60 s"
            time.sleep(0.1)

    def post(self, path: str, token: str | None = AGENT, **kw: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return self.http.post(path, headers=headers, **kw)

    def get(self, path: str, token: str | None = AGENT, **kw: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return self.http.get(path, headers=headers, **kw)

    def stop(self) -> str:
        self.http.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        _, err = self.proc.communicate()
        return err.decode()

    def __enter__(self) -> Served:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

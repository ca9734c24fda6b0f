"""What the end-to-end tests share: the clients npm installed
(`.ci/install-clients`), a gated project (a git repository with a bare
remote, the Claude Code example policy, tokens, the agent's grant) and a
running `ordinance serve` over it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

__all__ = ["ROOT", "CLIENTS", "SLOW", "TOKEN", "client", "free_port", "Gated", "gated", "captured", "stable", "git"]

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / ".e2e-clients" / "node_modules" / ".bin"
CAPTURE = Path(__file__).with_name("capture.py")
TOKEN = "e2e-agent-token-0123456789"
OWNER_TOKEN = "e2e-owner-token-0123456789"
SLOW = 120  # seconds a client run may take on a loaded machine


def client(name: str) -> Path:
    """The npm-installed client; run `.ci/install-clients` if it is missing."""
    path = CLIENTS / name
    if not path.exists():
        subprocess.run([str(ROOT / ".ci" / "install-clients")], check=True, timeout=600)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def git(cwd: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="e2e", GIT_AUTHOR_EMAIL="e2e@example.invalid")
    env.update(GIT_COMMITTER_NAME="e2e", GIT_COMMITTER_EMAIL="e2e@example.invalid")
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def ordinance() -> str:
    return str(Path(sys.executable).with_name("ordinance"))


@dataclass
class Gated:
    """A project under the gate: `project` (a git repository whose `origin`
    is the bare `remote`, `main` pushed), `outside` (a sibling directory),
    `owner` (policy, store, tokens: outside the project) and `server` (the
    URL of a running `ordinance serve`, or of nothing if it was not started)."""

    project: Path
    remote: Path
    outside: Path
    owner: Path
    server: str
    hooks: Path  # where capture.py writes each hook payload
    proc: subprocess.Popen[bytes] | None = field(default=None)

    def hook_command(self, host: str = "claude-code") -> str:
        return f"{sys.executable} {CAPTURE} {self.hooks} {ordinance()} hook {host} --server {self.server}"

    def payloads(self, event: str) -> list[dict[str, Any]]:
        return [json.loads(p.read_bytes()) for p in sorted(self.hooks.glob(f"*-{event}.json"))]

    def receipts(self) -> list[tuple[str, str]]:
        """(call id, kind) of every receipt the gate wrote, in order."""
        from ordinance.facts import open_store

        with open_store(str(self.owner / "ordinance.db")) as store:
            return [(str(e.args[0]), str(e.args[1])) for e in store.events(kinds=["receipt"])]


def gated(tmp: Path, *, serve: bool = True) -> Iterator[Gated]:
    """A Gated project under `tmp` (a generator: the server stops after)."""
    from ordinance.cli.init import CLAUDE_CODE_POLICY

    project, remote, outside, owner = (tmp / n for n in ("project", "remote.git", "outside", "owner"))
    for d in (project, outside, owner):
        d.mkdir()
    project = project.resolve()
    git(tmp, "init", "-q", "--bare", "-b", "main", str(remote))
    git(project, "init", "-q", "-b", "main")
    (project / "a.py").write_text("print('a')\n")
    (project / "b.py").write_text("print('b')\n")
    git(project, "add", ".")
    git(project, "commit", "-q", "-m", "first")
    git(project, "remote", "add", "origin", str(remote))
    git(project, "push", "-q", "origin", "main")
    policy, db, tokens = owner / "policy.rules", owner / "ordinance.db", owner / "tokens.toml"
    policy.write_text(CLAUDE_CODE_POLICY)
    tokens.write_text(
        f'[[principal]]\nname = "owner"\nowner = true\ntoken = "{OWNER_TOKEN}"\n\n'
        f'[[principal]]\nname = "claude-code"\ntoken = "{TOKEN}"\n'
    )
    tokens.chmod(0o600)
    grant = f'grant("claude-code", "{project}", 1).'
    subprocess.run(
        [ordinance(), "assert", grant, "--db", str(db), "--policy", str(policy)], check=True, capture_output=True
    )
    port = free_port()
    g = Gated(project, remote, outside, owner, f"http://127.0.0.1:{port}", tmp / "hooks")
    if serve:
        g.proc = subprocess.Popen(
            [ordinance(), "serve", "--tokens", str(tokens), "--project", str(project), "--port", str(port)]
            + ["--db", str(db), "--policy", str(policy)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + SLOW
        while True:
            try:
                urllib.request.urlopen(g.server + "/health", timeout=2).read()
                break
            except OSError:
                if g.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"ordinance serve did not start: {g.proc.stderr.read()!r}") from None
                time.sleep(0.1)
    try:
        yield g
    finally:
        if g.proc is not None:
            g.proc.terminate()
            g.proc.wait(timeout=30)


def captured(g: Gated, client: str, name: str, keep: dict[str, str]) -> None:
    """Copy payloads of the run into tests/hosts_fixtures/CLIENT/ as NAME-EVENT.json
    (`keep` maps an event to its file stem), when ORDINANCE_E2E_CAPTURE=1."""
    if os.environ.get("ORDINANCE_E2E_CAPTURE") != "1":
        return
    out = ROOT / "tests" / "hosts_fixtures" / client
    out.mkdir(parents=True, exist_ok=True)
    for event, stem in keep.items():
        found = g.payloads(event)
        if found:
            text = json.dumps(found[0], indent=2, ensure_ascii=False) + "\n"
            (out / f"{stem}.json").write_text(stable(text, g.project.parent))


def stable(text: str, tmp: Path) -> str:
    """`text` with the run's temporary directory as /tmp/e2e (also in the
    dashed form Claude Code names its projects' transcript directories by)."""
    dashed = "".join(c if c.isalnum() else "-" for c in str(tmp))
    return text.replace(str(tmp), "/tmp/e2e").replace(dashed, "-tmp-e2e")

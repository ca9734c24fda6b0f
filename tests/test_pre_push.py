"""git's pre-push hook, the guard at the effect: real `git push` variants
against a real local bare remote. A push that would rewrite main is refused
however it is spelled (git reports the refs it really pushes); a
fast-forward push and a forced push to a feature branch pass."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from ordinance.cli.init import CLAUDE_CODE_POLICY, install_pre_push
from ordinance.facts import open_store, schema_of
from ordinance.hosts.pre_push import updates
from ordinance.rules import compile_text

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["git", *args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=120)
    if check:
        assert done.returncode == 0, done.stderr
    return done


@pytest.fixture()
def repo(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    remote, work = tmp_path / "remote.git", tmp_path / "work"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(tmp_path, "init", "-q", "-b", "main", str(work))
    git(work, "remote", "add", "origin", str(remote))
    (work / "a").write_text("1")
    git(work, "add", "a")
    git(work, "commit", "-qm", "one")
    git(work, "push", "-q", "origin", "main")  # before the hook: the remote's first main
    policy = tmp_path / "policy.rules"
    policy.write_text(CLAUDE_CODE_POLICY)
    with open_store(str(tmp_path / "o.db"), schema_of(compile_text(CLAUDE_CODE_POLICY))) as store:
        store.assert_facts([("grant", ("claude-code", str(work.resolve()), 1))], source="init", author="jw")
    hook = [sys.executable, "-c", "from ordinance.cli import main; main()", "hook", "pre-push"]
    hook += ["--db", str(tmp_path / "o.db"), "--policy", str(policy), "--project", str(work)]
    assert install_pre_push(work, shlex.join(hook)).startswith("installed")
    (work / "a").write_text("2")  # main rewritten locally: pushing it is a force push
    git(work, "commit", "-q", "--amend", "-am", "one, rewritten")
    yield work, remote


def remote_main(remote: Path) -> str:
    return git(remote, "rev-parse", "main").stdout.strip()


@pytest.mark.parametrize(
    "argv",
    [
        ["git", "push", "--force", "origin", "main"],
        ["git", "push", "-f", "origin", "main"],
        ["git", "push", "origin", "+main"],
        ["git", "push", "--force-with-lease", "origin", "main"],
        ["git", "push", "--force", "origin", "HEAD:refs/heads/main"],
        ["git", "-c", "alias.p=push -f", "p", "origin", "main"],
        ["git", "-c", "remote.origin.push=+refs/heads/main:refs/heads/main", "push", "origin"],
        ["COPY", "push", "-f", "origin", "main"],  # a copy of git under another name
    ],
)
def test_a_force_push_rewriting_main_is_refused_at_the_effect(repo: tuple[Path, Path], argv: list[str]) -> None:
    work, remote = repo
    before = remote_main(remote)
    if argv[0] == "COPY":
        copy = work.parent / "g"
        shutil.copy(shutil.which("git") or "git", copy)
        argv = [str(copy), *argv[1:]]
    done = subprocess.run(argv, cwd=work, env=ENV, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "ordinance refused this push" in done.stderr and "force-push-main" in done.stderr, done.stderr
    assert remote_main(remote) == before


def test_a_fast_forward_push_and_a_forced_feature_push_pass(repo: tuple[Path, Path]) -> None:
    work, remote = repo
    git(work, "reset", "-q", "--hard", "origin/main")  # back on the remote's main
    (work / "b").write_text("3")
    git(work, "add", "b")
    git(work, "commit", "-qm", "two")
    done = git(work, "push", "origin", "main", check=False)
    assert done.returncode == 0, done.stderr
    assert remote_main(remote) == git(work, "rev-parse", "main").stdout.strip()
    git(work, "checkout", "-qb", "feature")
    assert git(work, "push", "-q", "origin", "feature", check=False).returncode == 0
    git(work, "commit", "-q", "--amend", "-m", "two, rewritten")
    assert git(work, "push", "-q", "--force", "origin", "feature", check=False).returncode == 0


def test_forced_is_what_the_commits_say(repo: tuple[Path, Path]) -> None:
    work, remote = repo
    old, new = remote_main(remote), git(work, "rev-parse", "main").stdout.strip()
    zero = "0" * 40
    lines = f"refs/heads/main {new} refs/heads/main {old}\nrefs/heads/x {new} refs/heads/x {zero}\n"
    lines += f"(delete) {zero} refs/heads/y {new}\n"
    assert [u["forced"] for u in updates(lines, str(work))] == [True, False, True]
    git(work, "reset", "-q", "--hard", old)
    assert updates(f"refs/heads/main {old} refs/heads/main {old}\n", str(work))[0]["forced"] is False


def test_an_unreachable_gate_refuses_the_push(repo: tuple[Path, Path]) -> None:
    work, remote = repo
    hook = [sys.executable, "-c", "from ordinance.cli import main; main()", "hook", "pre-push"]
    install_pre_push(work, shlex.join([*hook, "--server", "http://127.0.0.1:9", "--timeout", "2"]))
    git(work, "reset", "-q", "--hard", "origin/main")
    (work / "c").write_text("4")
    git(work, "add", "c")
    git(work, "commit", "-qm", "three")
    done = git(work, "push", "origin", "main", check=False)
    assert done.returncode != 0 and "ordinance refused this push" in done.stderr


def test_the_hook_asks_a_running_server(repo: tuple[Path, Path]) -> None:
    """Installed as `init` installs it: `--server URL --token-file FILE`,
    the server deciding at /hooks/pre-push under its --project."""
    from served import AGENT, Served, write_tokens

    work, remote = repo
    tmp = work.parent
    token_file = tmp / "agent.token"
    token_file.write_text(AGENT + "\n")
    token_file.chmod(0o600)
    tokens = write_tokens(tmp / "tokens.toml")
    with Served(tmp / "policy.rules", str(tmp / "o.db"), tokens, extra=("--project", str(work))) as server:
        hook = [sys.executable, "-c", "from ordinance.cli import main; main()", "hook", "pre-push"]
        install_pre_push(work, shlex.join([*hook, "--server", server.url, "--token-file", str(token_file)]))
        before = remote_main(remote)
        forced = git(work, "push", "--force", "origin", "main", check=False)
        assert forced.returncode != 0 and "force-push-main" in forced.stderr, forced.stderr
        assert remote_main(remote) == before
        git(work, "checkout", "-qb", "topic")
        assert git(work, "push", "-q", "origin", "topic", check=False).returncode == 0
        assert server.post("/hooks/nope", json={}).status_code == 404

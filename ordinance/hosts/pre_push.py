"""git's `pre-push` hook: the guard at the effect for pushes.

git runs `.git/hooks/pre-push REMOTE URL` before it updates a remote, with
one line per ref it is about to push on stdin:

    <local ref> <local sha> <remote ref> <remote sha>

`updates` reads them in the repository: an update is forced when the remote
already has the ref (its sha is not all zeros) and its old commit is not an
ancestor of the new one (`git merge-base --is-ancestor`; a commit the local
repository does not have counts as not an ancestor), or when it deletes the
ref. However the push was spelled (an alias, `remote.origin.push`, a copy
of git under another name, a script), these are the refs git really pushes.

As a host (hosts/__init__.py), its payload is `{"hook_event_name":
"pre-push", "remote", "url", "cwd", "updates": [{"local_ref", "local_sha",
"remote_ref", "remote_sha", "forced"}]}` and each update is the request
facts the shell layer gives a push: `request_git(A, N, "push")`,
`request_push(A, N, Branch, Forced)` and `request_command(A, N, "git push
REMOTE LOCAL:REMOTE_REF")`, so one policy rule stops both. The tool is
`git-push`. Its answer is `{"decision": "allow"|"deny", "reason"}`: an ask
cannot be asked in git, so it refuses (and says so). It writes no receipts:
git runs no hook after the push.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from typing import Any, Mapping

from ..diagnostics import OrdinanceError
from . import OTHER, PRE, Call, Verdict

__all__ = ["NAME", "RECEIPTS", "call", "render", "failure", "updates", "ZERO"]

NAME = "git-pre-push"
RECEIPTS = False
ZERO = "0" * 40


def _ancestor(old: str, new: str, cwd: str) -> bool:
    try:
        done = subprocess.run(
            ["git", "merge-base", "--is-ancestor", old, new], cwd=cwd, capture_output=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def updates(lines: str, cwd: str) -> list[dict[str, Any]]:
    """git's pre-push stdin, each ref with whether its update is forced."""
    out = []
    for line in lines.splitlines():
        parts = line.split()
        if len(parts) != 4:
            continue
        local_ref, local_sha, remote_ref, remote_sha = parts
        zero = set(remote_sha) == {"0"}
        deleted = set(local_sha) == {"0"}
        forced = deleted or (not zero and not _ancestor(remote_sha, local_sha, cwd))
        out.append(
            {
                "local_ref": local_ref,
                "local_sha": local_sha,
                "remote_ref": remote_ref,
                "remote_sha": remote_sha,
                "forced": forced,
            }
        )
    return out


def _branch(ref: str) -> str:
    return ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else ref


def call(payload: Mapping[str, Any], project: str | None) -> Call:
    items = payload.get("updates")
    if not isinstance(items, list) or not all(isinstance(u, Mapping) for u in items):
        raise OrdinanceError("the pre-push payload has no `updates` list", code="bad_hook_payload")
    remote = str(payload.get("remote") or "")
    facts: list[tuple[str, tuple[Any, ...]]] = []
    for n, u in enumerate(items):
        local, ref = str(u.get("local_ref", "")), str(u.get("remote_ref", ""))
        facts += [
            ("request_git", (n, "push")),
            ("request_push", (n, _branch(ref), 1 if u.get("forced") is not False else 0)),
            ("request_command", (n, f"git push {remote} {local}:{ref}")),
        ]
    cwd = str(payload.get("cwd") or project or "/")
    event = payload.get("hook_event_name", "pre-push")
    return Call(
        phase=PRE if event == "pre-push" else OTHER,
        event="pre-push",
        id="push-" + hashlib.sha256(json.dumps([remote, items], sort_keys=True, default=str).encode()).hexdigest()[:16],
        tool="git-push",
        inputs={"remote": remote, "url": str(payload.get("url") or "")},
        cwd=cwd,
        project=project or cwd,
        # a push acts in the project whose refs it sends (the remote, a URL or a
        # local path, is in the inputs): the project's scopes hold it
        target=project or cwd,
        facts=tuple(facts),
    )


def render(verdict: Verdict) -> dict[str, Any]:
    if verdict.kind == "ask":
        return {"decision": "deny", "reason": f"{verdict.reason} (git cannot ask: refused)"}
    return {"decision": "deny" if verdict.kind == "deny" else "allow", "reason": verdict.reason}


def failure(event: Any, reason: str) -> dict[str, Any]:
    return {"decision": "deny", "reason": reason}

"""A host's Call as the gate's Request: the `request_*` facts of stdlib tools.rules.

    request_tool(A, Tool)              request_input(A, Field, Value)   every input (non-strings as JSON)
    request_project(A, Dir)            request_cwd(A, Dir)              request_session(A, Session)
    request_path(A, Path)              a file the call names (read or written)
    request_write(A, Path)             a file the call writes (a Write, or a shell redirection, `cp`, `rm`, ...)
    request_command(A, N, Text)        request_word(A, N, Position, Word)   the shell's simple commands
    request_unresolved(A, N, Why)      what the shell reading could not resolve (bash.py; N = -1: the whole text)
    request_git(A, N, Subcommand)      request_git_global(A, N, Option)     request_git_config(A, N, Key)
    request_git_option(A, N, Option)   request_push(A, N, Branch, Forced)   (git.py)

Every path is resolved (paths.resolve) against the call's working directory,
and so is the project: both sides of the boundary are real paths. Only the
relations the policy declares are filled.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Iterable, Mapping

from ..gate import Request
from . import Call
from .bash import read
from .git import git_facts, git_words
from .paths import resolve

__all__ = ["request_of", "digest", "SHELL_TOOLS"]

SHELL_TOOLS = frozenset({"Bash", "Monitor", "PowerShell"})  # tools that run shell text in `command`


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)


def digest(value: Any) -> str:
    """What the log keeps of a file's contents: `sha256:HEX length:N`."""
    data = _text(value).encode("utf-8", "surrogateescape")
    return f"sha256:{hashlib.sha256(data).hexdigest()} length:{len(data)}"


def _shell_facts(text: str, cwd: str) -> Iterable[tuple[str, tuple[Any, ...]]]:
    reading = read(text, cwd)
    for n, words in enumerate(reading.commands):
        yield "request_command", (n, " ".join(words))
        for k, w in enumerate(words):
            yield "request_word", (n, k, w)
        as_git = git_words(words)
        if as_git is not None:
            git = git_facts(as_git)
            if git.subcommand is not None:
                yield "request_git", (n, git.subcommand)
            for opt in dict.fromkeys(git.globals):
                yield "request_git_global", (n, opt)
            for key in dict.fromkeys(git.config):
                yield "request_git_config", (n, key)
            for opt in dict.fromkeys(git.options):
                yield "request_git_option", (n, opt)
            for branch, forced in dict.fromkeys(git.pushes):
                yield "request_push", (n, branch, int(forced))
    for n, why in reading.unresolved:
        yield "request_unresolved", (n, why)
    for path in reading.paths:
        yield "request_path", (path,)
    for path in reading.writes:
        yield "request_write", (path,)


def request_of(
    call: Call, agent: str, declared: Mapping[str, int], *, epoch: int = 1, shells: frozenset[str] = SHELL_TOOLS
) -> Request:
    """The Request of `call`, by `agent` under `epoch`."""
    cwd = resolve(call.cwd or call.project or "/", "/") or "/"
    root = resolve(call.project, cwd) or cwd if call.project else cwd
    facts: list[tuple[str, tuple[Any, ...]]] = [
        ("request_tool", (call.tool,)),
        ("request_project", (root,)),
        ("request_cwd", (cwd,)),
    ]
    if call.session:
        facts.append(("request_session", (call.session,)))
    for name, value in call.inputs.items():
        facts.append(("request_input", (str(name), _text(value))))
    writes = [p for p in (resolve(w, cwd) for w in call.writes) if p is not None]
    paths = [p for p in (resolve(w, cwd) for w in call.paths) if p is not None]
    facts += [("request_path", (p,)) for p in dict.fromkeys(paths + writes)]
    facts += [("request_write", (p,)) for p in dict.fromkeys(writes)]
    facts += call.facts
    shell = call.shell
    if shell is None and call.tool in shells and isinstance(call.inputs.get("command"), str):
        shell = call.inputs["command"]
    if shell is not None:
        facts += _shell_facts(shell, cwd)
    target = (writes or paths or [call.target or (cwd if shell is not None else call.tool)])[0]
    attributes: dict[str, list[list[Any]]] = {}
    seen: set[tuple[str, tuple[Any, ...]]] = set()
    for rel, args in facts:
        if declared.get(rel) == len(args) + 1 and (rel, args) not in seen:
            seen.add((rel, args))
            attributes.setdefault(rel, []).append(list(args))
    return Request.from_json(
        {
            "id": call.id,
            "kind": call.tool,
            "target": target,
            "agent": agent,
            "epoch": epoch,
            "scope": root,
            "attributes": attributes,
        }
    )

"""A git command line as git itself reads it, for the shell layer's push rule.

    git_facts(("git", "-C", "x", "push", "--force-w", "origin", "HEAD"))
      subcommand "push", globals ["-C"], options ["force-with-lease"],
      pushes [("HEAD", True)]

git accepts a unique prefix of a long option (`--force-w` is
`--force-with-lease`), glued short options (`-uf`), refspecs with `+`
(forced), `src:dst` (the destination is what changes), `:dst` (a delete) and
`refs/heads/` or `heads/` prefixes. A push names its destination branches;
`HEAD` and `@` are the current branch (named `HEAD`, the reading cannot know
which), and a push with no refspec, `--all`, `--branches` or `--mirror` may
update any branch (named `*`). `--mirror`, `--delete`/`-d` and `--prune`
rewrite what they touch: forced. `git send-pack` and `git http-push` push
too (read as pushes: `--force`, `+ref`, `--all`, `--mirror`), and they never
run git's `pre-push` hook; a dashed `git-push`, `git-send-pack`, ... (git's
exec path) is the same command. This is the early, explained layer; the git
`pre-push` hook (hosts/pre_push.py) is the guard at the effect, for `git push`.

`push_shaped(args)`: the words after an unknown program read as git's
(`./g push -f origin main`, a copy of git under another name): a push
with a forced ref.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence, TypeVar

T = TypeVar("T")

__all__ = ["Git", "git_facts", "git_words", "push_shaped", "unreadable", "PUSHES"]

PUSHES = frozenset({"push", "send-pack", "http-push"})  # the subcommands that update a remote's refs

_GLOBAL_ARG = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"})
_PUSH_LONG = (
    "all",
    "branches",
    "mirror",
    "delete",
    "tags",
    "dry-run",
    "porcelain",
    "force",
    "force-with-lease",
    "force-if-includes",
    "recurse-submodules",
    "thin",
    "receive-pack",
    "exec",
    "set-upstream",
    "progress",
    "prune",
    "no-verify",
    "verify",
    "follow-tags",
    "signed",
    "atomic",
    "push-option",
    "ipv4",
    "ipv6",
    "repo",
    "quiet",
    "verbose",
    "no-force-with-lease",
    "no-thin",
    "no-signed",
    "no-atomic",
    "no-follow-tags",
    "no-recurse-submodules",
    "no-progress",
)
_PUSH_ARG = frozenset({"receive-pack", "exec", "push-option", "repo"})
_FORCING = frozenset({"force", "force-with-lease", "mirror", "delete", "prune"})
_EVERYTHING = frozenset({"all", "branches", "mirror"})


@dataclass
class Git:
    subcommand: str | None = None
    globals: list[str] = field(default_factory=list)  # global options before the subcommand (`-c`, `-C`, ...)
    config: list[str] = field(default_factory=list)  # config keys set: `-c key=value`, `git config key value`
    options: list[str] = field(default_factory=list)  # a push's options, by their full long name
    pushes: list[tuple[str, bool]] = field(default_factory=list)  # (destination branch, forced)


def _long(word: str) -> list[str]:
    """The push options a `--word` names: itself, or every option it is a prefix of."""
    name = word[2:].partition("=")[0]
    if name in _PUSH_LONG:
        return [name]
    return [o for o in _PUSH_LONG if o.startswith(name)] or [name]


def _branch(ref: str) -> str:
    for prefix in ("refs/heads/", "heads/"):
        if ref.startswith(prefix):
            return ref[len(prefix) :]
    return "HEAD" if ref in ("@", "HEAD") else ref


def git_facts(words: Sequence[str]) -> Git:
    """What a `git ...` simple command does, as far as the push rule needs."""
    out = Git()
    k = 1
    while k < len(words):
        w = words[k]
        if not w.startswith("-"):
            break
        name, eq, value = w.partition("=")
        out.globals.append(name)
        if name in _GLOBAL_ARG and not eq:
            value = words[k + 1] if k + 1 < len(words) else ""
            k += 1
        if name == "-c" or name == "--config-env":
            out.config.append(value.partition("=")[0].lower())
        k += 1
    if k >= len(words):
        return out
    out.subcommand = words[k]
    rest = list(words[k + 1 :])
    if out.subcommand == "config":
        keys = [w for w in rest if not w.startswith("-")]
        if keys and keys[0] in ("set", "unset", "get") and len(keys) > 1:
            keys = keys[1:]
        if keys:
            out.config.append(keys[0].lower())
    elif out.subcommand in PUSHES:
        _push(rest, out)
    return out


def git_words(words: Sequence[T]) -> list[T | str] | None:
    """`words` as a `git ...` command line: itself for `git` (any path), a
    dashed `git-SUB ARGS` as `git SUB ARGS`; None for any other program (or
    a program word that is not a string: an expansion)."""
    name = words[0].rsplit("/", 1)[-1] if words and isinstance(words[0], str) else None
    if name == "git":
        return list(words)
    if name is not None and name.startswith("git-") and len(name) > 4:
        return ["git", name[4:], *words[1:]]
    return None


def push_shaped(args: Sequence[str]) -> bool:
    """`args` of a program that is not git read as git's from their first
    `push`, `send-pack` or `http-push` on (`./g -C x push -f origin main`,
    `uv run ./g push -f`): a push with a forced ref."""
    k = next((k for k, w in enumerate(args) if w in PUSHES), None)
    return k is not None and any(forced for _, forced in git_facts(("git", *args[k:])).pushes)


def _push(rest: list[str], out: Git) -> None:
    forced = False
    positional: list[str] = []
    k = 0
    while k < len(rest):
        w = rest[k]
        if w == "--":
            positional += rest[k + 1 :]
            break
        if w.startswith("--"):
            names = _long(w)
            out.options += names
            forced = forced or any(n in _FORCING for n in names)
            if len(names) == 1 and names[0] in _PUSH_ARG and "=" not in w:
                k += 1
        elif w.startswith("-") and len(w) > 1:
            for j, c in enumerate(w[1:], 1):
                if c == "o":  # -o OPTION: the rest of the word, or the next word
                    if j == len(w) - 1:
                        k += 1
                    break
                long = {"f": "force", "d": "delete", "u": "set-upstream", "n": "dry-run", "q": "quiet"}.get(c, c)
                out.options.append(long)
                forced = forced or long in _FORCING
        else:
            positional.append(w)
        k += 1
    refspecs = positional[1:]
    if not refspecs or _EVERYTHING & set(out.options):
        out.pushes.append(("*", forced))
    for spec in refspecs:
        plus = spec.startswith("+")
        source, colon, destination = spec.lstrip("+").partition(":")
        if colon and not source:  # `:main` deletes main
            out.pushes.append((_branch(destination), True))
            continue
        target = destination if colon and destination else source
        out.pushes.append((_branch(target) if target else "*", forced or plus))


def unreadable(words: Sequence[str | None]) -> bool:
    """A `git` command whose meaning for the push rule hangs on an expansion
    (None): before or at the subcommand, or anywhere in a push or a config."""
    k = 1
    while k < len(words):
        w = words[k]
        if w is None:
            return True
        if not w.startswith("-"):
            break
        k += 2 if w in _GLOBAL_ARG else 1
    if k >= len(words):
        return False
    return (words[k] in PUSHES or words[k] == "config") and any(w is None for w in words[k + 1 :])

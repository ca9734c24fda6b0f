"""What programs do with their words: the knowledge the shell reading (bash.py) applies.

Which programs are shells, interpreters taking inline code, wrappers running
the command in their arguments (and which of their options take a value),
launchers whose command the text does not show whole, and writers: which of
their words name the files they write (`written`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

__all__ = [
    "SHELLS",
    "INTERPRETERS",
    "WRAPPERS",
    "LAUNCHERS",
    "OPAQUE",
    "PROGRAMS",
    "QUIET",
    "WRITERS",
    "Word",
    "base",
    "written",
]

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox"})
INTERPRETERS = {  # program -> its options giving inline code
    "python": {"-c"},
    "perl": {"-e", "-E"},
    "ruby": {"-e"},
    "node": {"-e", "-p", "--eval", "--print"},
    "nodejs": {"-e", "-p", "--eval", "--print"},
    "deno": {"eval"},
    "bun": {"-e", "--eval"},
    "php": {"-r"},
    "lua": {"-e"},
    "osascript": {"-e"},
    "pwsh": {"-c", "-command", "-Command"},
    "powershell": {"-c", "-command", "-Command"},
    "Rscript": {"-e"},
    "tclsh": set(),
    "awk": set(),
    "gawk": set(),
}
# wrapper -> its options that take an argument: the wrapped command is read as a command of its own
WRAPPERS: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T"}),
    "doas": frozenset({"-u", "-C"}),
    "nohup": frozenset(),
    "time": frozenset({"-f", "-o"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "nice": frozenset({"-n"}),
    "ionice": frozenset({"-c", "-n", "-p"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "setsid": frozenset(),
    "chronic": frozenset(),
    "unbuffer": frozenset(),
    "taskset": frozenset(),
    "flock": frozenset({"-w", "-E", "--timeout", "-c"}),
    "xargs": frozenset({"-I", "-i", "-n", "-P", "-d", "-L", "-l", "-s", "-E", "-a", "--arg-file", "--delimiter"}),
    "watch": frozenset({"-n", "-d", "--interval"}),
    "strace": frozenset({"-e", "-o", "-p", "-s", "-u"}),
    "ltrace": frozenset({"-e", "-o", "-p", "-s", "-u"}),
    "chroot": frozenset(),
    "unshare": frozenset(),
    "nsenter": frozenset({"-t", "--target"}),
    "firejail": frozenset(),
    "parallel": frozenset({"-j", "-S", "--jobs"}),
}
# wrappers whose command gets words the text does not show (stdin, files found) or runs elsewhere
LAUNCHERS = frozenset({"xargs", "parallel", "watch", "flock", "chroot", "unshare", "nsenter", "firejail", "find"})
OPAQUE = frozenset({"ssh", "su", "script", "runuser", "systemd-run", "tmux", "screen", "at", "batch", "crontab"})
# a word naming one of these, given to a program the reading does not know, may be a command it runs
PROGRAMS = frozenset({"git", "rm", "eval", "ordinance", "sudo", "env", "xargs"}) | SHELLS
QUIET = frozenset(  # programs that take program names as data, not as commands
    {
        "echo",
        "printf",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "man",
        "which",
        "type",
        "whereis",
        "help",
        "info",
        "apropos",
        "cat",
        "less",
        "head",
        "tail",
        "wc",
        "sort",
        "uniq",
        "git",
        "test",
        "[",
        "[[",
        "ls",
        "file",
        "pgrep",
        "pkill",
        "ps",
        "hash",
        "alias",
        "unalias",
        "apt",
        "apt-get",
        "brew",
        "pip",
        "pip3",
        "npm",
        "jq",
        "sed",
        "awk",
        "tr",
        "cut",
        "diff",
        "stat",
        "readlink",
        "realpath",
        "basename",
        "dirname",
        "cd",
        "pushd",
    }
)
# writer -> how its written files are found among its words (see written)
WRITERS = {
    "tee": "all",
    "touch": "all",
    "rm": "all",
    "rmdir": "all",
    "mkdir": "all",
    "unlink": "all",
    "shred": "all",
    "truncate": "all",
    "mkfifo": "all",
    "chmod": "rest",
    "chown": "rest",
    "chgrp": "rest",
    "chattr": "rest",
    "setfacl": "rest",
    "cp": "last",
    "mv": "last",
    "install": "last",
    "ln": "last",
    "rsync": "last",
    "scp": "last",
    "link": "last",
    "rename": "rest",
    "patch": "all",
}
ARG_OPTIONS = {  # writers' options that take an argument (their argument is no file written)
    "truncate": {"-s", "--size", "-r", "--reference"},
    "touch": {"-r", "--reference", "-d", "--date", "-t"},
    "install": {"-m", "--mode", "-o", "--owner", "-g", "--group", "-S", "--suffix", "-t", "--target-directory"},
    "mkdir": {"-m", "--mode"},
    "cp": {"-S", "--suffix", "-t", "--target-directory"},
    "mv": {"-S", "--suffix", "-t", "--target-directory"},
    "ln": {"-S", "--suffix", "-t", "--target-directory"},
    "rsync": {"-e", "--rsh", "--exclude", "--include", "-f", "--filter"},
    "scp": {"-P", "-i", "-o", "-F", "-c", "-l", "-S", "-J"},
    "patch": {"-p", "-d", "-i", "-o", "-r", "-B", "-z", "-F"},
    "sed": {"-e", "-f", "--expression", "--file", "-l", "--line-length"},
    "curl": set(),
    "wget": set(),
}


@dataclass(frozen=True)
class Word:
    value: str | None  # None: an expansion (the shell decides it at run time)
    raw: str
    glob: bool = False

    @property
    def shown(self) -> str:
        return self.value if self.value is not None else self.raw


def base(word: str) -> str:
    name = word.rsplit("/", 1)[-1]
    if re.fullmatch(r"python[0-9.]*", name):
        return "python"
    return name


def positional(name: str, args: list[Word]) -> tuple[list[Word], dict[str, Word | None]]:
    """A command's positional words and its options (an option's value, if it takes one)."""
    takes = ARG_OPTIONS.get(name, set())
    positional: list[Word] = []
    options: dict[str, Word | None] = {}
    k, ended = 0, False
    while k < len(args):
        w = args[k]
        v = w.value
        if not ended and v == "--":
            ended = True
        elif not ended and v is not None and v.startswith("-") and v != "-":
            key, eq, glued = v.partition("=")
            if key in takes and not eq:
                options[key] = args[k + 1] if k + 1 < len(args) else None
                k += 1
            else:
                options[key] = Word(glued, glued) if eq else None
        else:
            positional.append(w)
        k += 1
    return positional, options


def written(name: str, args: list[Word]) -> Iterable[Word]:
    """The words of `name ARGS` that name files it writes."""
    how = WRITERS.get(name)
    if how is not None:
        found, options = positional(name, args)
        target = options.get("-t") or options.get("--target-directory")
        if target is not None and how == "last":
            return [target]
        if how == "all" or (name == "install" and "-d" in options):
            return found
        if how == "rest":
            return found[1:]
        if name == "ln" and len(found) == 1:
            return [Word(".", ".")]
        return found[-1:] if len(found) >= 2 else []
    if name == "sed":
        found, options = positional(name, args)
        in_place = any(o.startswith("--in-place") or (o[1:2] != "-" and "i" in o[1:]) for o in options)
        if not in_place:
            return []
        scripted = any(o in options for o in ("-e", "--expression", "-f", "--file"))
        return found if scripted else found[1:]
    if name == "dd":
        return [Word(w.value[3:], w.raw[3:], w.glob) for w in args if w.value is not None and w.value.startswith("of=")]
    if name in ("curl", "wget"):
        flags = ("-o", "--output") if name == "curl" else ("-O", "--output-document")
        out: list[Word] = []
        for k, w in enumerate(args):
            v = w.value or ""
            if v in flags and k + 1 < len(args):
                out.append(args[k + 1])
            elif v.startswith(flags[1] + "="):
                out.append(Word(v.partition("=")[2], v.partition("=")[2]))
            elif v.startswith(flags[0]) and len(v) > 2 and not v.startswith("--"):
                out.append(Word(v[2:], v[2:]))
        return out
    return []

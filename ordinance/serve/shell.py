"""A Bash command as simple commands and words, for the policy to read.

    simple_commands("cd sub && git push -f origin main")
      -> [["cd", "sub"], ["git", "push", "-f", "origin", "main"]]

A small splitter of our own (shlex splits words but not `&&`/`||`/`;`/`|`
from quoted text, nor subshells): quotes ('...', "...", $'...') and
backslashes are removed as the shell would; `&&`, `||`, `;`, `&`, `|`,
`|&` and newlines end a simple command; `( ... )`, `{ ...; }`, `$( ... )`
and backquotes contribute their inner commands; a `bash -c '...'` or
`bash <<< '...'` (sh, zsh, dash, ksh) wrapper and `eval '...'` contribute
the commands of their script, and `env`, `sudo`, `nohup`, `time`,
`command`, `exec`, `xargs` wrappers the command they run, each besides the
wrapper itself. Leading `NAME=value` assignments are not words. Expansions
(`$x`, globs) stay as written: the policy sees what the agent wrote, never
what it might expand to; nor does it see a script a shell reads from a pipe
(`echo ... | bash`): a policy refuses those if it must. The
splitter never raises: an unterminated quote runs to the end of the text.
"""

from __future__ import annotations

import re

__all__ = ["simple_commands"]

_OPERATORS = ("&&", "||", "|&", ";;", ";", "&", "|", "\n")
_SHELLS = {"bash", "sh", "zsh", "dash", "ksh"}
# wrapper -> its options that take an argument
_WRAPPERS = {
    "env": {"-u", "-C", "-S"},
    "sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"},
    "nohup": set(),
    "time": set(),
    "command": set(),
    "exec": {"-a"},
    "xargs": {"-I", "-n", "-P", "-d"},
    "nice": {"-n"},
    "timeout": {"-s", "-k"},
}
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_RESERVED = {"then", "do", "else", "elif", "if", "while", "until", "!", "{", "}", "fi", "done"}
_DEPTH = 8  # nested wrappers and subshells followed this deep


def _closing(text: str, i: int, open_: str, close: str) -> int:
    """The index just after the `close` matching the `open_` before i."""
    depth, quote = 1, ""
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "\\":
            i += 1
        elif c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def _split(text: str, nested: list[str]) -> list[list[str]]:
    """Simple commands of `text` as word lists; the texts of subshells and
    command substitutions are appended to `nested`."""
    commands: list[list[str]] = [[]]
    word: list[str] | None = None
    i, n = 0, len(text)

    def end_word() -> None:
        nonlocal word
        if word is not None:
            commands[-1].append("".join(word))
            word = None

    while i < n:
        c = text[i]
        op = next((o for o in _OPERATORS if text.startswith(o, i)), None)
        if op is not None:
            end_word()
            commands.append([])
            i += len(op)
        elif c in " \t\r":
            end_word()
            i += 1
        elif c == "#" and word is None:
            while i < n and text[i] != "\n":
                i += 1
        elif c == "(" and word is None:
            j = _closing(text, i + 1, "(", ")")
            nested.append(text[i + 1 : j - 1])
            commands.append([])
            i = j
        elif c == ")":
            end_word()
            i += 1
        elif text.startswith("$(", i):
            j = _closing(text, i + 2, "(", ")")
            nested.append(text[i + 2 : j - 1])
            word = (word or []) + [text[i:j]]
            i = j
        elif c == "`":
            j = text.find("`", i + 1)
            j = n if j < 0 else j
            nested.append(text[i + 1 : j])
            word = (word or []) + [text[i : j + 1]]
            i = j + 1
        elif c == "\\":
            if i + 1 < n and text[i + 1] != "\n":
                word = (word or []) + [text[i + 1]]
            i += 2
        elif c == "'" or text.startswith("$'", i):
            start = i + (2 if c == "$" else 1)
            j = text.find("'", start)
            j = n if j < 0 else j
            raw = text[start:j]
            word = (word or []) + [
                raw.encode("latin-1", "backslashreplace").decode("unicode_escape") if c == "$" else raw
            ]
            i = j + 1
        elif c == '"':
            i += 1
            part: list[str] = []
            while i < n and text[i] != '"':
                if text[i] == "\\" and i + 1 < n and text[i + 1] in '"\\$`\n':
                    part.append(text[i + 1])
                    i += 2
                    continue
                if text.startswith("$(", i):
                    j = _closing(text, i + 2, "(", ")")
                    nested.append(text[i + 2 : j - 1])
                    part.append(text[i:j])
                    i = j
                    continue
                part.append(text[i])
                i += 1
            word = (word or []) + ["".join(part)]
            i += 1
        else:
            word = (word or []) + [c]
            i += 1
    end_word()
    return [c for c in commands if c]


def _words(command: list[str]) -> list[str]:
    """Without leading assignments and reserved words (`if`, `then`, `{`)."""
    k = 0
    while k < len(command) and (_ASSIGNMENT.match(command[k]) or command[k] in _RESERVED):
        k += 1
    return command[k:]


def _inner(words: list[str]) -> tuple[str | None, list[str] | None]:
    """A wrapper's script (`bash -c SCRIPT`) or wrapped command (`sudo X`)."""
    name = words[0].rsplit("/", 1)[-1]
    if name == "eval":  # its arguments, joined by spaces, are the script
        return (" ".join(words[1:]) or None), None
    if name in _SHELLS:
        for k, w in enumerate(words[1:], 1):
            if (w.startswith("-") and "c" in w[1:] and not w.startswith("--")) or w == "<<<":
                return (words[k + 1] if k + 1 < len(words) else None), None
        return None, None
    if name in _WRAPPERS:
        rest = words[1:]
        while rest and (
            rest[0].startswith("-") or _ASSIGNMENT.match(rest[0]) or (name == "timeout" and rest[0][:1].isdigit())
        ):
            rest = rest[2:] if rest[0] in _WRAPPERS[name] else rest[1:]
        return None, (rest or None)
    return None, None


def simple_commands(text: str, _depth: int = 0) -> list[list[str]]:
    """Every simple command of `text`, outermost first, as its words."""
    nested: list[str] = []
    out: list[list[str]] = []
    pending = [_words(c) for c in _split(text, nested)]
    while pending:
        words = pending.pop(0)
        if not words:
            continue
        out.append(words)
        if _depth >= _DEPTH:
            continue
        script, wrapped = _inner(words)
        if script is not None:
            out.extend(simple_commands(script, _depth + 1))
        if wrapped is not None:
            pending.insert(0, _words(wrapped))
    for inner in nested if _depth < _DEPTH else ():
        out.extend(simple_commands(inner, _depth + 1))
    return out

"""A shell command read by bash's grammar, for the policy to see.

    read("cd sub && git push -f origin main > log", "/p")
      commands   [("cd", "sub"), ("git", "push", "-f", "origin", "main")]
      writes     ["/p/sub/log"]
      unresolved []

The text is parsed by tree-sitter-bash (a maintained grammar, error-tolerant,
in C: see benchmarks/bench_bash.py for why it and not bashlex). A `Reading`
holds the simple commands with their words (quotes and backslashes removed as
the shell would; leading NAME=value assignments dropped), the files they write
(redirections `>` `>>` `&>` `>|`, the common writers: `tee`, `cp`, `mv`,
`install`, `ln`, `rm`, `touch`, `mkdir`, `sed -i`, `dd of=`, `curl -o`, ...),
every path an argument names, and what the reading cannot resolve. Paths are
resolved against the working directory, which `cd` moves (in a subshell or a
pipeline element only there; after a `cd` the reading cannot follow, relative
paths are unresolved). The commands a command runs are read too, each besides
the one that runs it: `$(...)`, backquotes, `<(...)`, subshells, `bash -c`,
`sh <<EOF`, `eval`, `env -S`, and the wrappers `env`, `sudo`, `nohup`,
`timeout`, `stdbuf`, `setsid`, `xargs`, `find -exec`, ...

It fails closed: what it cannot read is an `unresolved` entry (the index of
the command, or -1 for the whole text, and why), which a policy asks on:

    expansion     a command word that is an expansion (`$x`, `$(...)`, a glob), or
                  one in a git push or config (`git push $b origin main`)
    path          a file written whose name is an expansion, or relative after an unfollowed `cd`
    launcher      a program that runs a command the reading cannot see whole
                  (`xargs`, `find -exec`, `parallel`, `ssh`, `script`, `su -c`, or an
                  unknown program given a program name such as `git` or `sh`)
    inline-code   an interpreter given code (`python3 -c`, `perl -e`, `node -e`, a heredoc or a pipe)
    pipe-to-shell a shell reading its script from a pipe (`curl ... | sh`)
    eval          `eval` (its literal text is read as well), `alias`, `shopt`, `trap`, `enable`
    push-like     an unknown program given git push's words with a force (`./g push -f origin main`:
                  maybe a copy of git under another name; git's pre-push hook still sees it)
    environment   git configured through the environment (`GIT_CONFIG_COUNT=1 ...`, `export GIT_DIR=...`)
    parse-error   text bash's grammar does not accept (an unterminated quote, ...)
    too-large     more than LIMITS allow (the rest is not read)
    too-deep      nested deeper than LIMITS allow

The work is linear and bounded: at most `MAX_TEXT` characters are parsed,
`MAX_COMMANDS` commands and `MAX_WORDS` words read, `MAX_DEPTH` levels of
nesting followed.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .git import git_words, push_shaped, unreadable
from .programs import INTERPRETERS, LAUNCHERS, OPAQUE, PROGRAMS, QUIET, SHELLS, WRAPPERS, Word, base, written
from .paths import LIMIT, resolve

__all__ = ["Reading", "read", "MAX_TEXT", "MAX_COMMANDS", "MAX_WORDS", "MAX_DEPTH", "SHELLS"]

MAX_TEXT = 256 * 1024
MAX_COMMANDS = 256
MAX_WORDS = 4096
MAX_DEPTH = 24

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_GIT_ENV = re.compile(r"(^|[\s;])GIT_[A-Z_]*[0-9]*=")
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_STRING_ESCAPE = re.compile(r'\\([$`"\\\n])')
_GLOB = re.compile(r"(?<!\\)[*?[]|(?<!\\)\{[^}]*(,|\.\.)[^}]*\}")
_SEQUENTIAL = frozenset({"program", "list", "compound_statement", "do_group"})
_BRANCHING = frozenset(
    {
        "if_statement",
        "elif_clause",
        "else_clause",
        "while_statement",
        "for_statement",
        "c_style_for_statement",
        "case_statement",
        "case_item",
        "function_definition",
        "negated_command",
    }
)


@lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


@dataclass
class Reading:
    """What a shell text does, as far as its grammar shows it."""

    commands: list[tuple[str, ...]] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    unresolved: list[tuple[int, str]] = field(default_factory=list)
    words: int = 0

    def unread(self, n: int, why: str) -> None:
        if (n, why) not in self.unresolved:
            self.unresolved.append((n, why))


class _Full(Exception):
    """The reading reached a limit: what is read so far stands."""


def _literal(node: Any) -> tuple[str | None, bool]:
    """The value of a word node, None if it holds an expansion; and whether
    an unquoted part of it is a glob or a brace expansion."""
    kind = node.type
    text = node.text.decode("utf-8", "surrogateescape")
    if kind in ("word", "number"):
        glob = bool(_GLOB.search(text))
        return _ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), text), glob
    if kind == "raw_string":
        return text[1:-1] if text.endswith("'") and len(text) >= 2 else text[1:], False
    if kind == "ansi_c_string":
        inner = text[2:-1] if text.endswith("'") and len(text) >= 3 else text[2:]
        try:
            return codecs.decode(inner.encode("latin-1", "backslashreplace"), "unicode_escape"), False
        except (UnicodeDecodeError, ValueError):
            return None, False
    if kind in ("string", "translated_string"):
        parts = []
        for child in node.named_children:
            if child.type != "string_content":
                return None, False
            parts.append(_STRING_ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), child.text.decode()))
        return "".join(parts), False
    if kind == "concatenation":
        values, glob = [], False
        for child in node.named_children:
            value, g = _literal(child)
            if value is None:
                return None, False
            values.append(value)
            glob = glob or g
        return "".join(values), glob or bool(_GLOB.search(text))
    return None, False


class _Reader:
    def __init__(self, reading: Reading) -> None:
        self.r = reading

    # -- statements ------------------------------------------------------
    def statement(self, node: Any, cwd: str | None, depth: int, stdin: str | None = None) -> str | None:
        """Read `node`; the working directory after it."""
        if depth > MAX_DEPTH:
            self.r.unread(-1, "too-deep")
            return None
        kind = node.type
        if kind == "ERROR" or node.is_missing:
            self.r.unread(-1, "parse-error")
        if kind == "comment":
            return cwd
        if kind in _SEQUENTIAL:
            for child in node.named_children:
                cwd = self.statement(child, cwd, depth + 1)
            return cwd
        if kind == "subshell":  # a subshell's `cd` stays in it
            inner = cwd
            for child in node.named_children:
                inner = self.statement(child, inner, depth + 1)
            return cwd
        if kind == "pipeline":
            for k, child in enumerate(node.named_children):
                self.statement(child, cwd, depth + 1, "|" if k else None)
            return cwd
        if kind in _BRANCHING:
            after = cwd
            for child in node.named_children:
                after = self.statement(child, after, depth + 1)
            return cwd if after == cwd else None
        if kind == "redirected_statement":
            return self.redirected(node, cwd, depth, stdin)
        if kind == "command":
            return self.command(node, [], cwd, depth, stdin)
        if kind in ("heredoc_body", "heredoc_start", "heredoc_end"):
            return cwd
        if kind in ("declaration_command", "variable_assignment", "variable_assignments"):
            self.assignment(node.text.decode("utf-8", "surrogateescape"))
        self.substitutions(node, cwd, depth)  # declarations, assignments, [[ ]], (( )): only what they run
        return cwd

    def assignment(self, text: str) -> None:
        """`GIT_CONFIG_*=...`, `export GIT_DIR=...`: git's configuration through
        the environment, which the reading cannot follow into the command."""
        if _GIT_ENV.search(text):
            self.r.unread(len(self.r.commands), "environment")

    def redirected(self, node: Any, cwd: str | None, depth: int, stdin: str | None) -> str | None:
        body = node.child_by_field_name("body")
        extra: list[Any] = []
        after: list[Any] = []
        # tree-sitter hangs `cd x && echo > f`'s redirection on the whole list: it is
        # the last command's, made after the `cd` (a group's, `{ cd x; } > f`, is made before)
        late = body is not None and body.type in ("list", "pipeline")
        if late:
            cwd = self.statement(body, cwd, depth + 1, stdin)
        for child in node.children_by_field_name("redirect"):
            if child.type == "heredoc_redirect":
                stdin = self.heredoc(child, cwd, depth)
                for inner in child.named_children:
                    if inner.type == "file_redirect":
                        extra += self.redirect(inner, cwd, depth)
                    elif inner.type not in ("heredoc_start", "heredoc_body", "heredoc_end"):
                        after.append(inner)
            elif child.type == "herestring_redirect":
                stdin = self.herestring(child, cwd, depth)
            else:
                extra += self.redirect(child, cwd, depth)
        if late:
            cwd_after = cwd
            if extra:  # `cd x && echo > f hi`: words of the last command, read as one of their own
                self.simple([self.word(w, cwd, depth) for w in extra], cwd, depth + 1, None)
        elif body is not None and body.type == "command":
            cwd_after = self.command(body, extra, cwd, depth, stdin)
        elif body is not None:
            cwd_after = self.statement(body, cwd, depth + 1, stdin)
        else:
            cwd_after = cwd
        for inner in after:  # `cat <<EOF | sh`, `cat <<EOF && next`: the rest of the line
            piped = inner.type == "pipeline"
            for child in inner.named_children if piped else [inner]:
                cwd_after = self.statement(child, cwd_after, depth + 1, "|" if piped else None)
        return cwd_after

    def heredoc(self, node: Any, cwd: str | None, depth: int) -> str:
        """A heredoc's text; the `$(...)` of an unquoted one run whatever reads it."""
        body = next((c for c in node.named_children if c.type == "heredoc_body"), None)
        if body is None:
            return ""
        self.substitutions(body, cwd, depth)
        return body.text.decode("utf-8", "surrogateescape")

    def herestring(self, node: Any, cwd: str | None, depth: int) -> str:
        """A here-string's text, or "|" (unknown input) if it is an expansion."""
        self.substitutions(node, cwd, depth)
        child = node.named_children[0] if node.named_children else None
        value = _literal(child)[0] if child is not None else None
        return "|" if value is None else value

    def redirect(self, node: Any, cwd: str | None, depth: int) -> list[Any]:
        """A file redirection's written file; the words tree-sitter hangs on
        it that are the command's arguments (`echo > x hi`)."""
        operator = next((c.type for c in node.children if not c.is_named), "")
        targets = node.children_by_field_name("destination")
        if not targets:
            return []
        target, extra = targets[0], targets[1:]
        self.substitutions(target, cwd, depth)
        value, glob = _literal(target)
        if operator in (">&", "<&") and (target.type == "number" or value == "-"):
            return list(extra)  # a descriptor duplicated or closed, no file
        if ">" in operator:
            self.write(Word(value, target.text.decode("utf-8", "surrogateescape"), glob), cwd, len(self.r.commands))
        elif value is not None:
            self.path(value, cwd)
        return list(extra)

    def substitutions(self, node: Any, cwd: str | None, depth: int) -> None:
        """Read every command substitution inside `node` as commands of their own."""
        stack = [(node, depth)]
        while stack:
            current, d = stack.pop()
            if d > MAX_DEPTH:
                self.r.unread(-1, "too-deep")
                continue
            if current.type in ("command_substitution", "process_substitution", "subshell"):
                for child in current.named_children:
                    self.statement(child, cwd, d + 1)
                continue
            if current.type == "ERROR":
                self.r.unread(-1, "parse-error")
            stack.extend((c, d + 1) for c in reversed(current.named_children))

    # -- commands --------------------------------------------------------
    def command(self, node: Any, extra: list[Any], cwd: str | None, depth: int, stdin: str | None) -> str | None:
        words: list[Word] = []
        for child in list(node.named_children) + extra:
            if child.type == "variable_assignment":
                self.substitutions(child, cwd, depth)
                self.assignment(child.text.decode("utf-8", "surrogateescape"))
                continue
            if child.type == "file_redirect":
                extra_words = self.redirect(child, cwd, depth)
                words += [self.word(w, cwd, depth) for w in extra_words]
                continue
            if child.type == "herestring_redirect":
                stdin = self.herestring(child, cwd, depth)
                continue
            if child.type == "comment":
                continue
            target = child.named_children[0] if child.type == "command_name" and child.named_children else child
            words.append(self.word(target, cwd, depth))
        if not words:
            return cwd
        return self.simple(words, cwd, depth, stdin)

    def word(self, node: Any, cwd: str | None, depth: int) -> Word:
        self.substitutions(node, cwd, depth)
        value, glob = _literal(node)
        return Word(value, node.text.decode("utf-8", "surrogateescape"), glob)

    def simple(self, words: list[Word], cwd: str | None, depth: int, stdin: str | None) -> str | None:
        """One simple command (after its assignments): recorded, then what it runs and writes."""
        r = self.r
        if depth > MAX_DEPTH:
            r.unread(-1, "too-deep")
            return cwd
        while words and words[0].value is not None and _ASSIGNMENT.match(words[0].value):
            self.assignment(words[0].value)
            words = words[1:]  # `env`'s and wrappers' own assignments
        if not words:
            return cwd
        if len(r.commands) >= MAX_COMMANDS or r.words + len(words) > MAX_WORDS:
            r.unread(-1, "too-large")
            raise _Full
        n = len(r.commands)
        r.commands.append(tuple(w.shown for w in words))
        r.words += len(words)
        head = words[0]
        if head.value is None or head.glob:
            r.unread(n, "expansion")
            return cwd
        name = base(head.value)
        args = words[1:]
        for w in args:
            if w.value is not None and not w.value.startswith("-"):
                self.path(w.value, cwd)
            elif w.value is not None and w.value.startswith("--") and "=" in w.value:
                self.path(w.value.partition("=")[2], cwd)
        as_git = git_words([w.value for w in words])
        if as_git is not None and unreadable(as_git):
            r.unread(n, "expansion")  # `git push $b origin main`: the push rule cannot read it
        if name in ("cd", "pushd"):
            return self.cd(args, cwd)
        if name == "popd":
            return None
        self.writes_of(name, args, cwd, n)
        if name in ("alias", "shopt", "enable", "trap"):  # what later commands run is not the text's
            r.unread(n, "eval")
        if name == "eval":
            r.unread(n, "eval")
            if all(w.value is not None for w in args):
                self.script(" ".join(w.value or "" for w in args), cwd, depth)
            return cwd
        if name in SHELLS:
            self.shell(args, cwd, depth, stdin, n)
            return cwd
        if name in INTERPRETERS:
            self.interpreter(name, args, stdin, n)
            return cwd
        if name in OPAQUE:
            r.unread(n, "launcher")
            return cwd
        if name == "find":
            self.find(args, cwd, depth, n)
            return cwd
        if name in WRAPPERS:
            if name in LAUNCHERS:
                r.unread(n, "launcher")
            inner = self.unwrap(name, args, cwd, depth)
            if inner is not None:
                inner_words, inner_cwd = inner
                if inner_words:
                    self.simple(inner_words, inner_cwd, depth + 1, stdin)
            return cwd
        if name not in QUIET and as_git is None:
            if push_shaped([w.shown for w in args]):  # `./g push -f origin main`: maybe git under another name
                r.unread(n, "push-like")
            k = next((k for k, w in enumerate(args) if w.value is not None and base(w.value) in PROGRAMS), None)
            if k is not None:  # `uv run git push`: maybe a launcher; what it may run is read too
                r.unread(n, "launcher")
                self.simple(args[k:], cwd, depth + 1, stdin)
        return cwd

    def cd(self, args: list[Word], cwd: str | None) -> str | None:
        rest = [w for w in args if not (w.value or "").startswith("-") or w.value == "-"]
        if not rest:
            return resolve("~", "/")
        target = rest[0].value
        if target is None or target == "-" or rest[0].glob or cwd is None and not target.startswith(("/", "~")):
            return None
        return resolve(target, cwd or "/")

    def unwrap(self, name: str, args: list[Word], cwd: str | None, depth: int) -> tuple[list[Word], str | None] | None:
        """The command a wrapper runs (and its working directory), or None."""
        takes = WRAPPERS[name]
        k = 0
        while k < len(args):
            w = args[k].value
            if w is None:
                return None
            if w == "--":
                k += 1
                break
            if name == "env" and (w in ("-S", "--split-string") or w.startswith(("-S", "--split-string="))):
                text = w.partition("=")[2] if w.startswith("--") else (w[2:] or None)
                if text is None:
                    text = args[k + 1].value if k + 1 < len(args) else None
                if text is not None:  # env -S splits its string into words: read it as a command line
                    self.script(text, cwd, depth)
                return None
            if name == "env" and (w in ("-C", "--chdir") or w.startswith("--chdir=")):
                target = w.partition("=")[2] if "=" in w else (args[k + 1].value if k + 1 < len(args) else None)
                cwd = resolve(target, cwd or "/") if target is not None and cwd is not None else None
            if name == "flock" and w in ("-c", "--command"):
                text = args[k + 1].value if k + 1 < len(args) else None
                if text is not None:
                    self.script(text, cwd, depth)
                return None
            if w.startswith("-"):
                k += 2 if w in takes else 1
                continue
            if name == "env" and _ASSIGNMENT.match(w):
                self.assignment(w)
                k += 1
                continue
            if name == "timeout" and (w[:1].isdigit() or w[:1] == "."):
                k += 1
                continue
            if name in ("taskset", "nsenter") and k == 0 and not w.startswith("-"):
                k += 1
                continue
            if name == "chroot" and k == 0:
                k += 1
                continue
            break
        return args[k:], cwd

    def find(self, args: list[Word], cwd: str | None, depth: int, n: int) -> None:
        for k, w in enumerate(args):
            if w.value in ("-exec", "-execdir", "-ok", "-okdir"):
                self.r.unread(n, "launcher")
                end = next((j for j in range(k + 1, len(args)) if args[j].value in (";", "+", "\\;")), len(args))
                if end > k + 1:
                    self.simple(args[k + 1 : end], cwd, depth + 1, None)
            elif w.value in ("-delete", "-fprint", "-fprintf", "-fls"):
                self.r.unread(n, "launcher")

    def shell(self, args: list[Word], cwd: str | None, depth: int, stdin: str | None, n: int) -> None:
        for k, w in enumerate(args):
            v = w.value
            if v is None:
                self.r.unread(n, "expansion")
                return
            if v.startswith("-") and not v.startswith("--") and "c" in v[1:]:
                script = args[k + 1].value if k + 1 < len(args) else None
                if script is None:
                    self.r.unread(n, "expansion")
                else:
                    self.script(script, cwd, depth)
                return
            if not v.startswith(("-", "+")):
                return  # a script file: what it does is the file's
        if stdin == "|":
            self.r.unread(n, "pipe-to-shell")
        elif stdin is not None:
            self.script(stdin, cwd, depth)

    def interpreter(self, name: str, args: list[Word], stdin: str | None, n: int) -> None:
        inline = INTERPRETERS[name]
        if name in ("awk", "gawk"):
            program = next((w for w in args if not (w.value or "").startswith("-")), None)
            if program is not None and (program.value is None or re.search(r"system|[>|]|getline", program.value)):
                self.r.unread(n, "inline-code")
            return
        for w in args:
            v = w.value or ""
            if v in inline or any(v.startswith(o) and len(o) == 2 and len(v) > 2 for o in inline if o[1:] != "-"):
                self.r.unread(n, "inline-code")
                return
            if v == "-" or not v.startswith("-"):
                if v == "-" and stdin is not None:
                    self.r.unread(n, "inline-code")
                return  # a script file (or a module with -m): the file's
        if stdin is not None:
            self.r.unread(n, "inline-code")

    def script(self, text: str, cwd: str | None, depth: int) -> None:
        """Shell text a command runs (`bash -c`, `eval`, a heredoc to `sh`), read as commands."""
        if depth + 1 > MAX_DEPTH:
            self.r.unread(-1, "too-deep")
            return
        tree = _parser().parse(text.encode("utf-8", "surrogateescape"))
        if tree.root_node.has_error:
            self.r.unread(-1, "parse-error")
        self.statement(tree.root_node, cwd, depth + 1)

    # -- files -----------------------------------------------------------
    def path(self, value: str, cwd: str | None) -> None:
        if cwd is None and not value.startswith(("/", "~")):
            return
        if len(self.r.paths) < MAX_COMMANDS * 4 and "\n" not in value:
            resolved = resolve(value, cwd or "/")
            if resolved is not None and resolved not in self.r.paths:
                self.r.paths.append(resolved)

    def write(self, word: Word, cwd: str | None, n: int) -> None:
        value = word.value
        if value is None or (word.glob and re.search(r"[*?[{].*/\.\.(/|$)", value)):
            self.r.unread(n, "path")
            return
        if cwd is None and not value.startswith(("/", "~")):
            self.r.unread(n, "path")
            return
        resolved = resolve(value, cwd or "/")
        if resolved is None or len(value) > LIMIT:
            self.r.unread(n, "path")
            return
        if resolved not in self.r.writes:
            self.r.writes.append(resolved)
        self.path(value, cwd)

    def writes_of(self, name: str, args: list[Word], cwd: str | None, n: int) -> None:
        for w in written(name, args):
            self.write(w, cwd, n)


def read(text: str, cwd: str | None) -> Reading:
    """What `text` runs and writes, read from `cwd` (None: unknown)."""
    reading = Reading()
    if len(text) > MAX_TEXT:
        reading.unread(-1, "too-large")
        return reading
    tree = _parser().parse(text.encode("utf-8", "surrogateescape"))
    if tree.root_node.has_error:
        reading.unread(-1, "parse-error")
    try:
        _Reader(reading).statement(tree.root_node, cwd, 0)
    except _Full:
        pass
    except RecursionError:
        reading.unread(-1, "too-deep")
    # a redirection made after its list's commands, an export at the end: of no command read
    reading.unresolved = list(
        dict.fromkeys((n if n < len(reading.commands) else -1, why) for n, why in reading.unresolved)
    )
    return reading

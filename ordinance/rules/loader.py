"""`.include` resolution: stdlib modules and relative paths, flattened in place.
Then components are instantiated (components.py), and clauses with
disjunctions or several heads are expanded (expand.py).

`.include "continuity"` names a stdlib module (package data
`ordinance/rules/stdlib/continuity.rules`); anything else is a path relative
to the including file (`.rules` may be left off). Each file is included once;
including a file from inside itself, directly or not, is `include_cycle`.

An included file must lie inside the top policy file's directory tree, or
inside a directory passed in `allow` (`include_outside`); it may be at most
MAX_SOURCE_BYTES long (`too_large`); a file that is not a `.rules` file and
does not parse is reported as one `include_not_policy` error, without its
contents.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from importlib.resources import files

from ..diagnostics import Diagnostic, ParseError, Span
from . import ast
from .components import expand_components
from .expand import eqrel_rules, expand_invariant, expand_rule, expand_subsumption
from .parser import parse
from .ranges import lift_ranges
from .inline import inline_relations
from .lift import lift_aggregates
from .nested import unnest_aggregates
from .witness import ground_reaching_witnesses, ground_witnesses

__all__ = [
    "STDLIB_PREFIX",
    "MAX_INCLUDE_DEPTH",
    "MAX_SOURCE_BYTES",
    "Flattened",
    "flatten",
    "decode",
    "read_bytes",
    "read_policy",
    "read_source",
]

STDLIB_PREFIX = "<stdlib>/"
MAX_INCLUDE_DEPTH = 32
MAX_SOURCE_BYTES = 32_000_000  # as `ordinance lint` reads a top file
_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class Flattened:
    items: tuple[ast.Item, ...]
    files: tuple[str, ...]
    sources: dict[str, str] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    syntax: bool = False  # some diagnostic came from parsing an included file


def _stdlib_text(name: str) -> str | None:
    if not _MODULE.fullmatch(name):
        return None
    path = files(__package__) / "stdlib" / f"{name}.rules"
    return path.read_text(encoding="utf-8") if path.is_file() else None


def decode(data: bytes, file: str | None) -> str:
    """UTF-8 text of a source file, or ParseError with an `encoding` diagnostic."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        span = Span(line, column, line, column + 1, file)
        message = f"file is not valid utf-8 (byte 0x{data[e.start]:02x})"
        raise ParseError([Diagnostic("encoding", message, span)]) from None


def read_bytes(name: str, limit: int | None = None, what: str = "file") -> bytes:
    """The bytes of file `name`, reading at most `limit` + 1 of them (None:
    MAX_SOURCE_BYTES; 0: no limit): a longer file, or an endless one
    (`/dev/zero`, a FIFO), is ParseError `too_large` (`WHAT is N bytes; the
    limit is M`) without being read whole. OSError if unreadable."""
    cap = MAX_SOURCE_BYTES if limit is None else limit
    with open(name, "rb") as fh:
        data = fh.read(cap + 1) if cap else fh.read()
        if cap and len(data) > cap:
            info = os.fstat(fh.fileno())
            size = f"{info.st_size:,} bytes" if stat.S_ISREG(info.st_mode) else f"more than {cap:,} bytes"
            message = f"{what} is {size}; the limit is {cap:,}"
            raise ParseError([Diagnostic("too_large", message, Span(1, 1, 1, 2, name))])
    return data


def read_policy(name: str) -> str:
    """A policy file's text: bounded (`too_large`), UTF-8 (`encoding`)."""
    return decode(read_bytes(name), name)


def read_source(file: str) -> str | None:
    """The text behind a span's file name, for rendering; None if unreadable (or too large)."""
    if file.startswith(STDLIB_PREFIX):
        return _stdlib_text(file[len(STDLIB_PREFIX) :].removesuffix(".rules"))
    try:
        return read_bytes(file).decode("utf-8", errors="replace")
    except (OSError, ParseError):
        return None


def _locate(path: str, directory: str) -> str | None:
    """The display name of a relative include, trying `path` then `path.rules`."""
    candidates = [path] if path.endswith(".rules") else [path, path + ".rules"]
    for candidate in candidates:
        full = os.path.normpath(os.path.join(directory, candidate))
        if os.path.isfile(full):
            return full
    return None


def _inside(path: str, roots: tuple[str, ...]) -> bool:
    real = os.path.realpath(path)
    return any(os.path.commonpath([real, root]) == root for root in roots)


class _Flattener:
    def __init__(self, roots: tuple[str, ...] = ()) -> None:
        self.roots = roots  # real paths an include may lie under
        self.items: list[ast.Item] = []
        self.files: list[str] = []
        self.sources: dict[str, str] = {}
        self.diagnostics: list[Diagnostic] = []
        self.syntax = False
        self.seen: set[str] = set()

    def visit(self, program: ast.Program, directory: str, chain: list[tuple[str, str]]) -> None:
        for item in program.items:
            if isinstance(item, ast.Include):
                self.include(item, directory, chain)
            else:
                self.items.append(item)

    def expand(self) -> None:
        """Instantiate components, then expand each clause into plain rules."""
        items = expand_components(self.items, self.diagnostics)
        self.items = []
        for item in items:
            if isinstance(item, ast.Rule):
                self.items.extend(
                    ground_witnesses(u)
                    for r in expand_rule(item, self.diagnostics)
                    for u in unnest_aggregates(
                        ground_reaching_witnesses(lift_aggregates(lift_ranges(r)), self.diagnostics)
                    )
                )
            elif isinstance(item, ast.Invariant):
                self.items.extend(expand_invariant(item, self.diagnostics))
            elif isinstance(item, ast.Subsumption):
                self.items.extend(expand_subsumption(item, self.diagnostics))
            elif isinstance(item, ast.Decl):
                self.items.append(item)
                self.items.extend(eqrel_rules(item))
            else:
                self.items.append(item)
        self.items = inline_relations(self.items, self.diagnostics)

    def include(self, inc: ast.Include, directory: str, chain: list[tuple[str, str]]) -> None:
        text = _stdlib_text(inc.path)
        if text is not None:
            name = key = f"{STDLIB_PREFIX}{inc.path}.rules"
        else:
            located = _locate(inc.path, directory)
            if located is None:
                message = f"cannot find include `{inc.path}` (no stdlib module or file of that name)"
                self.diagnostics.append(Diagnostic("include_not_found", message, inc.span))
                return
            name, key = located, os.path.realpath(located)
            if self.roots and not _inside(located, self.roots):
                message = (
                    f"include `{inc.path}` is outside the policy's directory "
                    "(allow its directory explicitly to include it)"
                )
                allow = "list its directory in ORDINANCE_INCLUDE_PATH (in the library: `allow_includes=`)"
                self.diagnostics.append(Diagnostic("include_outside", message, inc.span, help=allow))
                return
        keys = [k for k, _ in chain]
        if key in keys:
            cycle = [n for _, n in chain[keys.index(key) :]] + [name]
            message = "include cycle " + " -> ".join(f"`{n}`" for n in cycle)
            self.diagnostics.append(Diagnostic("include_cycle", message, inc.span))
            return
        if key in self.seen:
            return
        if len(chain) >= MAX_INCLUDE_DEPTH:
            message = f"includes nest deeper than {MAX_INCLUDE_DEPTH} files"
            self.diagnostics.append(Diagnostic("too_deep", message, inc.span))
            return
        self.seen.add(key)
        try:
            if text is None:
                try:
                    data = read_bytes(name, what=f"include `{inc.path}`")
                except ParseError as exc:  # at the include, not in the file
                    message = exc.diagnostics[0].message
                    self.diagnostics.append(Diagnostic("too_large", message, inc.span))
                    return
                text = decode(data, name)
            self.sources[name] = text
            self.files.append(name)
            program = parse(text, name)
        except OSError as e:
            message = f"cannot read include `{inc.path}`: {e.strerror or e}"
            self.diagnostics.append(Diagnostic("include_not_found", message, inc.span))
            return
        except ParseError as e:
            self.syntax = True
            if name.endswith(".rules") or name.startswith(STDLIB_PREFIX):
                self.diagnostics.extend(e.diagnostics)
            else:  # not a policy: say so, and show nothing of what it holds
                self.sources.pop(name, None)
                message = f"include `{inc.path}` is not a policy file (not `.rules`, and not in the rule language)"
                self.diagnostics.append(Diagnostic("include_not_policy", message, inc.span))
            return
        sub_directory = directory if name.startswith(STDLIB_PREFIX) else os.path.dirname(name)
        self.visit(program, sub_directory, chain + [(key, name)])


def flatten(
    program: ast.Program,
    base_dir: str | os.PathLike[str] | None = None,
    allow: tuple[str | os.PathLike[str], ...] = (),
) -> Flattened:
    """Replace every `.include` by the items of the file it names, recursively.
    Includes stay under the top file's directory (or `base_dir`) and `allow`."""
    root = program.file
    if base_dir is not None:
        directory = os.fspath(base_dir)
    else:
        directory = os.path.dirname(root) if root else ""
    roots = tuple(os.path.realpath(os.fspath(d)) for d in (directory or ".", *allow))
    flat = _Flattener(roots)
    chain: list[tuple[str, str]] = []
    if root:
        flat.files.append(root)
        flat.seen.add(os.path.realpath(root))
        chain.append((os.path.realpath(root), root))
    flat.visit(program, directory, chain)
    flat.expand()
    return Flattened(tuple(flat.items), tuple(flat.files), flat.sources, flat.diagnostics, flat.syntax)

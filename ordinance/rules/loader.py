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
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

from ..diagnostics import Diagnostic, ParseError, Span
from . import ast
from .components import expand_components
from .expand import eqrel_rules, expand_invariant, expand_rule, expand_subsumption
from .parser import parse
from .ranges import lift_ranges
from .inline import inline_relations
from .witness import ground_witnesses

__all__ = [
    "STDLIB_PREFIX",
    "MAX_INCLUDE_DEPTH",
    "MAX_SOURCE_BYTES",
    "Flattened",
    "flatten",
    "decode",
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


def read_source(file: str) -> str | None:
    """The text behind a span's file name, for rendering; None if unreadable."""
    if file.startswith(STDLIB_PREFIX):
        return _stdlib_text(file[len(STDLIB_PREFIX) :].removesuffix(".rules"))
    try:
        return Path(file).read_bytes().decode("utf-8", errors="replace")
    except OSError:
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
                self.items.extend(ground_witnesses(lift_ranges(r)) for r in expand_rule(item, self.diagnostics))
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
            size = os.path.getsize(located)
            if size > MAX_SOURCE_BYTES:
                message = f"include `{inc.path}` is {size:,} bytes; an include holds at most {MAX_SOURCE_BYTES:,}"
                self.diagnostics.append(Diagnostic("too_large", message, inc.span))
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
                text = decode(Path(name).read_bytes(), name)
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

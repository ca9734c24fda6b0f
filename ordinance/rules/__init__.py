"""The rule language: text -> AST -> checked program, or precise diagnostics.

program = parse(text, "policy.rules")      # ParseError: every syntax error
checked = check(program)                   # CheckError: every finding
checked = load("policy.rules")             # both, from a file
print(render_diagnostics(err.diagnostics, {"policy.rules": text}))
"""

from __future__ import annotations

import os
from typing import Any

from .checked import CheckedProgram, Relation
from .checks import check
from .ground import check_declared, parse_facts, typed_fact
from .loader import read_policy, read_source
from .parser import parse
from .printer import format_atom, format_literal, format_program, format_rule, format_term
from .report import render_diagnostics, sort_diagnostics

__all__ = [
    "parse",
    "parse_facts",
    "check_declared",
    "typed_fact",
    "check",
    "load",
    "compile_text",
    "format_program",
    "format_rule",
    "format_literal",
    "format_atom",
    "format_term",
    "render_diagnostics",
    "sort_diagnostics",
    "read_source",
    "CheckedProgram",
    "Relation",
]


def compile_text(text: str, file: str | None = None, **check_kwargs: Any) -> CheckedProgram:
    """Parse and check; keyword arguments go to `check`."""
    return check(parse(text, file), **check_kwargs)


def load(path: str | os.PathLike[str], **check_kwargs: Any) -> CheckedProgram:
    """Read, parse and check a `.rules` file (includes relative to it)."""
    name = os.fspath(path)
    return compile_text(read_policy(name), name, **check_kwargs)

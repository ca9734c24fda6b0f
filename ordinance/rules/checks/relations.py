"""Unknown relations: a relation mentioned but never declared, defined by a
rule or fact, or supplied as data."""

from __future__ import annotations

import difflib
from collections import defaultdict
from typing import Iterable, Mapping

from ...diagnostics import Diagnostic, Span
from .. import ast
from .walk import uses

__all__ = ["check_relations", "known_relations", "Suggester", "unknown_relation"]

_SPREAD = 2  # candidate lengths: within this many characters of the unknown name
_PER_BUCKET = 8  # candidates kept per (first character | last two, length) bucket


class Suggester:
    """ "Did you mean": the closest known name, looked for among a bounded
    set of candidates (same first character or same last two, a similar
    length), so N unknown names cost O(N), not O(N x known)."""

    def __init__(self, known: Iterable[str]) -> None:
        self._buckets: dict[tuple[str, int], list[str]] = defaultdict(list)
        for name in sorted(known):
            for key in (("^" + name[:1], len(name)), ("$" + name[-2:], len(name))):
                bucket = self._buckets[key]
                if len(bucket) < _PER_BUCKET:
                    bucket.append(name)
        self._seen: dict[str, str | None] = {}

    def __call__(self, name: str) -> str | None:
        if name not in self._seen:
            pool = {
                candidate
                for length in range(len(name) - _SPREAD, len(name) + _SPREAD + 1)
                for key in (("^" + name[:1], length), ("$" + name[-2:], length))
                for candidate in self._buckets.get(key, ())
            }
            close = difflib.get_close_matches(name, sorted(pool), n=1)
            self._seen[name] = close[0] if close else None
        return self._seen[name]


def unknown_relation(name: str, known: Iterable[str], where: str = "") -> Diagnostic:
    """`unknown_relation` for a fact or pattern naming `name`, which the policy
    does not declare, with the "did you mean" `lint` gives (among `known`)."""
    close = Suggester(known)(name)
    return Diagnostic(
        "unknown_relation",
        f"{where}relation `{name}` is not declared by the policy",
        help=f"did you mean `{close}`" if close else None,
    )


def known_relations(items: tuple[ast.Item, ...], extensional: Mapping[str, int]) -> set[str]:
    known = set(extensional)
    for item in items:
        if isinstance(item, ast.Decl):
            known.add(item.name)
        elif isinstance(item, ast.Rule):
            known.add(item.head.relation)
    return known


def check_relations(items: tuple[ast.Item, ...], extensional: Mapping[str, int]) -> list[Diagnostic]:
    known = known_relations(items, extensional)
    suggest = Suggester(known)
    found: list[Diagnostic] = []
    for use in uses(items):
        if use.relation in known or use.role in ("head", "fact"):
            continue
        close = suggest(use.relation)
        s = use.span
        name_span = Span(s.line, s.column, s.line, s.column + len(use.relation), s.file)
        found.append(
            Diagnostic(
                "unknown_relation",
                f"unknown relation `{use.relation}`",
                name_span if use.atom else s,
                help=f"did you mean `{close}`" if close else None,
            )
        )
    return found

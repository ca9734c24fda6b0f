"""Validating events against the relations' declared types.

A schema maps a relation name to its argument types (`symbol`, `number`,
`time`, `duration`; any other name, e.g. `any`, accepts both). Symbols are
`str`; numbers, times and durations are `int` (seconds for times). The
checked policy provides it: see `schema_of`.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from ..diagnostics import Diagnostic
from .events import KIND_RELATIONS, KINDS, Event, encode_payload

__all__ = ["Schema", "schema_of", "validate"]

Schema = Mapping[str, tuple[str, ...]]

_PYTYPE = {"symbol": str, "number": int, "time": int, "duration": int}


def schema_of(program: Any) -> dict[str, tuple[str, ...]]:
    """The schema of a CheckedProgram: every relation with its declared types
    (`any` for each argument of a relation declared without types)."""
    return {
        name: rel.types if rel.types is not None else ("any",) * rel.arity
        for name, rel in program.relations.items()
    }


def _show(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


def _event_diagnostics(n: int, event: Event, schema: Schema | None) -> Iterable[Diagnostic]:
    def diag(code: str, message: str, column: int = 0) -> Diagnostic:
        return Diagnostic(code, f"event {n}: {message}")  # not source text: the message says where

    if event.kind not in KINDS:
        yield diag("unknown_kind", f"kind `{event.kind}` is not one of {', '.join(KINDS)}")
        return
    allowed = KIND_RELATIONS[event.kind]
    if allowed is not None and event.relation not in allowed:
        yield diag(
            "kind_mismatch",
            f"a `{event.kind}` event carries `{'`, `'.join(sorted(allowed))}`, not `{event.relation}`",
        )
        return
    if not isinstance(event.source, str) or not isinstance(event.author, str):
        yield diag("type_mismatch", "source and author must be strings")
    if not isinstance(event.args, tuple):
        yield diag("type_mismatch", f"the arguments of `{event.relation}` must be a tuple")
        return
    if event.payload is not None:
        try:
            encode_payload(event.payload)
        except (TypeError, ValueError):
            yield diag("bad_payload", "payload is not a JSON object")
    types: tuple[str, ...] = ("any",) * len(event.args)
    if event.kind == "decision":
        if event.args or not isinstance(event.payload, Mapping):
            yield diag("bad_payload", "a decision has no arguments and a JSON object payload")
            return
    elif event.kind == "purge":
        if not event.args or not all(type(a) is int for a in event.args):
            yield diag("bad_payload", "a purge names the purged sequence numbers as arguments")
            return
    elif schema is not None:
        declared = schema.get(event.relation)
        if declared is None:
            yield diag("unknown_relation", f"relation `{event.relation}` is not declared")
            return
        if len(declared) != len(event.args):
            yield diag(
                "arity_mismatch",
                f"relation `{event.relation}` used with {len(event.args)} arguments, "
                f"declared with {len(declared)}",
            )
            return
        types = declared
    for i, (declared_type, value) in enumerate(zip(types, event.args), 1):
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            yield diag(
                "type_mismatch",
                f"argument {i} of `{event.relation}` is {_show(value)}, not a string or an integer",
                i,
            )
            continue
        pytype = _PYTYPE.get(declared_type)
        if pytype is not None and not isinstance(value, pytype):
            yield diag(
                "type_mismatch",
                f"argument {i} of `{event.relation}` is {_show(value)}, declared `{declared_type}`",
                i,
            )


def validate(events: Iterable[Event], schema: Schema | None) -> list[Diagnostic]:
    """Every problem with `events` (numbered from 1 in the batch), one per line.

    Without a schema only the shape is checked (kinds, argument value types).
    """
    found: list[Diagnostic] = []
    for n, event in enumerate(events, 1):
        found.extend(_event_diagnostics(n, event, schema))
    return found

"""Validating events: the one check every write path runs.

`Store.append`, `assert_facts`, `log_decision`, `purge`, `fence` and the
JSON Lines import all call `validate` before their transaction starts, so
the CLI, the library and an import refuse exactly the same things:

- facts of a relation the schema does not declare, or with the wrong arity
  or argument types (`symbol` is `str`; `number`, `time`, `duration` are
  `int`, times in seconds; any other type name, e.g. `any`, takes both);
- any fact of a relation with a record or ADT argument (`schema_of` types
  it `record`): the store keeps no records; `.input` fact files carry them;
- facts of a relation that is never stored: a relation a rule of the policy
  derives (`Schema.derived`: storing `permit("a1")` would let the gate allow
  what the rules deny) and the request-side relations, which only a request
  fills (`request`, `request_*`);
- any fact at all when the store has no schema: without the policy it cannot
  know which relations are derived, so it writes log events only;
- values that are not values (see `ordinance.values.value_problem`: NUL
  bytes, lone surrogates, integers outside 64 bits, times beyond year 9999),
  in arguments, source, author, fences and payloads alike;
- a decision event whose payload is not a decision, a purge without reason.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Mapping, Sequence

from ..diagnostics import Diagnostic, arity_message
from ..rules.checked import is_request_side
from ..rules.checks.relations import unknown_relation
from ..values import MAX_INT, MIN_INT, string_problem, value_problem
from .events import FACT_KINDS, KIND_RELATIONS, KINDS, Event

__all__ = ["Schema", "schema_of", "validate", "fence_problem", "decision_problem"]

RECORD = "record"  # the schema's type of a record or ADT argument: never stored


class Schema(Mapping[str, tuple[str, ...]]):
    """Relation name -> argument types, and the `derived` relations (those
    a rule of the policy derives), which the store never takes as facts.

    A plain mapping works where a Schema is expected: it declares relations
    and derives none (`Schema.of`)."""

    __slots__ = ("_types", "derived")

    def __init__(self, types: Mapping[str, Sequence[str]], derived: Iterable[str] = ()) -> None:
        self._types = {name: tuple(t) for name, t in types.items()}
        self.derived = frozenset(derived)

    @classmethod
    def of(cls, schema: Mapping[str, Sequence[str]]) -> Schema:
        return schema if isinstance(schema, Schema) else cls(schema)

    def __getitem__(self, name: str) -> tuple[str, ...]:
        return self._types[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._types)

    def __len__(self) -> int:
        return len(self._types)

    def __repr__(self) -> str:
        return f"Schema({self._types!r}, derived={sorted(self.derived)!r})"


def schema_of(program: Any) -> Schema:
    """The schema of a CheckedProgram: every relation with its declared types
    (`any` for each argument of a relation declared without types); a
    relation with a rule (a body, or a fact written in the policy) is derived."""
    heads = {rule.head.relation for rule in program.rules}
    structured = getattr(program, "structures", {})
    return Schema(
        {
            name: tuple(RECORD if t in structured else t for t in rel.types)
            if rel.types is not None
            else ("any",) * rel.arity
            for name, rel in program.relations.items()
        },
        derived={name for name, rel in program.relations.items() if rel.derived or name in heads},
    )


def _show(value: object) -> str:
    if isinstance(value, str):
        return f'"{value[:40]}"' if string_problem(value) is None else "a string"
    if isinstance(value, int) and not isinstance(value, bool) and not MIN_INT <= value <= MAX_INT:
        return "an integer outside 64 bits"
    return f"{value!r:.40}"


def fence_problem(resource: object, epoch: object) -> tuple[str, str] | None:
    """(code, message) if (`resource`, `epoch`) is not a fence."""
    if not isinstance(resource, str) or isinstance(epoch, bool) or not isinstance(epoch, int):
        return "bad_fence", "a fence is a (resource string, integer epoch) pair"
    problem = string_problem(resource)
    if problem is not None:
        return problem[0], f"the fence's resource {problem[1]}"
    if not 0 <= epoch <= MAX_INT:
        return _range(code="epoch_range")
    return None


def _range(*, code: str) -> tuple[str, str]:
    return code, "an epoch is an integer from 0 to 2^63 - 1"


def _json_problem(value: Any, depth: int = 0) -> tuple[str, str] | None:
    """The first value of a JSON payload that is not storable."""
    if depth > 64:
        return "bad_payload", "is nested too deeply"
    if type(value) is str:  # most of a payload (a decision's request): checked first, and cheaply
        return string_problem(value)
    if isinstance(value, dict) or isinstance(value, Mapping):  # (typing's Mapping is slow to test for)
        for k, v in value.items():
            if not isinstance(k, str):
                return "bad_payload", "has a key that is not a string"
            found = string_problem(k) or _json_problem(v, depth + 1)
            if found:
                return found
        return None
    if isinstance(value, (list, tuple)):
        for v in value:
            found = _json_problem(v, depth + 1)
            if found:
                return found
        return None
    if value is None or isinstance(value, (bool, float)):
        return (
            None
            if not isinstance(value, float) or value == value and abs(value) != float("inf")
            else ("bad_payload", "holds a number that is not finite")
        )
    if isinstance(value, (str, int)):
        return value_problem(value)
    return "bad_payload", f"holds {type(value).__name__}, not JSON"


def _strs(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def decision_problem(payload: Any) -> str | None:
    """What is wrong with a decision event's payload, or None: the fields
    `Decision.payload()` writes and `ordinance log` / `replay` read."""
    if not isinstance(payload, Mapping):
        return "a decision's payload is a JSON object"
    r = payload.get("request")
    if not isinstance(r, Mapping):
        return "a decision names its `request` (a JSON object)"
    for name in ("id", "kind", "target", "agent"):
        if not isinstance(r.get(name), str) or not r[name]:
            return f"the request's `{name}` is a non-empty string"
    epoch = r.get("epoch")
    if isinstance(epoch, bool) or not isinstance(epoch, int):
        return "the request's `epoch` is an integer"
    for name in ("scope", "key"):
        if r.get(name) is not None and not isinstance(r[name], str):
            return f"the request's `{name}` is a string or null"
    for name in ("uses", "routes", "requires"):
        if name in r and not _strs(r[name]):
            return f"the request's `{name}` is a list of strings"
    if "needs" in r and not (isinstance(r["needs"], list) and all(_strs(n) and len(n) == 3 for n in r["needs"])):
        return "the request's `needs` is a list of (subject, attribute, value) lists"
    if "irreversible" in r and not isinstance(r["irreversible"], bool):
        return "the request's `irreversible` is true or false"
    if not isinstance(payload.get("allowed"), bool):
        return "a decision's `allowed` is true or false"
    for name in ("now", "revision"):
        value = payload.get(name)
        if isinstance(value, bool) or not isinstance(value, int):
            return f"a decision's `{name}` is an integer"
    if value_problem(payload["now"], "time") is not None:  # `log` and `replay` read it as an instant
        return "a decision's `now` is an instant in years 1 to 9999 or `forever`"
    if not 0 <= payload["revision"] <= MAX_INT:
        return "a decision's `revision` is an integer from 0 to 2^63 - 1"
    if not isinstance(payload.get("policy_hash"), str):
        return "a decision's `policy_hash` is a string"
    for name in ("reasons", "flags"):
        items = payload.get(name, [])
        if not isinstance(items, list) or not all(
            isinstance(i, Mapping) and isinstance(i.get("code"), str) and isinstance(i.get("detail", ""), str)
            for i in items
        ):
            return f"a decision's `{name}` is a list of objects with a string `code`"
    errors = payload.get("errors", [])
    if not isinstance(errors, list) or not all(
        isinstance(e, Mapping) and isinstance(e.get("code"), str) and isinstance(e.get("message"), str) for e in errors
    ):
        return "a decision's `errors` is a list of objects with a string `code` and `message`"
    return None


def _event_diagnostics(n: int, event: Event, schema: Schema | None) -> Iterable[Diagnostic]:
    def diag(code: str, message: str) -> Diagnostic:
        return Diagnostic(code, f"event {n}: {message}")  # not source text: the message says where

    if not isinstance(event, Event):
        yield diag("type_mismatch", f"expected an Event, not {type(event).__name__}")
        return
    if not isinstance(event.kind, str) or event.kind not in KINDS:
        yield diag("unknown_kind", f"kind `{_show(event.kind)}` is not one of {', '.join(KINDS)}")
        return
    if not isinstance(event.relation, str):
        yield diag("type_mismatch", "the relation must be a string")
        return
    allowed = KIND_RELATIONS[event.kind]
    if allowed is not None and event.relation not in allowed:
        yield diag(
            "kind_mismatch",
            f"a `{event.kind}` event carries `{'`, `'.join(sorted(allowed))}`, not `{_show(event.relation)}`",
        )
        return
    for name in ("relation", "source", "author", "time"):
        value = getattr(event, name)
        if not isinstance(value, str):
            yield diag("type_mismatch", f"the event's {name} must be a string")
            return
        problem = string_problem(value)
        if problem is not None:
            yield diag(problem[0], f"the event's {name} {problem[1]}")
            return
    if not isinstance(event.layer, str) or not event.layer:
        yield diag("bad_layer", "the layer must be a non-empty string")
        return
    if (event.resource, event.epoch) != (None, None):
        problem = fence_problem(event.resource, event.epoch)
        if problem is not None:
            yield diag(*problem)
            return
    if not isinstance(event.args, tuple):
        yield diag("type_mismatch", f"the arguments of `{event.relation}` must be a tuple")
        return
    if event.payload is not None:
        problem = (
            _json_problem(event.payload)
            if isinstance(event.payload, Mapping)
            else ("bad_payload", "is not a JSON object")
        )
        if problem is not None:
            yield diag(problem[0], f"the payload {problem[1]}")
            return
    types: tuple[str, ...] = ("any",) * len(event.args)
    if event.kind == "decision":
        why = "a decision has no arguments" if event.args else decision_problem(event.payload)
        if why is not None:
            yield diag("bad_decision", why)
            return
    elif event.kind == "purge":
        if not event.args or not all(type(a) is int and 0 < a <= MAX_INT for a in event.args):
            yield diag("bad_payload", "a purge names the purged sequence numbers as arguments")
            return
        reason = (event.payload or {}).get("reason")
        if not isinstance(reason, str) or not reason.strip():
            yield diag("no_reason", "a purge says why (a non-empty `reason` in its payload)")
            return
    elif event.kind in FACT_KINDS:
        if is_request_side(event.relation):
            yield diag(
                "request_fact",
                f"`{event.relation}` facts describe a request: pass them to the gate, not the store",
            )
            return
        if schema is None:
            yield diag("no_schema", "a store opened without a policy's schema takes no facts")
            return
        if event.relation in schema.derived:
            yield diag(
                "derived_relation",
                f"`{event.relation}` is derived by the policy's rules and is never stored",
            )
            return
        declared = schema.get(event.relation)
        if declared is None:
            yield unknown_relation(event.relation, schema, where=f"event {n}: ")
            return
        if len(declared) != len(event.args):
            yield diag("arity_mismatch", arity_message(event.relation, len(event.args), len(declared)))
            return
        types = declared
    for i, (declared_type, value) in enumerate(zip(types, event.args), 1):
        if declared_type == RECORD:
            yield diag("unsupported", f"argument {i} of `{event.relation}` is a record or ADT; the store keeps none")
            continue
        problem = value_problem(value, declared_type)
        if problem is not None:
            yield diag(problem[0], f"argument {i} of `{event.relation}` {problem[1]}")


def validate(events: Iterable[Event], schema: Mapping[str, Sequence[str]] | None) -> list[Diagnostic]:
    """Every problem with `events` (numbered from 1 in the batch), one per line."""
    checked = None if schema is None else Schema.of(schema)
    found: list[Diagnostic] = []
    for n, event in enumerate(events, 1):
        found.extend(_event_diagnostics(n, event, checked))
    return found

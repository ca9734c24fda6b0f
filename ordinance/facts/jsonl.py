"""JSON Lines import and export of the log, round-tripping exactly.

One event per line, as `Event.to_json()`: seq, kind, relation, args (JSON
strings and integers keep their types), source, author, time, resource,
epoch, payload. Import keeps every field, so the file must continue the
store's log (first seq = revision + 1, consecutive); importing an export
into an empty store reproduces identical events. A malformed file is refused
whole with `StoreError` and messages `jsonl:LINE: ...`.
"""

from __future__ import annotations

import json
from typing import IO, Any

from ..diagnostics import Diagnostic, StoreError
from .events import Event
from .schema import validate
from .store import Store

__all__ = ["export_jsonl", "import_jsonl"]

_FIELDS = {
    "seq": (int,),
    "kind": (str,),
    "relation": (str,),
    "args": (list,),
    "source": (str,),
    "author": (str,),
    "time": (str,),
    "resource": (str, type(None)),
    "epoch": (int, type(None)),
    "payload": (dict, type(None)),
}


def export_jsonl(store: Store, fp: IO[str], since: int = 0, until: int | None = None) -> int:
    """Write the events with since < seq <= until to `fp`; return how many."""
    events = store.events(since, until)
    for e in events:
        fp.write(json.dumps(e.to_json(), ensure_ascii=False) + "\n")
    return len(events)


def _parse(line: str, lineno: int) -> tuple[Event | None, str | None]:
    try:
        obj: Any = json.loads(line)
    except json.JSONDecodeError as err:
        return None, f"not JSON: {err.msg.lower()}"
    if not isinstance(obj, dict):
        return None, "expected a JSON object"
    missing = sorted(set(_FIELDS) - set(obj))
    extra = sorted(set(obj) - set(_FIELDS))
    if missing or extra:
        return None, f"fields missing: {missing}, unexpected: {extra}"
    for name, types in _FIELDS.items():
        value = obj[name]
        if isinstance(value, bool) or not isinstance(value, types):
            return None, f"field `{name}` has the wrong type"
    return (
        Event(
            kind=obj["kind"],
            relation=obj["relation"],
            args=tuple(obj["args"]),
            source=obj["source"],
            author=obj["author"],
            seq=obj["seq"],
            time=obj["time"],
            resource=obj["resource"],
            epoch=obj["epoch"],
            payload=obj["payload"],
        ),
        None,
    )


def import_jsonl(store: Store, fp: IO[str]) -> int:
    """Append the events of a JSON Lines file, keeping seq and time, in one
    transaction; return the new revision. Blank lines are skipped."""
    events: list[Event] = []
    problems: list[Diagnostic] = []
    expected = store.revision() + 1
    for lineno, line in enumerate(fp, 1):
        if not line.strip():
            continue

        def bad(code: str, message: str) -> None:
            problems.append(Diagnostic(code, f"jsonl:{lineno}: {message}"))

        event, error = _parse(line, lineno)
        if event is None:
            bad("bad_jsonl", error or "malformed")
            continue
        if event.seq != expected:
            bad("bad_seq", f"seq {event.seq} does not follow revision {expected - 1}")
        expected = event.seq + 1
        for d in validate([event], store.schema):
            bad(d.code, d.message.removeprefix("event 1: "))
        events.append(event)
    if problems:
        raise StoreError(problems)
    return store._import(events)

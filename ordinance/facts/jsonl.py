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
import re
from typing import IO, Any, Iterable, Mapping, Sequence

from ..diagnostics import Diagnostic, InputError, StoreError
from ..values import json_text, to_value
from .events import DEFAULT_LAYER, Event, kind_of, now_text
from .schema import validate
from .store import Store

__all__ = [
    "export_jsonl",
    "import_jsonl",
    "read_facts",
    "decode_text",
    "read_lines",
    "is_export",
    "parse_json",
    "MAX_JSON_DEPTH",
    "MAX_LINE_BYTES",
    "MAX_LOAD_BYTES",
]

# arrays and objects inside each other in one JSON text (a fact, a request, a
# hook payload): deeper is refused with `too_deep` before anything walks it
MAX_JSON_DEPTH = 64
# what `ordinance load` reads of a file (`read_lines`): one line (a fact, an
# event; an export's longest is a decision with its proof) and the whole file,
# which is validated whole before one transaction writes it
MAX_LINE_BYTES = 16 * 1024 * 1024  # as a server body (serve.app.MAX_BODY)
MAX_LOAD_BYTES = 1024 * 1024 * 1024
_INT_CHARS = len(str(-(2**63)))  # every integer is a signed 64-bit one: longer text is refused unread

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
    "layer": (str,),
}
_OPTIONAL = {"layer": DEFAULT_LAYER}  # exports written before the field existed
# the log time the store writes (`events.now_text`), which `log --since` compares as text
_TIME = re.compile(r"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3])(:[0-5][0-9]){2}\.[0-9]{6}Z")


def export_jsonl(store: Store, fp: IO[str], since: int = 0, until: int | None = None) -> int:
    """Write the events with since < seq <= until to `fp`; return how many."""
    events = store.events(since, until)
    for e in events:
        fp.write(json_text(e.to_json()) + "\n")
    return len(events)


def decode_text(data: bytes, name: str) -> str:
    """`data` as UTF-8 text, or StoreError `encoding` naming `name`, the line and the byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise StoreError([Diagnostic("encoding", f"{name}:{line}: invalid UTF-8 at byte {err.start}")]) from None


def read_lines(fp: IO[bytes], name: str, max_line: int = MAX_LINE_BYTES, max_bytes: int = MAX_LOAD_BYTES) -> list[str]:
    """The lines of `fp` as text, read one at a time with a bound on each
    line and on the whole (an endless file, `/dev/zero`, a FIFO, stops at
    the first bound passed): StoreError `too_large` naming `name` and the
    line, or `encoding` (decode_text) for invalid UTF-8."""
    lines: list[bytes] = []
    size = 0
    while True:
        line = fp.readline(max_line + 1)
        if not line:
            break
        if len(line) > max_line:
            message = f"{name}:{len(lines) + 1}: a line longer than {max_line} bytes"
            raise StoreError([Diagnostic("too_large", message)])
        size += len(line)
        if size > max_bytes:
            message = f"{name}:{len(lines) + 1}: the file is longer than {max_bytes} bytes"
            raise StoreError([Diagnostic("too_large", message)])
        lines.append(line)
    return decode_text(b"".join(lines), name).splitlines(keepends=True)


class _Refused(ValueError):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _int(text: str) -> int:
    if len(text) > _INT_CHARS:
        raise _Refused("integer_range", f"an integer of {len(text.lstrip('-'))} digits, outside signed 64 bits")
    return int(text)


def _constant(text: str) -> Any:
    raise _Refused(code="bad_json", message=f"`{text}` is not a JSON number")


def _too_deep(value: Any) -> bool:
    """Whether `value` nests arrays and objects more than MAX_JSON_DEPTH deep
    (walked without recursion, containers only)."""
    level: list[Any] = [value]
    for _ in range(MAX_JSON_DEPTH):
        inner: list[Any] = []
        for v in level:
            if isinstance(v, list):
                inner.extend(x for x in v if isinstance(x, (list, dict)))
            elif isinstance(v, dict):
                inner.extend(x for x in v.values() if isinstance(x, (list, dict)))
        if not inner:
            return False
        level = inner
    return True


def parse_json(text: str | bytes, where: str = "the body", malformed: str = "bad_json") -> Any:
    """One JSON text, as every path into ordinance reads JSON: nesting at
    most MAX_JSON_DEPTH (`too_deep`), integers within signed 64 bits read
    without converting longer text (`integer_range`), no `NaN`/`Infinity`,
    UTF-8 (`encoding`), else `malformed` (a line of a JSON Lines file:
    `bad_jsonl`). Raises InputError whose message begins with `where`."""

    def json_error(code: str, message: str) -> InputError:
        return InputError([Diagnostic(code, f"{where}: {message}")])

    try:
        value = json.loads(text, parse_int=_int, parse_constant=_constant)
    except _Refused as exc:
        raise json_error(malformed if exc.code == "bad_json" else exc.code, str(exc)) from None
    except json.JSONDecodeError as exc:
        where_in = f"line {exc.lineno}, column {exc.colno}" if exc.lineno > 1 else f"column {exc.colno}"
        reason = exc.msg.lower().removesuffix(" at")
        raise json_error(malformed, f"not JSON: {reason} at {where_in}") from None
    except UnicodeDecodeError:
        raise json_error("encoding", "not UTF-8 text") from None
    except RecursionError:
        raise json_error("too_deep", f"JSON nested more than {MAX_JSON_DEPTH} deep") from None
    if _too_deep(value):
        raise json_error("too_deep", f"JSON nested more than {MAX_JSON_DEPTH} deep")
    return value


def _json(line: str) -> tuple[Any, tuple[str, str] | None]:
    """The value of a line, or None and (code, what is wrong). The line's
    ending is not part of it: a string cut short reads as unterminated, not
    as holding a control character."""
    try:
        return parse_json(line.rstrip("\r\n"), "line", malformed="bad_jsonl"), None
    except InputError as exc:
        return None, (exc.code, exc.diagnostics[0].message.removeprefix("line: "))


def is_export(line: str) -> bool:
    """A line of an export (an event with its `seq`), not a plain fact."""
    obj, _ = _json(line)
    return isinstance(obj, dict) and "seq" in obj


def _parse(line: str, lineno: int) -> tuple[Event | None, tuple[str, str] | None]:
    obj, error = _json(line)
    if error is not None:
        return None, error
    if not isinstance(obj, dict):
        return None, ("bad_jsonl", "expected a JSON object")
    obj = {**_OPTIONAL, **obj}
    missing = sorted(set(_FIELDS) - set(obj))
    extra = sorted(set(obj) - set(_FIELDS))
    if missing or extra:
        return None, ("bad_jsonl", f"fields missing: {missing}, unexpected: {extra}")
    for name, types in _FIELDS.items():
        value = obj[name]
        if isinstance(value, bool) or not isinstance(value, types):
            return None, ("bad_jsonl", f"field `{name}` has the wrong type")
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
            layer=obj["layer"],
        ),
        None,
    )


def import_jsonl(store: Store, fp: IO[str], name: str = "jsonl", decisions: bool = False) -> int:
    """Append the events of a JSON Lines file, keeping seq and time, in one
    transaction; return the new revision. Blank lines are skipped; problems
    are reported as `NAME:LINE: ...` (the file's name).

    A decision event in the file was not made by this store's gate (an
    import continues the log: it never holds the store's own events), so it
    is refused (`imported_decision`) unless `decisions`: the owner restoring
    an export it vouches for (`ordinance load --decisions`). Otherwise a
    forged allowed decision could be presented by `log` and `replay` as one
    this store made."""
    events: list[Event] = []
    problems: list[Diagnostic] = []
    expected = store.revision() + 1
    for lineno, line in enumerate(fp, 1):
        if not line.strip():
            continue

        def bad(code: str, message: str) -> None:
            problems.append(Diagnostic(code, f"{name}:{lineno}: {message}"))

        event, error = _parse(line, lineno)
        if event is None:
            bad(*(error or ("bad_jsonl", "malformed")))
            continue
        if event.kind == "decision" and not decisions:
            bad("imported_decision", "a decision event this store did not make (load --decisions keeps an export's)")
        if event.seq != expected:
            bad("bad_seq", f"seq {event.seq} does not follow revision {expected - 1}")
        if not _TIME.fullmatch(event.time) or not 1 <= int(event.time[:4]):
            bad("time_range", f"field `time` is {event.time[:40]!r}, not a log time like {now_text()!r}")
        expected = event.seq + 1
        for d in validate([event], store.schema):
            bad(d.code, d.message.removeprefix("event 1: "))
        events.append(event)
    if problems:
        raise StoreError(problems)
    return store._import(events)


def read_facts(
    fp: Iterable[str],
    schema: Mapping[str, Sequence[str]] | None,
    source: str,
    author: str,
    name: str = "jsonl",
    layer: str = DEFAULT_LAYER,
) -> list[Event]:
    """Lines `{"relation": ..., "args": [...]}` (optional "source", "author",
    "layer"; `layer` for lines without one) as fact events; arguments of `time` and `duration` columns may be written
    `2026-08-14T12:00:00Z` / `4h`. Every line is checked by `validate`, as the
    store will check it again; a bad file raises StoreError `NAME:LINE: ...`
    for each bad line and nothing is returned."""
    events: list[Event] = []
    lines: list[int] = []
    problems: list[Diagnostic] = []
    order: list[int] = []  # the line of each problem

    def bad(lineno: int, code: str, message: str) -> None:
        problems.append(Diagnostic(code, f"{name}:{lineno}: {message}"))  # the message says where
        order.append(lineno)

    for lineno, line in enumerate(fp, 1):
        if not line.strip():
            continue
        obj, error = _json(line)
        if error is None and not isinstance(obj, dict):
            error = ("bad_jsonl", "expected a JSON object")
        if error is None and (not isinstance(obj.get("relation"), str) or not isinstance(obj.get("args"), list)):
            error = ("bad_jsonl", 'a fact line is {"relation": NAME, "args": [...]}')
        extra = sorted(set(obj) - {"relation", "args", "source", "author", "layer"}) if error is None else []
        if extra:
            error = ("bad_jsonl", f"unexpected field `{extra[0]}`")
        if error is not None:
            bad(lineno, *error)
            continue
        relation = obj["relation"]
        types = (schema or {}).get(relation) or ("any",) * len(obj["args"])
        try:
            args = tuple(
                to_value(v, t) if isinstance(v, str) and t in ("time", "duration") else v
                for v, t in zip(obj["args"], types)
            ) + tuple(obj["args"][len(types) :])
        except ValueError as err:
            bad(lineno, "type_mismatch", str(err))
            continue
        events.append(
            Event(
                kind_of(relation),
                relation,
                args,
                obj.get("source", source),
                obj.get("author", author),
                layer=obj.get("layer", layer),
            )
        )
        lines.append(lineno)
    for d in validate(events, schema):  # "event N: ...", N counting the facts read
        number, _, message = d.message.partition(": ")
        bad(lines[int(number.removeprefix("event ")) - 1], d.code, message)
    if problems:
        raise StoreError([d for _, d in sorted(zip(order, problems), key=lambda p: p[0])])
    return events

"""Events: the one record type of the append-only log.

Every event has a relation and typed arguments, so folding them into facts is uniform. The
kind says why it was written:

- fact kinds, replayed as the fact `relation(args)`: `assert` (any
  relation), `supersede` (`supersedes(New, Old)`), `correct`
  (`correction(New, Old)`), `tombstone` (`tombstone`, `tombstone_evidence`,
  `revive_when`, `retest_after`), `receipt` (`receipt`), `observation`
  (`observation`);
- log kinds, never replayed as facts: `decision` (relation `decision`, no
  arguments, the decision in `payload`) and `purge` (relation `purge`, the
  purged sequence numbers as arguments, `{"reason": ...}` in `payload`).

`seq` is the revision (transaction time), assigned by the store, gapless.
`time` is the wall clock when written (ISO-8601 UTC): recorded, never used
for logic. `resource`/`epoch` record the fence a write was made under.
`layer` is the privacy layer of the fact (seed 001: public, federation,
sovereign, architect, or the policy's own), set when it is written; an
audience's models fold only the layers it may see (`ordinance.project`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Mapping, Sequence

from ..values import Value

__all__ = [
    "Event",
    "Value",
    "DEFAULT_LAYER",
    "KINDS",
    "FACT_KINDS",
    "LOG_KINDS",
    "KIND_RELATIONS",
    "kind_of",
    "now_text",
    "decision_event",
]

DEFAULT_LAYER = "public"  # the layer of an event written without one

FACT_KINDS = ("assert", "supersede", "correct", "tombstone", "receipt", "observation")
LOG_KINDS = ("decision", "purge")
KINDS = FACT_KINDS + LOG_KINDS

# kind -> the relations an event of that kind may carry (None: any relation)
KIND_RELATIONS: dict[str, frozenset[str] | None] = {
    "assert": None,
    "supersede": frozenset({"supersedes"}),
    "correct": frozenset({"correction"}),
    "tombstone": frozenset({"tombstone", "tombstone_evidence", "revive_when", "retest_after"}),
    "receipt": frozenset({"receipt"}),
    "observation": frozenset({"observation"}),
    "decision": frozenset({"decision"}),
    "purge": frozenset({"purge"}),
}

# relation -> the fact kind it is logged as (anything else: assert)
_KIND_OF = {
    rel: kind for kind, rels in KIND_RELATIONS.items() if kind in FACT_KINDS and rels is not None for rel in rels
}


def kind_of(relation: str) -> str:
    """The event kind a fact of `relation` is logged as."""
    return _KIND_OF.get(relation, "assert")


def now_text() -> str:
    """The wall clock as stored in `Event.time`."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True, slots=True)
class Event:
    """One entry of the log. `seq` and `time` are 0/"" until the store assigns them."""

    kind: str
    relation: str
    args: tuple[Value, ...] = ()
    source: str = ""
    author: str = ""
    seq: int = 0
    time: str = ""
    resource: str | None = None
    epoch: int | None = None
    payload: Mapping[str, Any] | None = field(default=None, hash=False)
    layer: str = DEFAULT_LAYER

    def to_json(self) -> dict[str, Any]:
        """The JSON object of this event (the JSON Lines format, one per line)."""
        return {
            "seq": self.seq,
            "kind": self.kind,
            "relation": self.relation,
            "args": list(self.args),
            "source": self.source,
            "author": self.author,
            "time": self.time,
            "resource": self.resource,
            "epoch": self.epoch,
            "payload": None if self.payload is None else dict(self.payload),
            "layer": self.layer,
        }


def encode_args(args: Sequence[Value]) -> str:
    return json.dumps(list(args), ensure_ascii=False, separators=(",", ":"))


def encode_payload(payload: Mapping[str, Any] | None) -> str | None:
    if payload is None:
        return None
    return json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def decode_row(row: Sequence[Any]) -> Event:
    """An Event from a row (seq, kind, relation, args, source, author, time,
    resource, epoch, payload, layer) as both backends store it."""
    seq, kind, relation, args, source, author, time, resource, epoch, payload, layer = row
    return Event(
        kind=kind,
        relation=relation,
        args=tuple(json.loads(args)),
        source=source,
        author=author,
        seq=int(seq),
        time=time,
        resource=resource,
        epoch=None if epoch is None else int(epoch),
        payload=None if payload is None else json.loads(payload),
        layer=layer,
    )


def decision_event(
    payload: Mapping[str, Any], *, source: str = "", author: str = "", layer: str = DEFAULT_LAYER
) -> Event:
    """The event a decision (its payload: a JSON object) is logged as: the
    one builder `Store.log_decision` and `Gate.log` share."""
    return Event("decision", "decision", (), source, author, payload=payload, layer=layer)

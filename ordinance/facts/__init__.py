"""The fact store: an append-only log, folded into the engine's facts (fold.py).

    store = open_store("./ordinance.db", schema)      # or "postgresql://..."
    store.assert_facts([("claim", ("c1", "db", "role", "primary"))], source="ops")
    store.append(events, fence=("deploy/db", 7))       # refused if epoch 7 is stale
    facts = store.facts()                              # {relation: {args, ...}}
    then = store.as_of(12).facts()                     # what was known at revision 12

See store.py for the write transaction, events.py for kinds and fields.
"""

from .events import FACT_KINDS, KINDS, LOG_KINDS, Event, Value, decision_event, kind_of
from .jsonl import (
    MAX_JSON_DEPTH,
    MAX_LINE_BYTES,
    MAX_LOAD_BYTES,
    decode_text,
    export_jsonl,
    import_jsonl,
    is_export,
    parse_json,
    read_facts,
    read_lines,
)
from .fold import fold
from .schema import Schema, decision_problem, schema_of, validate
from .open import open_store
from .store import Facts, RevisionMoved, Store, StoreView

__all__ = [
    "Event",
    "Facts",
    "FACT_KINDS",
    "KINDS",
    "LOG_KINDS",
    "Schema",
    "Store",
    "StoreView",
    "Value",
    "RevisionMoved",
    "decision_event",
    "decision_problem",
    "decode_text",
    "export_jsonl",
    "is_export",
    "MAX_JSON_DEPTH",
    "MAX_LINE_BYTES",
    "MAX_LOAD_BYTES",
    "read_lines",
    "parse_json",
    "read_facts",
    "import_jsonl",
    "kind_of",
    "open_store",
    "fold",
    "schema_of",
    "validate",
]

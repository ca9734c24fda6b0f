"""The Store interface: one append-only log, two backends, chosen by URL.

Writes go through one transaction per batch that takes the backend's write
lock, reads the revision, checks the fence, checks purge targets and inserts
the batch with consecutive sequence numbers: a batch is all or nothing and
`seq` stays gapless and in commit order. Facts are validated before the
transaction starts; a bad batch raises `StoreError` and writes nothing.

Digests: every batch that holds fact events or purges records, in the
`digests` table and in the same transaction, the sha256 of the previous
record's digest and the batch's fact and purge events (`seq`, kind, relation
and arguments as stored), keyed by the batch's first and last seq. So
`fact_digest(revision)`, which names the log's facts up to `revision` (what a
gate snapshot is checked against), is one indexed read, not a pass over the
log. A store from before digests gets its one record, covering the whole log,
when first opened (a pass over the log, once).

Purge: a `purge` event names the purged sequence numbers and why. The facts
and decisions at any revision at or after the purge leave those events out;
at an earlier revision they still show them, because the log
itself is never updated or deleted (the payload stays stored; a purge hides
it from every model built after it, it does not scrub the disk).
"""

from __future__ import annotations

import hashlib
import json
import threading
from abc import ABC, abstractmethod
from typing import AbstractSet, Any, Callable, Iterable, Mapping, Protocol, Sequence, TypeVar

from ..diagnostics import Diagnostic, StaleEpochError, StoreError
from ..values import Facts
from .events import (
    DEFAULT_LAYER,
    FACT_KINDS,
    KINDS,
    Event,
    Value,
    decode_row,
    encode_args,
    decision_event,
    encode_payload,
    kind_of,
    now_text,
)
from .schema import Schema, fence_problem, validate

__all__ = [
    "Store",
    "StoreView",
    "Facts",
    "Row",
    "WriteTxn",
    "DIGEST_KINDS",
    "EMPTY_DIGEST",
    "chain_digest",
    "digest_line",
    "RevisionMoved",
]

# seq, kind, relation, args (JSON), source, author, time, resource, epoch, payload (JSON), layer
Row = tuple[int, str, str, str, str, str, str, str | None, int | None, str | None, str]
T = TypeVar("T")


class WriteTxn(Protocol):
    """What a backend offers inside its write transaction (lock already held)."""

    def revision(self) -> int: ...
    def newest_epoch(self, resource: str) -> int | None: ...
    def set_epoch(self, resource: str, epoch: int) -> None: ...
    def kinds(self, seqs: Sequence[int]) -> dict[int, str]: ...
    def purged(self) -> set[int]: ...
    def insert(self, rows: list[Row]) -> None: ...
    def last_digest(self) -> str | None: ...
    def last_change(self) -> int: ...
    def add_digest(self, first: int, last: int, digest: str) -> None: ...


DIGEST_KINDS = (*FACT_KINDS, "purge")  # the events a digest covers: those that change the facts
EMPTY_DIGEST = hashlib.sha256(b"").hexdigest()  # the digest of a log with none of them


def chain_digest(previous: str, lines: Iterable[str]) -> str:
    """The digest after `previous` of fact and purge events given as
    `digest_line`s, in seq order."""
    h = hashlib.sha256(previous.encode("ascii"))
    for line in lines:
        h.update(b"\n")
        h.update(line.encode("utf-8"))
    return h.hexdigest()


def digest_line(seq: int, kind: str, relation: str, args: str) -> str:
    """One event as a digest covers it (`args` as stored: encoded JSON)."""
    return f"{seq}\t{kind}\t{relation}\t{args}"


def _error(code: str, message: str) -> StoreError:
    return StoreError([Diagnostic(code, message)])


class RevisionMoved(StoreError):
    """`append_each(..., unchanged_since=R)`: the facts changed after
    revision R, so nothing was written (what was decided at R is decided again)."""


class Store(ABC):
    """An append-only event log; the facts are its fold (fold.py).

    Use `open_store(url)`; a store is a context manager. One store object is
    one connection: share it between threads only with your own lock.
    """

    url: str

    def __init__(self, url: str, schema: Mapping[str, Sequence[str]] | None = None) -> None:
        self.url = url
        self._schema: Schema | None = None
        self.schema = schema
        # one connection, many threads: every use of it holds this lock, so
        # a shared store serializes its callers instead of losing writes
        self._lock = threading.RLock()

    # ---------------------------------------------------------------- backend

    @abstractmethod
    def _write(self, work: Callable[[WriteTxn], T]) -> T:
        """Run `work` in one write transaction; commit, or roll back if it raises."""

    @abstractmethod
    def _rows(self, since: int, until: int | None, kinds: Sequence[str] | None) -> list[Row]:
        """Rows with since < seq <= until (no bound if None), in seq order."""

    @abstractmethod
    def _fact_groups(self, revision: int, exclude: Sequence[int]) -> Iterable[tuple[str, str]]:
        """(relation, JSON array of argument arrays) per relation, folding
        the fact events with seq <= revision, minus the `exclude`d seqs."""

    @abstractmethod
    def _digest_at(self, revision: int) -> tuple[int, int, str, str]:
        """(first, last, digest, the digest before it) of the newest digest
        record whose first seq is at most `revision` ((0, 0, EMPTY_DIGEST,
        EMPTY_DIGEST) if none)."""

    @abstractmethod
    def _digest_lines(self, since: int, until: int) -> list[str]:
        """`digest_line`s of the fact and purge events with since <= seq <= until, in seq order."""

    @abstractmethod
    def _rows_at(self, seqs: Sequence[int]) -> list[Row]:
        """Rows with these seqs, in seq order."""

    @abstractmethod
    def _rows_of(self, relation: str, args: str, revision: int) -> list[Row]:
        """Fact event rows of `relation` with these encoded `args`, seq <= revision, in seq order."""

    @abstractmethod
    def revision(self) -> int:
        """The newest sequence number (0 for an empty store)."""

    @abstractmethod
    def close(self) -> None:
        """Close the connection."""

    # ---------------------------------------------------------------- schema

    @property
    def schema(self) -> Schema | None:
        """Relation name -> argument types, and the derived relations; None
        (no policy) takes log events only (see schema.py)."""
        return self._schema

    @schema.setter
    def schema(self, schema: Mapping[str, Sequence[str]] | None) -> None:
        self._schema = None if schema is None else Schema.of(schema)

    # ---------------------------------------------------------------- writing

    def append(self, events: Iterable[Event], *, fence: tuple[str, int] | None = None) -> int:
        """Append a batch atomically; return the new revision.

        The batch gets seqs `revision - len(batch) + 1 .. revision` in order.
        The store sets `seq` and `time`; `resource`/`epoch` come from `fence`
        (an event carrying a different one is refused). With `fence=(resource,
        epoch)`, the batch is written only if `epoch` is at least the newest
        epoch recorded for `resource` (which it then becomes); otherwise
        `StaleEpochError` and nothing is written.
        """
        stamped = self._stamped(events, fence, now_text())
        return self._locked_write(lambda txn: self._commit(txn, stamped, fence, imported=False))

    def append_each(
        self,
        batches: Sequence[tuple[Iterable[Event], tuple[str, int] | None]],
        *,
        unchanged_since: int | None = None,
    ) -> list[int | StaleEpochError]:
        """`append` of each (events, fence) batch in turn, in one write
        transaction: one durable commit for all (a group commit). A batch its
        fence refuses is not written, and its StaleEpochError stands in its
        place in the result; the others get their revision, as `append`
        returns it. Any other error writes no batch at all. Every event
        gets the same time. With `unchanged_since=R`, nothing is written
        (RevisionMoved) if a fact or purge event was committed after
        revision R: the transaction's compare-and-set on the facts a
        decision made at R read."""
        time = now_text()
        stamped = [(self._stamped(events, fence, time), fence) for events, fence in batches]

        def commit(txn: WriteTxn) -> list[int | StaleEpochError]:
            if unchanged_since is not None and txn.last_change() > unchanged_since:
                raise RevisionMoved(
                    [Diagnostic("revision_moved", f"the facts changed after revision {unchanged_since}")]
                )
            out: list[int | StaleEpochError] = []
            for rows, fence in stamped:
                try:  # the fence is checked before its batch writes anything
                    out.append(self._commit(txn, rows, fence, imported=False))
                except StaleEpochError as exc:
                    out.append(exc)
            return out

        return self._locked_write(commit)

    def _stamped(
        self, events: Iterable[Event], fence: tuple[str, int] | None, time: str
    ) -> list[tuple[Event, str, str | None, int | None]]:
        """A batch validated and stamped with `time` and its fence (StoreError if it is not valid)."""
        try:
            batch = list(events)
        except TypeError:
            raise _error("type_mismatch", "a batch is an iterable of events") from None
        problems = validate(batch, self._schema)
        resource, epoch = self._check_fence(fence)
        for n, e in enumerate(batch, 1):
            if isinstance(e, Event) and (e.resource, e.epoch) not in ((None, None), (resource, epoch)):
                problems.append(
                    Diagnostic("fence_mismatch", f"event {n}: carries a fence the batch was not written under")
                )
        if problems:
            raise StoreError(problems)
        return [(e, time, resource, epoch) for e in batch]

    def assert_facts(
        self,
        facts: Iterable[tuple[str, Sequence[Value]]],
        *,
        source: str = "",
        author: str = "",
        kind: str | None = None,
        fence: tuple[str, int] | None = None,
        layer: str = DEFAULT_LAYER,
    ) -> int:
        """Append `relation(args)` facts as events of `kind` (default: the
        kind each relation is logged as, see `kind_of`) in privacy `layer`;
        return the revision."""
        return self.append(
            [Event(kind or kind_of(rel), rel, tuple(args), source, author, layer=layer) for rel, args in facts],
            fence=fence,
        )

    def fence(self, resource: str, epoch: int) -> int:
        """Record `epoch` for `resource` unless a newer one is recorded
        (then `StaleEpochError`); return the revision it was checked at."""
        return self.append([], fence=(resource, epoch))

    def log_decision(
        self,
        payload: Mapping[str, Any],
        *,
        source: str = "",
        author: str = "",
        fence: tuple[str, int] | None = None,
        layer: str = DEFAULT_LAYER,
    ) -> int:
        """Append a decision event (payload: a JSON object) in privacy
        `layer`; return its seq."""
        return self.append([decision_event(payload, source=source, author=author, layer=layer)], fence=fence)

    def purge(
        self, seqs: Iterable[int], reason: str, *, source: str = "", author: str = "", retract: bool = False
    ) -> int:
        """Append a retention purge of the events `seqs` (not purges, not
        already purged); return its seq. See the module docstring.
        `retract=True` records that the facts were a mistake (`ordinance
        retract`), not kept past their retention: the fold is the same."""
        try:
            targets = tuple(sorted(set(seqs)))
        except TypeError:
            raise _error("bad_payload", "a purge names the purged sequence numbers") from None
        payload: dict[str, Any] = {"reason": reason}
        if retract:
            payload["retract"] = True
        return self.append([Event("purge", "purge", targets, source, author, payload=payload)])

    def seqs_of(self, relation: str, args: Sequence[Value]) -> list[int]:
        """The seqs of the live (not purged) fact events carrying exactly
        `relation(args)`."""
        purged = self.purged()
        return [s for s in self._fact_seqs(relation, encode_args(args)) if s not in purged]

    @abstractmethod
    def _fact_seqs(self, relation: str, args: str) -> list[int]:
        """Seqs of fact events whose relation and encoded args are these."""

    def _import(self, events: Sequence[Event]) -> int:
        """Append events keeping their seq, time and fence (JSON Lines import)."""
        problems = validate(events, self._schema)
        if problems:
            raise StoreError(problems)
        stamped = [(e, e.time, e.resource, e.epoch) for e in events]
        return self._locked_write(lambda txn: self._commit(txn, stamped, None, imported=True))

    def _locked_write(self, work: Callable[[WriteTxn], T]) -> T:
        with self._lock:
            try:
                return self._write(work)
            except StoreError:
                raise
            except Exception as exc:
                raise self._driver_error(exc) from exc

    def _driver_error(self, exc: Exception) -> StoreError:
        """A backend driver's error as a StoreError naming the store."""
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        return _error("store_failed", f"store `{self.url}`: {first}")

    @staticmethod
    def _check_fence(fence: tuple[str, int] | None) -> tuple[str | None, int | None]:
        if fence is None:
            return None, None
        if not isinstance(fence, tuple) or len(fence) != 2:
            raise _error("bad_fence", "a fence is a (resource string, integer epoch) pair")
        resource, epoch = fence
        problem = fence_problem(resource, epoch)
        if problem is not None:
            raise _error(*problem)
        return resource, epoch

    def _commit(
        self,
        txn: WriteTxn,
        stamped: list[tuple[Event, str, str | None, int | None]],
        fence: tuple[str, int] | None,
        imported: bool,
    ) -> int:
        revision = txn.revision()
        if fence is not None:
            self._fence(txn, fence[0], fence[1], revision)
        rows: list[Row] = []
        lines: list[str] = []
        written = 0
        for n, (e, time, resource_, epoch_) in enumerate(stamped, 1):
            seq = revision + n
            if imported:
                if e.seq != seq:
                    raise _error("bad_seq", f"event {n}: seq {e.seq} does not follow revision {seq - 1}")
                if resource_ is not None and epoch_ is not None:
                    # an imported event was written under a fence: the same
                    # check as a live write (a stale one is refused)
                    self._fence(txn, resource_, epoch_, seq - 1, f"event {n}: ")
            if e.kind == "purge":  # may purge earlier events of this batch: write them first
                if rows:
                    txn.insert(rows)
                written, rows = written + len(rows), []
                self._check_purge(txn, n, e.args)
            args = encode_args(e.args)
            if e.kind in DIGEST_KINDS:
                lines.append(digest_line(seq, e.kind, e.relation, args))
            rows.append(
                (
                    seq,
                    e.kind,
                    e.relation,
                    args,
                    e.source,
                    e.author,
                    time,
                    resource_,
                    epoch_,
                    encode_payload(e.payload),
                    e.layer,
                )
            )
        if rows:
            txn.insert(rows)
        if lines:  # the batch changes the facts: record the log's digest after it
            txn.add_digest(
                revision + 1, revision + len(stamped), chain_digest(txn.last_digest() or EMPTY_DIGEST, lines)
            )
        return revision + written + len(rows)

    @staticmethod
    def _fence(txn: WriteTxn, resource: str, epoch: int, revision: int, where: str = "") -> None:
        """Fencing: refuse `epoch` if older than the newest for `resource`,
        else record it. The one check every fenced write runs, in its transaction."""
        newest = txn.newest_epoch(resource)
        if newest is not None and epoch < newest:
            raise StaleEpochError(
                [
                    Diagnostic(
                        "stale_epoch",
                        f"{where}epoch {epoch} for `{resource}` is older than the newest epoch {newest} "
                        f"(revision {revision})",
                    )
                ]
            )
        if newest is None or epoch > newest:
            txn.set_epoch(resource, epoch)

    @staticmethod
    def _check_purge(txn: WriteTxn, n: int, targets: Sequence[Value]) -> None:
        seqs = [int(t) for t in targets]
        kinds = txn.kinds(seqs)
        purged = txn.purged()
        for target in seqs:
            kind = kinds.get(target)
            if kind is None:
                raise _error("unknown_seq", f"event {n}: there is no seq {target} to purge")
            if kind == "purge" or target in purged:
                raise _error("not_purgeable", f"event {n}: seq {target} is a purge or already purged")

    # ---------------------------------------------------------------- reading

    def events(self, since: int = 0, until: int | None = None, kinds: Iterable[str] | None = None) -> list[Event]:
        """Events with since < seq <= until, in order, optionally of some kinds only."""
        wanted = None if kinds is None else tuple(kinds)
        if wanted is not None and not set(wanted) <= set(KINDS):
            raise _error("unknown_kind", f"kinds must be among {', '.join(KINDS)}")
        return [decode_row(r) for r in self._rows(since, until, wanted)]

    def events_at(self, seqs: Iterable[int]) -> list[Event]:
        """The events with these seqs (purged ones too), in seq order: what a
        decision's proof leaves or a purge point at, without reading the log."""
        wanted = sorted({int(s) for s in seqs})
        return [decode_row(r) for r in self._rows_at(wanted)] if wanted else []

    def asserting(
        self,
        relation: str,
        args: Sequence[Value],
        revision: int | None = None,
        *,
        purged: AbstractSet[int] | None = None,
    ) -> list[Event]:
        """The fact events, not purged, that put `relation(args)` in the fold
        at `revision` (latest if None), in seq order; empty if it is not a fact.
        `purged`: the seqs purged at `revision`, from a caller that keeps
        them (else they are read: every purge event)."""
        rev = self.revision() if revision is None else revision
        rows = self._rows_of(relation, encode_args(args), rev)
        if not rows:
            return []
        if purged is None:
            purged = self.purged(rev)
        return [decode_row(r) for r in rows if int(r[0]) not in purged]

    def purged(self, revision: int | None = None) -> set[int]:
        """The seqs purged by purge events at or before `revision`."""
        rows = self._rows(0, revision, ("purge",))
        return {int(s) for r in rows for s in json.loads(r[3])}

    def facts(self, revision: int | None = None) -> Facts:
        """The fold: relation -> set of argument tuples at `revision` (latest if None)."""
        rev = self.revision() if revision is None else revision
        exclude = sorted(self.purged(rev))
        return {relation: set(map(tuple, json.loads(arrays))) for relation, arrays in self._fact_groups(rev, exclude)}

    def fact_digest(self, revision: int) -> str:
        """A sha256 naming the log's fact and purge events up to `revision`
        (what a model snapshot is checked against): the digest recorded by
        the batch that ended there or before, read in one lookup (see the
        module docstring). Inside a batch, the digest of its events up to
        `revision` after the one before it."""
        first, last, digest, before = self._digest_at(revision)
        if last <= revision:
            return digest
        return chain_digest(before, self._digest_lines(first, revision))

    def decisions(self, revision: int | None = None) -> list[Event]:
        """Decision events at `revision` (latest if None), minus purged ones."""
        purged = self.purged(revision)
        return [e for e in self.events(0, revision, ("decision",)) if e.seq not in purged]

    def decision_page(
        self,
        *,
        after: int = 0,
        limit: int | None = None,
        newest: bool = False,
        denied: bool = False,
        agent: str | None = None,
        request: str | None = None,
        since: str | None = None,
    ) -> list[Event]:
        """Live decision events, filtered and paged in the database (never all
        loaded): seq > `after`; only denied ones; of one `agent` or `request`
        id; logged at or after the wall-clock `since` (an `Event.time` text);
        the oldest `limit` of them in seq order, or with `newest` the newest
        `limit` (still returned in seq order)."""
        rows = self._decision_rows(after, limit, newest, denied, agent, request, since, sorted(self.purged()))
        return [decode_row(r) for r in rows]

    def count(self, kind: str) -> int:
        """How many events of `kind` the log holds (purged ones included)."""
        if kind not in KINDS:
            raise _error("unknown_kind", f"kinds must be among {', '.join(KINDS)}")
        return self._count(kind)

    @abstractmethod
    def _count(self, kind: str) -> int:
        """The number of events of `kind`."""

    @abstractmethod
    def _decision_rows(
        self,
        after: int,
        limit: int | None,
        newest: bool,
        denied: bool,
        agent: str | None,
        request: str | None,
        since: str | None,
        exclude: Sequence[int],
    ) -> list[Row]:
        """The rows `decision_page` returns."""

    def as_of(self, revision: int) -> StoreView:
        """A read-only view of the store as it was at `revision`."""
        if isinstance(revision, bool) or not isinstance(revision, int) or not 0 <= revision <= self.revision():
            raise _error("unknown_revision", f"revision {revision} is not in the log")
        return StoreView(self, revision)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"


class StoreView:
    """The store frozen at one revision: what was known then."""

    def __init__(self, store: Store, revision: int) -> None:
        self.store = store
        self._revision = revision

    def revision(self) -> int:
        return self._revision

    def facts(self) -> Facts:
        return self.store.facts(self._revision)

    def events(self, since: int = 0, kinds: Iterable[str] | None = None) -> list[Event]:
        return self.store.events(since, self._revision, kinds)

    def decisions(self) -> list[Event]:
        return self.store.decisions(self._revision)

"""Past tool calls decided again by a policy, read only.

    for row in audit(gate, subjects, against=old_gate):
        print(row.subject.id, row.answer, row.flip)

Each subject (a transcript's tool call, or a decision ordinance logged) is
decided by `Gate.decide` at its own time, over the store as it was then
(`Timeline`: the newest revision whose facts were written by that time),
so grants, stops and leases count as they stood. Nothing is logged: the
store is only read. Calls come sorted by time, so the store's revision only
moves forward and each revision's warm model is built once; every decision
is an overlay of the request on it (the gate's warm path).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from ..explain import ask_codes, logged_asked
from ..facts import FACT_KINDS, Store
from ..gate import Decision, Gate, Request
from ..hosts.flow import verdict_of
from .transcripts import ToolCall, instant

__all__ = ["Subject", "Audited", "Timeline", "audit", "answer_of", "subjects_of_calls", "subjects_of_log", "ANSWERS"]

# the hook's answers (hosts.flow.verdict_of): a permitted call defers to the
# host's own permission flow unless the policy auto-allows it
ALLOW, DEFER, ASK, DENY = "allow", "defer", "ask", "deny"
ANSWERS = (ALLOW, DEFER, ASK, DENY)
PERMITTED = (ALLOW, DEFER)
ToRequest = Callable[[Mapping[str, Any]], Request]  # a hook payload -> its Request (the host's mapping)


@dataclass(frozen=True, slots=True)
class Subject:
    """What is audited: an `id`, the `tool`, its `session`, the request
    and its `now`, what `happened` to it, where it was read (`source`),
    and for a logged decision the store revision it was made at."""

    id: str
    tool: str
    session: str
    request: Request
    now: int
    happened: str
    source: str
    revision: int | None = None  # a logged decision's own store revision (else: as of `now`)


@dataclass(frozen=True, slots=True)
class Audited:
    """A subject, the policy's decision and answer (ANSWERS), and
    the earlier policy's (`was`, `was_answer`) when compared."""

    subject: Subject
    decision: Decision
    answer: str
    was: Decision | None = None
    was_answer: str | None = None

    @property
    def flip(self) -> str | None:
        """`newly-blocked` (now deny, was not), `newly-allowed` (now permitted,
        allow or defer, was not), `changed` (otherwise: to or from ask, or
        between allow and defer), None if the same or not compared."""
        if self.was_answer is None or self.was_answer == self.answer:
            return None
        if self.answer == DENY:
            return "newly-blocked"
        if self.answer in PERMITTED and self.was_answer not in PERMITTED:
            return "newly-allowed"
        return "changed"


def answer_of(d: Decision, asks: frozenset[str], asked: Sequence[str] | None = None) -> str:
    """What the hook answers (ANSWERS): deny (forbidden, or an error), ask (a
    flag whose code is in `asks`; for a logged decision, its `asked`), allow
    (the policy auto-allows), else defer."""
    codes = sorted({f.code for f in d.flags if f.code in asks}) if asked is None else list(asked)
    return verdict_of(d, codes).kind


class Timeline:
    """The store's revision as of a time: the newest fact-changing event
    written at or before it (0 before the first)."""

    def __init__(self, store: Store) -> None:
        times: list[int] = []
        seqs: list[int] = []
        for e in store.events(0, None, (*FACT_KINDS, "purge")):
            at = instant(e.time)
            if at is not None:
                times.append(max(at, times[-1]) if times else at)
                seqs.append(e.seq)
        self.times, self.seqs = times, seqs

    def revision(self, at: int) -> int:
        i = bisect_right(self.times, at)
        return self.seqs[i - 1] if i else 0

    def holding(self, revision: int) -> int:
        """The newest fact-changing revision <= `revision` (the same facts: one warm model serves both)."""
        i = bisect_right(self.seqs, revision)
        return self.seqs[i - 1] if i else 0


def subjects_of_calls(calls: Iterable[ToolCall], to_request: ToRequest, problems: list[str]) -> Iterator[Subject]:
    """Transcript calls as subjects; one that has no time or no request is a problem, skipped."""
    for c in calls:
        where = f"{c.file}:{c.line}"
        if c.time is None:
            problems.append(f"{where}: tool call `{c.id}` has no timestamp; skipped")
            continue
        try:
            request = to_request(c.payload())
        except Exception as exc:  # a call the mapping cannot read is reported, never fatal
            problems.append(f"{where}: tool call `{c.id}`: {str(exc).splitlines()[0] if str(exc) else exc}")
            continue
        yield Subject(c.id, c.tool, c.session, request, c.time, c.happened, where)


def subjects_of_log(store: Store, declared: Mapping[str, int]) -> Iterator[Subject]:
    """The decisions ordinance logged, as subjects at their own revision (what
    happened: the logged answer, an ask by its `asked`); request attributes the auditing policy does
    not declare are dropped, as the hook fills only what a policy declares."""
    for e in store.decisions():
        if e.payload is None:
            continue
        d = Decision.from_payload(e.payload, e.seq)
        r = replace(d.request, attributes=tuple(a for a in d.request.attributes if a[0] in declared))
        session = next((str(a[0]) for rel, a in r.attributes if rel == "request_session" and a), "log")
        happened = f"logged-{answer_of(d, frozenset(), logged_asked(e.payload))}"
        yield Subject(r.id, r.kind, session, r, d.now, happened, f"decision {e.seq}", d.revision)


def audit(
    gate: Gate,
    subjects: Iterable[Subject],
    *,
    timeline: Timeline | None = None,
    against: Gate | None = None,
    tick: Callable[[], None] | None = None,
) -> Iterator[Audited]:
    """Each subject decided by `gate` (and `against`, the earlier policy)
    over the store at its time; streamed. Nothing is written."""
    line = Timeline(gate.store) if timeline is None else timeline
    asks = ask_codes(gate.policy)
    old_asks = ask_codes(against.policy) if against is not None else frozenset()
    for s in subjects:
        rev = line.revision(s.now) if s.revision is None else line.holding(s.revision)
        d = gate.decide(s.request, s.now, revision=rev)
        was = against.decide(s.request, s.now, revision=rev) if against is not None else None
        yield Audited(s, d, answer_of(d, asks), was, None if was is None else answer_of(was, old_asks))
        if tick is not None:
            tick()

"""An event history: what the fuzzer replays, shrinks and prints.

A history starts at `base` (the first `now`) and is a list of steps: a fact
appended to the store (its event kind follows from the relation: assert,
supersede, correct, tombstone, receipt, observation), time advancing, or a
request asked at the gate. Time only moves forward; the store only grows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Union

from ..gate.request import Request
from ..facts.events import kind_of
from ..values import Value, escape, format_duration, format_instant, format_value

__all__ = ["Fact", "Advance", "Ask", "Entry", "History", "show_fact"]

Types = Mapping[str, tuple[str, ...] | None]


@dataclass(frozen=True, slots=True)
class Fact:
    """`relation(args)`, appended to the store as one event."""

    relation: str
    args: tuple[Value, ...]

    @property
    def kind(self) -> str:
        return kind_of(self.relation)


@dataclass(frozen=True, slots=True)
class Advance:
    """Time moves forward by `seconds`."""

    seconds: int


@dataclass(frozen=True, slots=True)
class Ask:
    """A request checked at the gate at the current `now`."""

    request: Request


Entry = Union[Fact, Advance, Ask]


def show_fact(relation: str, args: tuple[Any, ...], types: Types) -> str:
    """`relation(args)` as the rule language writes it, by declared types."""
    declared = types.get(relation) or (None,) * len(args)
    shown = ", ".join(format_value(v, t) for v, t in zip(args, declared))
    return f"{escape(relation)}({shown})"


@dataclass(frozen=True, slots=True)
class History:
    base: int
    steps: tuple[Entry, ...] = ()

    def __len__(self) -> int:
        return len(self.steps)

    def nows(self) -> list[int]:
        """The `now` in force at each step."""
        out, now = [], self.base
        for step in self.steps:
            out.append(now)
            if isinstance(step, Advance):
                now += step.seconds
        return out

    @property
    def end(self) -> int:
        return self.base + sum(s.seconds for s in self.steps if isinstance(s, Advance))

    def lines(self, types: Types) -> list[str]:
        """One numbered line per step, readable on its own."""
        out = []
        for n, (step, now) in enumerate(zip(self.steps, self.nows()), 1):
            if isinstance(step, Fact):
                out.append(f"{n:>3}. {step.kind:<10} {show_fact(step.relation, step.args, types)}")
            elif isinstance(step, Advance):
                after = format_instant(now + step.seconds)
                out.append(f"{n:>3}. {'advance':<10} {format_duration(step.seconds)} (now {after})")
            else:
                facts = step.request.facts()
                shown = ", ".join(show_fact(rel, t, types) for rel in facts for t in sorted(facts[rel]))
                out.append(f"{n:>3}. {'request':<10} {shown}")
        return out

    def render(self, types: Types) -> str:
        head = f"history ({len(self.steps)} events, starting at now {format_instant(self.base)}):"
        return "\n".join([head] + (self.lines(types) or ["    (no events)"]))

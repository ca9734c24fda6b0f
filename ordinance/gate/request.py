"""The request: one action asking to pass the gate, as overlay facts.

A request becomes facts of the `request*` relations declared by the stdlib
(see stdlib/schema.rules); they live only in the gate's overlay, never in
the store.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ..diagnostics import GateError
from ..values import value_problem

__all__ = ["Request"]

Facts = dict[str, set[tuple[str | int, ...]]]


# request-side relation -> the Request field it fills (after the action id)
_FIELDS = {
    "request_scope": "scope",
    "request_uses": "uses",
    "request_needs": "needs",
    "request_route": "routes",
    "request_requires": "requires",
    "request_irreversible": "irreversible",
    "request_key": "key",
}


def _strings(value: Any, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not all(isinstance(v, str) for v in value):
        raise GateError(f"request field `{name}` must be a list of strings")
    return tuple(value)


@dataclass(frozen=True, slots=True)
class Request:
    """An action: `agent` wants to do `kind` to `target` under `epoch`.

    `scope` is the authority scope (defaults to the target); `uses` the claims
    it relies on; `needs` (subject, attribute, value) triples that must be
    currently known; `routes` the routes it takes (in its scope); `requires`
    the past actions it builds on; `key` its idempotency key.
    """

    id: str
    kind: str
    target: str
    agent: str
    epoch: int
    scope: str | None = None
    uses: tuple[str, ...] = ()
    needs: tuple[tuple[str, str, str], ...] = ()
    routes: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    irreversible: bool = False
    key: str | None = None

    def __post_init__(self) -> None:
        for name in ("id", "kind", "target", "agent"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise GateError(f"request field `{name}` must be a non-empty string")
        if isinstance(self.epoch, bool) or not isinstance(self.epoch, int):
            raise GateError("request field `epoch` must be an integer")
        for need in self.needs:
            if len(need) != 3 or not all(isinstance(v, str) for v in need):
                raise GateError("request field `needs` holds (subject, attribute, value) strings")
        for name, value in self._values():  # the values check every edge applies
            problem = value_problem(value)
            if problem is not None:
                raise GateError(f"request field `{name}` {problem[1]}", code=problem[0])

    def _values(self) -> Iterable[tuple[str, Any]]:
        for name in ("id", "kind", "target", "agent", "epoch", "scope", "key"):
            if getattr(self, name) is not None:
                yield name, getattr(self, name)
        for name in ("uses", "routes", "requires"):
            for value in getattr(self, name):
                yield name, value
        for need in self.needs:
            for value in need:
                yield "needs", value

    @property
    def authority_scope(self) -> str:
        return self.scope if self.scope is not None else self.target

    def facts(self) -> Facts:
        """The overlay facts of this request."""
        a, s = self.id, self.authority_scope
        facts: Facts = {
            "request": {(a, self.kind, self.target, self.agent, self.epoch)},
            "request_scope": {(a, s)},
            "request_uses": {(a, c) for c in self.uses},
            "request_needs": {(a, *n) for n in self.needs},
            "request_route": {(a, r, s) for r in self.routes},
            "request_requires": {(a, p) for p in self.requires},
            "request_irreversible": {(a,)} if self.irreversible else set(),
            "request_key": {(a, self.key)} if self.key is not None else set(),
        }
        return {k: v for k, v in facts.items() if v}

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "target": self.target,
            "agent": self.agent,
            "epoch": self.epoch,
            "scope": self.authority_scope,
            "uses": list(self.uses),
            "needs": [list(n) for n in self.needs],
            "routes": list(self.routes),
            "requires": list(self.requires),
            "irreversible": self.irreversible,
            "key": self.key,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Request:
        """A request from its JSON object (unknown fields are an error)."""
        known = {"id", "kind", "target", "agent", "epoch", "scope", "uses", "needs",
                 "routes", "requires", "irreversible", "key"}
        extra = sorted(set(data) - known)
        if extra:
            raise GateError(f"unknown request field `{extra[0]}`")
        needs = data.get("needs") or ()
        if isinstance(needs, str) or not all(not isinstance(n, str) for n in needs):
            raise GateError("request field `needs` holds (subject, attribute, value) lists")
        try:
            return cls(
                id=data["id"],
                kind=data["kind"],
                target=data["target"],
                agent=data["agent"],
                epoch=data["epoch"],
                scope=data.get("scope"),
                uses=_strings(data.get("uses"), "uses"),
                needs=tuple(tuple(n) for n in needs),  # type: ignore[misc]
                routes=_strings(data.get("routes"), "routes"),
                requires=_strings(data.get("requires"), "requires"),
                irreversible=bool(data.get("irreversible", False)),
                key=data.get("key"),
            )
        except KeyError as missing:
            raise GateError(f"request field `{missing.args[0]}` is missing") from None

    @classmethod
    def from_facts(cls, given: Mapping[str, Iterable[tuple[Any, ...]]] | Iterable[tuple[str, tuple[Any, ...]]]
                   ) -> Request:
        """The Request whose overlay facts (`facts()`) are exactly `given`
        (relation -> tuples, or (relation, tuple) pairs): one
        `request(A, Kind, Target, Agent, Epoch)` plus `request_*` facts of A."""
        facts = [(r, t) for r, ts in given.items() for t in ts] if isinstance(given, Mapping) else list(given)
        heads = [args for rel, args in facts if rel == "request"]
        if len(heads) != 1 or len(heads[0]) != 5:
            raise GateError("give exactly one `request(A, Kind, Target, Agent, Epoch)` fact")
        a, kind, target, agent, epoch = heads[0]
        fields: dict[str, Any] = {"id": a, "kind": kind, "target": target, "agent": agent, "epoch": epoch}
        for rel, args in facts:
            name = _FIELDS.get(rel)
            if rel == "request":
                continue
            if name is None:
                raise GateError(f"`{rel}` is not a request-side relation; store it with `ordinance assert`")
            if not args or args[0] != a:
                raise GateError(f"`{rel}` must name the request `{a}` as its first argument")
            if name == "irreversible":
                fields[name] = True
            elif name in ("scope", "key"):
                fields[name] = args[1]
            elif name == "needs":
                fields.setdefault(name, []).append(list(args[1:]))
            else:
                fields.setdefault(name, []).append(args[1])
        request = cls.from_json(fields)
        given = {(rel, tuple(args)) for rel, args in facts}
        made = {(rel, t) for rel, ts in request.facts().items() for t in ts}
        extra = sorted(given - made, key=str)
        if extra:
            raise GateError(f"`{extra[0][0]}` does not fit the request (one scope; routes in that scope)")
        return request

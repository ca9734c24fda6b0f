"""The request: one action asking to pass the gate, as overlay facts.

Request-side relations. A relation is request-side when it is named
`request` or `request_<something>`, its first argument is the action, and
no rule of the policy derives it (the stdlib's derived `request_in` is not
request-side). Request-side facts live only in the gate's overlay, never in
the store; every way of asking (`check`, `--given`, test blocks, the server,
the hooks, MCP) feeds them the same way. A policy declares its own like any
relation:

    .decl request_force(a: symbol)          // the user's own request attribute
    forbid(A, "force", T) :- request(A, _, T, _, _), request_force(A).

The stdlib's request relations (stdlib/schema.rules) have typed fields on
`Request`; the policy's own travel in `attributes`. Defaults, the same at the
gate and in test blocks (`with_defaults`): `request_scope(A, Target)` and
`request_lease(A, Epoch)` unless given; `request_at(A, Place)` for the
target and each directory above it, always worked out, never given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ..diagnostics import GateError
from ..rules.checked import REQUEST_PREFIX, is_request_side
from ..values import Facts, Value, value_problem

__all__ = ["Request", "REQUEST_RELATIONS", "request_relations", "is_request_side", "with_defaults", "under", "places"]

# the stdlib's request-side relation -> the Request field it fills (after
# the action id): the one list of the request relations the gate knows by name
_FIELDS = {
    "request_scope": "scope",
    "request_lease": "lease_epoch",
    "request_uses": "uses",
    "request_needs": "needs",
    "request_route": "routes",
    "request_requires": "requires",
    "request_irreversible": "irreversible",
    "request_key": "key",
}
# `request_at(A, Place)`: the target and each directory above a path target,
# worked out from the target (never given by a caller), so that scope
# follows the target (one relation of places, so the policy's scope rules
# join one fact per place and no stratum of their own: a decision's cost)
AT = "request_at"
REQUEST_RELATIONS = frozenset({"request", *_FIELDS, AT})
MAX_UNDER = 64  # directories worked out above one target (a deeper path is held by its top 64)


def under(target: str) -> tuple[str, ...]:
    """The directories above `target`, nearest last: `/p/src/x` -> `/`,
    `/p`, `/p/src`; `repo/w1` -> `repo`. None for a target with a `.` or
    `..` step or an empty one (`//`): it names no place under a scope."""
    parts = target.split("/")
    if len(parts) < 2 or any(p in (".", "..") for p in parts) or "" in parts[1:-1]:
        return ()
    return tuple("/".join(parts[:k]) or "/" for k in range(1, min(len(parts), MAX_UNDER + 1)))


def places(target: str) -> tuple[str, ...]:
    """Where `target` lies: itself, then the directories above it (`under`)."""
    return (target, *under(target))


def request_relations(program: Any) -> dict[str, int]:
    """The request-side relations `program` declares: name -> arity."""
    return {n: r.arity for n, r in sorted(program.relations.items()) if is_request_side(n, r)}


def with_defaults(facts: Mapping[str, Iterable[tuple[Any, ...]]]) -> dict[str, set[tuple[Any, ...]]]:
    """`facts` plus the defaults of each `request(A, Kind, Target, Agent,
    Epoch)` in it: `request_scope(A, Target)` and `request_lease(A, Epoch)`
    unless A has one, and `request_at(A, Place)` for the target and each
    directory above it. Used by the gate (through Request) and test blocks."""
    out = {rel: set(ts) for rel, ts in facts.items()}
    for a, _kind, target, _agent, epoch in out.get("request", ()):
        for rel, value in (("request_scope", target), ("request_lease", epoch)):
            if not any(t and t[0] == a for t in out.get(rel, ())):
                out.setdefault(rel, set()).add((a, value))
        if isinstance(target, str):
            out.setdefault(AT, set()).update((a, p) for p in places(target))
    return {rel: ts for rel, ts in out.items() if ts}


def _strings(value: Any, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise GateError(f"request field `{name}` must be a list of strings", code="bad_field")
    return tuple(value)


def _value(v: Any) -> Value:
    if isinstance(v, bool) or not isinstance(v, (str, int)):
        raise GateError("request attribute arguments are strings or integers", code="bad_field")
    return v


def _attributes(data: Any) -> tuple[tuple[str, tuple[Value, ...]], ...]:
    """{relation: [[args after A], ...]} -> sorted (relation, args) pairs."""
    if data is None:
        return ()
    if not isinstance(data, Mapping):
        raise GateError("request field `attributes` maps a relation to lists of arguments", code="bad_field")
    out: set[tuple[str, tuple[Value, ...]]] = set()
    for rel, rows in data.items():
        if not isinstance(rows, (list, tuple)) or not all(isinstance(r, (list, tuple)) for r in rows):
            raise GateError(f"request attribute `{rel}` must be a list of argument lists", code="bad_field")
        out.update((str(rel), tuple(_value(v) for v in r)) for r in rows)
    return tuple(sorted(out, key=repr))


@dataclass(frozen=True, slots=True)
class Request:
    """An action: `agent` wants to do `kind` to `target` under `epoch`.

    `epoch` is the epoch of its grant; `lease_epoch` the epoch of the lease
    it works under (default `epoch`), so a takeover at lease epoch 2 under a
    repo-wide grant at epoch 1 is one request. `scope` is the authority
    scope (default the target); `uses` the claims it relies on; `needs`
    (subject, attribute, value) triples that must be currently known;
    `routes` the routes it takes (in its scope); `requires` the past actions
    it builds on; `key` its idempotency key; `attributes` facts of the
    policy's own request-side relations, as (relation, arguments after A).
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
    lease_epoch: int | None = None
    attributes: tuple[tuple[str, tuple[Value, ...]], ...] = ()

    def __post_init__(self) -> None:
        for name in ("id", "kind", "target", "agent"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise GateError(f"request field `{name}` must be a non-empty string", code="bad_field")
        for name in ("scope", "key"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise GateError(f"request field `{name}` must be a string", code="bad_field")
        for name in ("epoch", "lease_epoch"):
            value = getattr(self, name)
            if (value is not None or name == "epoch") and (isinstance(value, bool) or not isinstance(value, int)):
                raise GateError(f"request field `{name}` must be an integer", code="bad_field")
        for need in self.needs:
            if len(need) != 3 or not all(isinstance(v, str) for v in need):
                raise GateError("request field `needs` holds (subject, attribute, value) strings", code="bad_field")
        object.__setattr__(self, "attributes", tuple(sorted(set(self.attributes), key=repr)))
        for rel, _args in self.attributes:
            if not is_request_side(rel) or rel in REQUEST_RELATIONS:
                raise GateError(
                    f"`{rel}` is not a request attribute: its name must start with `{REQUEST_PREFIX}`"
                    " and it must not be one of the request's own fields"
                )
        for name, value in self._values():  # the values check every edge applies
            problem = value_problem(value)
            if problem is not None:
                raise GateError(f"request field `{name}` {problem[1]}", code=problem[0])

    def _values(self) -> Iterable[tuple[str, Any]]:
        for name in ("id", "kind", "target", "agent", "epoch", "scope", "key", "lease_epoch"):
            if getattr(self, name) is not None:
                yield name, getattr(self, name)
        for name in ("uses", "routes", "requires"):
            for value in getattr(self, name):
                yield name, value
        for need in self.needs:
            for value in need:
                yield "needs", value
        for rel, args in self.attributes:
            for value in args:
                yield rel, value

    @property
    def authority_scope(self) -> str:
        return self.scope if self.scope is not None else self.target

    @property
    def lease(self) -> int:
        """The lease epoch: `lease_epoch`, else `epoch`."""
        return self.epoch if self.lease_epoch is None else self.lease_epoch

    def facts(self) -> Facts:
        """The overlay facts of this request (each relation with some fact;
        built on every decision, so only the fields it has)."""
        a, s = self.id, self.authority_scope
        facts: Facts = {
            "request": {(a, self.kind, self.target, self.agent, self.epoch)},
            "request_scope": {(a, s)},
            "request_lease": {(a, self.lease)},
            AT: {(a, p) for p in places(self.target)},
        }
        if self.uses:
            facts["request_uses"] = {(a, c) for c in self.uses}
        if self.needs:
            facts["request_needs"] = {(a, *n) for n in self.needs}
        if self.routes:
            facts["request_route"] = {(a, r, s) for r in self.routes}
        if self.requires:
            facts["request_requires"] = {(a, p) for p in self.requires}
        if self.irreversible:
            facts["request_irreversible"] = {(a,)}
        if self.key is not None:
            facts["request_key"] = {(a, self.key)}
        for rel, args in self.attributes:
            facts.setdefault(rel, set()).add((a, *args))
        return facts

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
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
        if self.lease_epoch is not None:
            out["lease_epoch"] = self.lease_epoch
        if self.attributes:
            attrs: dict[str, list[list[Value]]] = {}
            for rel, args in self.attributes:
                attrs.setdefault(rel, []).append(list(args))
            out["attributes"] = attrs
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Request:
        """A request from its JSON object (unknown fields are an error)."""
        if not isinstance(data, Mapping):
            raise GateError("a request is a JSON object")
        known = {
            "id",
            "kind",
            "target",
            "agent",
            "epoch",
            "scope",
            "uses",
            "needs",
            "routes",
            "requires",
            "irreversible",
            "key",
            "lease_epoch",
            "attributes",
        }
        extra = sorted(set(data) - known)
        if extra:
            raise GateError(f"unknown request field `{extra[0]}`")
        needs = data.get("needs") or ()
        if not isinstance(needs, (list, tuple)) or not all(isinstance(n, (list, tuple)) for n in needs):
            raise GateError("request field `needs` holds (subject, attribute, value) lists", code="bad_field")
        irreversible = data.get("irreversible", False)
        if not isinstance(irreversible, bool):
            raise GateError("request field `irreversible` must be true or false", code="bad_field")
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
                irreversible=irreversible,
                key=data.get("key"),
                lease_epoch=data.get("lease_epoch"),
                attributes=_attributes(data.get("attributes")),
            )
        except KeyError as missing:
            raise GateError(f"request field `{missing.args[0]}` is missing") from None

    @classmethod
    def from_facts(
        cls, given: Mapping[str, Iterable[tuple[Any, ...]]] | Iterable[tuple[str, tuple[Any, ...]]]
    ) -> Request:
        """The Request whose overlay facts (`facts()`) are exactly `given`
        plus the defaults (relation -> tuples, or (relation, tuple) pairs):
        one `request(A, Kind, Target, Agent, Epoch)` plus request-side facts
        of A; anything not request-side belongs in the store."""
        facts = [(r, t) for r, ts in given.items() for t in ts] if isinstance(given, Mapping) else list(given)
        heads = [args for rel, args in facts if rel == "request"]
        if len(heads) != 1 or len(heads[0]) != 5:
            raise GateError("give exactly one `request(A, Kind, Target, Agent, Epoch)` fact")
        a, kind, target, agent, epoch = heads[0]
        fields: dict[str, Any] = {"id": a, "kind": kind, "target": target, "agent": agent, "epoch": epoch}
        attributes: dict[str, list[list[Any]]] = {}
        for rel, args in facts:
            if rel in ("request", AT):  # (the places are worked out: they must be the target's, checked below)
                continue
            if not is_request_side(rel):
                raise GateError(f"`{rel}` is not a request-side relation; store it with `ordinance assert`")
            if not args or args[0] != a:
                raise GateError(f"`{rel}` must name the request `{a}` as its first argument")
            name = _FIELDS.get(rel)
            if name is None:
                attributes.setdefault(rel, []).append(list(args[1:]))
            elif name == "irreversible":
                fields[name] = True
            elif name in ("scope", "key", "lease_epoch"):
                fields[name] = args[1]
            elif name == "needs":
                fields.setdefault(name, []).append(list(args[1:]))
            else:
                fields.setdefault(name, []).append(args[1])
        fields["attributes"] = attributes
        if fields.get("lease_epoch") == epoch:  # the default, written out
            del fields["lease_epoch"]
        request = cls.from_json(fields)
        given_set = {(rel, tuple(args)) for rel, args in facts}
        made = {(rel, t) for rel, ts in request.facts().items() for t in ts}
        extra = sorted(given_set - made, key=str)
        if extra:
            raise GateError(f"`{extra[0][0]}` does not fit the request (one scope, one lease; routes in that scope)")
        return request

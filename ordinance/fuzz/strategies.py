"""Hypothesis strategies for event histories, derived from the policy.

The input relations (declared, with no rule or fact in the policy) become
facts; the request relations become gate requests. Each argument draws from
a small pool so that ids collide, windows overlap and epochs race: pools
come from `.hint` lines first, then from built-in knowledge of the continuity
relations (e.g. `claim_source` kinds), then from the parameter's name
(`agent`, `scope`, `c`, ...), then from its declared type. Instants lie a few
hours around `BASE`; `to`/`expires` may also be `forever`. A step may borrow
values from an earlier fact (see "borrowing"), so that a request meets a grant
and an observation its receipt. Only the input relations an invariant depends
on are generated for it (`depends_on`), and, given the invariant's body,
aimed at it (`aimed`): the positions a body variable joins share one pool
(a request's path meets a lease's work), the relations the body reads
itself are drawn more often than those a rule reads for it, and more
often than the rest of what it depends on; a request carries the
request-side attributes the policy declares (`request_tool`,
`request_path`, ... of stdlib tools.rules), those the body reads always.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterable

from hypothesis import strategies as st

from ..gate.request import REQUEST_RELATIONS, Request, is_request_side
from ..rules.ast import Atom, Const, Literal, Negation, Var
from ..rules.checked import CheckedProgram
from ..rules.depends import depends_on, uses_of
from ..values import FOREVER, parse_instant
from .history import Advance, Ask, Fact, History, Entry

__all__ = [
    "BASE",
    "HOUR",
    "REQUEST_RELATIONS",
    "pools",
    "policy_constants",
    "input_relations",
    "uses_of",
    "depends_on",
    "facts",
    "requests",
    "steps",
    "histories",
    "aimed",
    "joined_pools",
    "distances",
    "attribute_relations",
    "WEIGHTS",
]

BASE = parse_instant("2026-08-14T12:00:00Z")
HOUR = 3600
TIMES = tuple(BASE + h * HOUR for h in (-2, -1, 0, 1, 2))
ENDS = (BASE, BASE + HOUR, BASE + 2 * HOUR, FOREVER)
DURATIONS = (30 * 60, HOUR, 24 * HOUR)
NUMBERS = (1, 2, 3)
ADVANCES = (HOUR, 2 * HOUR)
_ADVANCING = (None, None, None) + ADVANCES  # after a step, time moves on 2 times in 5
MAX_STEPS = 12

# what the gate adds for one request (see Request.facts)


AGENTS = ("alice", "bob", "carol")
CLAIMS = ("c1", "c2", "c3")
ACTIONS = ("x1", "x2")
_NAMED: dict[str, tuple[Any, ...]] = {
    "c": CLAIMS,
    "c1": CLAIMS,
    "c2": CLAIMS,
    "new": CLAIMS,
    "old": CLAIMS,
    "claim": CLAIMS,
    "subject": ("s1", "s2"),
    "attribute": ("state", "owner"),
    "value": ("open", "merged"),
    "v1": ("open", "merged"),
    "v2": ("open", "merged"),
    "source": ("alice", "bob", "gh"),
    "agent": AGENTS,
    "by": AGENTS,
    "observer": AGENTS,
    "other": AGENTS,
    "scope": ("hub", "deploy"),
    "work": ("job", "deploy"),
    "target": ("job", "deploy", "hub"),
    "key": ("k1", "k2"),
    "t": ("t1", "t2"),
    "route": ("r1", "r2"),
    "action": ACTIONS,
    "prior": ACTIONS,
    "a": ("a1", "a2"),
    "result": ("ok", "mismatch"),
    "domain": ("host-a", "host-b"),
    "e": ("e1", "e2"),
    "outcome": ("success", "failure", "partial"),
    "level": ("verified", "observed", "reported", "hearsay", "speculation"),
    "kind": ("k1", "k2"),
}
# built-in relations whose argument pools are not named by the parameter
_BUILTIN: dict[tuple[str, int], tuple[Any, ...]] = {
    ("claim_source", 2): ("observed", "reported", "hearsay", "inferred", "speculation"),
    ("claim_confidence", 1): ("high", "low"),
    ("receipt", 1): ("intent", "outcome"),
    ("request", 1): ("write", "deploy"),
    ("episode_evidence", 1): ("verified", "observed", "reported", "self-report", "hearsay", "speculation"),
}
_GENERIC = ("u", "v", "w")  # any other symbol: one shared pool, so joins meet
_ENDS = {"to", "expires", "until", "end"}


def _pool(relation: str, index: int, name: str, type_: str) -> tuple[Any, ...]:
    if (relation, index) in _BUILTIN:
        return _BUILTIN[(relation, index)]
    if type_ == "time":
        return ENDS if name.lower() in _ENDS else TIMES
    if type_ == "duration":
        return DURATIONS
    if type_ == "number":
        return NUMBERS
    return _NAMED.get(name.lower(), _GENERIC)


Pools = dict[str, tuple[tuple[Any, ...], ...]]


def pools(program: CheckedProgram) -> Pools:
    """Relation -> the value pool of each argument (hints win)."""
    out: dict[str, tuple[tuple[Any, ...], ...]] = {}
    for name, rel in program.relations.items():
        params = rel.decl.params if rel.decl is not None else ()
        names = [p.name for p in params] or [f"x{i}" for i in range(rel.arity)]
        types = rel.types or ("symbol",) * rel.arity
        out[name] = tuple(_pool(name, i, n, t) for i, (n, t) in enumerate(zip(names, types)))
    for (name, i), values in policy_constants(program).items():  # what the rules test for is drawn too
        if name in out and i < len(out[name]):
            out[name] = out[name][:i] + (tuple(dict.fromkeys(out[name][i] + values)),) + out[name][i + 1 :]
    for hint in program.hints:
        if hint.relation not in out:
            continue
        current = list(out[hint.relation])
        for i, values in enumerate(hint.values[: len(current)]):
            if values:
                current[i] = tuple(c.value for c in values)
        out[hint.relation] = tuple(current)
    return out


def policy_constants(program: CheckedProgram) -> dict[tuple[str, int], tuple[Any, ...]]:
    """(relation, argument index) -> the constants the policy's rules (and
    invariants, compiled to rules) compare that argument with, in order: a
    user's `request(_, "git-push-force", ...)` gets requests of that kind."""
    found: dict[tuple[str, int], dict[Any, None]] = {}
    for rule in program.rules:
        for lit in rule.body:
            atom = lit.atom if isinstance(lit, Negation) else lit
            if not isinstance(atom, Atom):
                continue
            for i, arg in enumerate(atom.args):
                if isinstance(arg, Const):
                    found.setdefault((atom.relation, i), {})[arg.value] = None
    return {key: tuple(values) for key, values in found.items()}


WEIGHTS = (6, 3)  # how often a relation the body reads (then one a rule reads for it) is drawn, to 1 for the rest


def joined_pools(pool: Pools, body: Iterable[Literal]) -> Pools:
    """`pool` with the positions each body variable joins sharing one pool
    (the union of theirs), so generated facts meet where the body joins."""
    positions: dict[str, list[tuple[str, int]]] = {}
    for lit in body:
        atom = lit.atom if isinstance(lit, Negation) else lit
        if isinstance(atom, Atom) and atom.relation in pool:
            for i, arg in enumerate(atom.args):
                if isinstance(arg, Var) and arg.name != "_" and i < len(pool[atom.relation]):
                    positions.setdefault(arg.name, []).append((atom.relation, i))
    out = {rel: list(p) for rel, p in pool.items()}
    for places in positions.values():
        if len(places) < 2:
            continue
        union = tuple(dict.fromkeys(v for rel, i in places for v in pool[rel][i]))
        kinds = {type(v) for v in union}
        if len(kinds) > 1:  # positions of different types: leave them apart
            continue
        for rel, i in places:
            out[rel][i] = union
    return {rel: tuple(p) for rel, p in out.items()}


def distances(program: CheckedProgram, body: Iterable[Literal]) -> dict[str, int]:
    """Relation -> how many rules away from the body it is read (0: the body reads it)."""
    found: dict[str, int] = {}
    layer = {use[0] for use in uses_of(body)}
    depth = 0
    while layer:
        for rel in layer:
            found.setdefault(rel, depth)
        nxt: set[str] = set()
        for rel in layer:
            for rid in program.rules_for(rel):
                nxt.update(u[0] for u in uses_of(program.rules[rid].body) if u[0] not in found)
        layer, depth = nxt, depth + 1
    return found


def _weight(distance: int | None) -> int:
    return WEIGHTS[distance] if distance is not None and distance < len(WEIGHTS) else 1


def attribute_relations(program: CheckedProgram, relevant: set[str] | None) -> tuple[str, ...]:
    """The request-side relations of the policy's own (not `request` and its
    built-in fields, not derived) a request carries: those relevant."""
    heads = {r.head.relation for r in program.rules}
    return tuple(
        sorted(
            name
            for name, rel in program.relations.items()
            if is_request_side(name, rel)
            and name not in REQUEST_RELATIONS
            and name not in heads
            and rel.arity >= 2
            and (relevant is None or name in relevant)
        )
    )


def input_relations(program: CheckedProgram, gated: bool) -> tuple[str, ...]:
    """Relations the store feeds: no rule and no fact for them in the policy
    (and, when requests go through the gate, not a request relation; not a
    relation with a record or ADT argument, which the store never holds)."""
    heads = {r.head.relation for r in program.rules}
    return tuple(
        sorted(
            name
            for name, rel in program.relations.items()
            if name not in heads
            and not (gated and is_request_side(name))
            and not any(t in program.structures for t in rel.types or ())
        )
    )


# ---------------------------------------------------------------- strategies


def facts(relations: Iterable[str], pool: Pools, weights: dict[str, int] | None = None) -> st.SearchStrategy[Fact]:
    """One fact of one of `relations`, every argument from its pool; a
    relation of weight w is drawn w times as often (the heaviest first, so
    shrinking goes toward them)."""

    def of(rel: str) -> st.SearchStrategy[Fact]:
        return st.tuples(*(st.sampled_from(p) for p in pool[rel])).map(lambda args: Fact(rel, args))

    ordered = sorted(relations, key=lambda r: (-(weights or {}).get(r, 1), r))
    if not ordered:
        return st.nothing()
    drawn = [rel for rel in ordered for _ in range((weights or {}).get(rel, 1))]
    strategies = {rel: of(rel) for rel in ordered}
    return st.sampled_from(drawn).flatmap(lambda rel: strategies[rel])


def requests(
    used: set[str], pool: Pools, attributes: tuple[str, ...] = (), read: frozenset[str] = frozenset()
) -> st.SearchStrategy[Request]:
    """A request; only the request relations in `used` get values (beyond
    the `request` fields and the authority scope); it carries up to two
    facts of each of `attributes` (at least one of those the body reads)."""

    def attribute(rel: str) -> st.SearchStrategy[tuple[tuple[str, tuple[Any, ...]], ...]]:
        row = st.tuples(*(st.sampled_from(p) for p in pool[rel][1:]))
        many = st.lists(row, min_size=1 if rel in read else 0, max_size=2, unique=True)
        return many.map(lambda rows: tuple((rel, r) for r in rows))

    attrs = st.tuples(*(attribute(rel) for rel in attributes)).map(lambda groups: tuple(x for g in groups for x in g))

    def of(rel: str, i: int) -> st.SearchStrategy[Any]:
        return st.sampled_from(pool[rel][i]) if rel in pool else st.nothing()

    def some(rel: str, make: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.lists(make, max_size=2, unique=True).map(tuple) if rel in used else st.just(())

    def optional(rel: str, make: st.SearchStrategy[Any], default: Any) -> st.SearchStrategy[Any]:
        return make if rel in used else st.just(default)

    return st.builds(
        Request,
        id=of("request", 0),
        kind=of("request", 1),
        target=of("request", 2),
        agent=of("request", 3),
        epoch=of("request", 4),
        # no scope (every scope holding the target) as often as a named one, which only narrows
        scope=st.none() | st.sampled_from(pool["request_scope"][1]) if "request_scope" in pool else st.none(),
        uses=some("request_uses", of("request_uses", 1)),
        needs=some("request_needs", st.tuples(*(of("request_needs", i) for i in (1, 2, 3)))),
        routes=some("request_route", of("request_route", 1)),
        requires=some("request_requires", of("request_requires", 1)),
        irreversible=optional("request_irreversible", st.booleans(), False),
        key=optional("request_key", st.none() | of("request_key", 1), None),
        attributes=attrs,
    ).map(lambda r: r if r.scope is not None else replace(r, scope=r.target))  # as a fixture spells it


# ---------------------------------------------------------------- borrowing
#
# A drafted step may borrow values from an earlier fact, so that facts and
# requests meet: a fact takes, for each argument of the earlier fact, the
# value into its first argument of the same role (parameter names, with
# synonyms below) and type; a request takes its fields likewise.

_ROLE = {
    "by": "agent",
    "observer": "agent",
    "other": "agent",
    "c1": "c",
    "c2": "c",
    "new": "c",
    "old": "c",
    "claim": "c",
    "prior": "action",
    "v1": "value",
    "v2": "value",
}
_FIELD = {  # request field <- role
    "agent": "agent",
    "scope": "scope",
    "epoch": "epoch",
    "work": "target",
    "thing": "target",
    "target": "target",
    "c": "uses",
    "route": "routes",
    "action": "requires",
    "key": "key",
}
_FIELD_POOL = {
    "agent": ("request", 3),
    "epoch": ("request", 4),
    "target": ("request", 2),
    "scope": ("request_scope", 1),
    "uses": ("request_uses", 1),
    "routes": ("request_route", 1),
    "requires": ("request_requires", 1),
    "key": ("request_key", 1),
}
_FIELD_RELATION = {
    "uses": "request_uses",
    "routes": "request_route",
    "requires": "request_requires",
    "key": "request_key",
}


def _role(name: str) -> str:
    return _ROLE.get(name.lower(), name.lower())


@dataclass(frozen=True, slots=True)
class _Draft:
    """A fact or request before it borrows from the fact `back` facts earlier."""

    step: Fact | Request
    back: int | None
    advance: int | None = None  # then time moves forward by this much


def _params(program: CheckedProgram, relation: str) -> list[tuple[str, str]]:
    rel = program.relations[relation]
    if rel.decl is None:
        return [(f"x{i}", "symbol") for i in range(rel.arity)]
    return [(_role(p.name), p.type) for p in rel.decl.params]


def _borrow_fact(program: CheckedProgram, pool: Pools, fact: Fact, source: Fact) -> Fact:
    mine, theirs = _params(program, fact.relation), _params(program, source.relation)
    args, taken = list(fact.args), set()
    for (role, type_), value in zip(theirs, source.args):
        for i, (r, t) in enumerate(mine):
            if i not in taken and r == role and t == type_ and value in pool[fact.relation][i]:
                args[i] = value
                taken.add(i)
                break
    return Fact(fact.relation, tuple(args))


def _borrow_request(program: CheckedProgram, pool: Pools, req: Request, source: Fact, used: set[str]) -> Request:
    fields: dict[str, Any] = {}
    for (role, _), value in zip(_params(program, source.relation), source.args):
        name = _FIELD.get(role)
        if name is None or name in fields or _FIELD_RELATION.get(name, "request") not in used:
            continue
        relation, index = _FIELD_POOL[name]
        if relation not in pool or value not in pool[relation][index]:
            continue
        if name in ("uses", "routes", "requires"):
            fields[name] = tuple(dict.fromkeys((value, *getattr(req, name))))
        else:
            fields[name] = value
    if "scope" in fields and "target" not in fields:  # scope follows the target: act on the scope itself
        fields["target"] = fields["scope"]
    return replace(req, **fields)


def _resolve(program: CheckedProgram, pool: Pools, drafts: list[Any], used: set[str]) -> tuple[Entry, ...]:
    out: list[Entry] = []
    for d in drafts:
        if not isinstance(d, _Draft):
            out.append(d)
            continue
        earlier = [s for s in out if isinstance(s, Fact)]
        step = d.step
        if d.back is not None and earlier:
            source = earlier[-1 - (d.back - 1) % len(earlier)]
            if isinstance(step, Fact):
                step = _borrow_fact(program, pool, step, source)
            else:
                step = _borrow_request(program, pool, step, source, used)
        out.append(step if isinstance(step, Fact) else Ask(step))
        if d.advance:
            out.append(Advance(d.advance))
    return tuple(out)


def _drafts(step: st.SearchStrategy[Any]) -> st.SearchStrategy[_Draft]:
    return st.builds(_Draft, step, st.none() | st.integers(1, 4), st.sampled_from(_ADVANCING))


def aimed(program: CheckedProgram, body: Iterable[Literal] | None) -> tuple[Pools, dict[str, int]]:
    """The pools (joined where the invariant's body joins) and the weight of each relation."""
    pool = pools(program)
    if body is None:
        return pool, {}
    body = tuple(body)
    return joined_pools(pool, body), {rel: _weight(d) for rel, d in distances(program, body).items()}


def steps(
    program: CheckedProgram,
    relevant: set[str] | None,
    gated: bool,
    body: Iterable[Literal] | None = None,
    aim: tuple[Pools, dict[str, int]] | None = None,
) -> st.SearchStrategy[Any]:
    """One drafted step: a fact of a relevant input relation or (when the
    policy is gated and requests matter) a request, maybe then time
    advancing; aimed at `body` when given."""
    pool, weights = aim if aim is not None else aimed(program, body)
    inputs = [r for r in input_relations(program, gated) if relevant is None or r in relevant]
    options: list[st.SearchStrategy[Any]] = []
    if inputs:
        options.append(_drafts(facts(inputs, pool, weights)))
    used = _used_requests(program, relevant)
    if gated and used:
        read = frozenset(rel for rel, w in weights.items() if w == WEIGHTS[0])
        options.append(_drafts(requests(used, pool, attribute_relations(program, relevant), read)))
    if not options:  # nothing to write or ask: only time passes
        options.append(st.sampled_from(ADVANCES).map(Advance))
    return st.one_of(options)


def _used_requests(program: CheckedProgram, relevant: set[str] | None) -> set[str]:
    used = set(REQUEST_RELATIONS & (set(program.relations) if relevant is None else relevant))
    if attribute_relations(program, relevant):
        used.add("request")
    return used | {"request"} if used else used


def histories(
    program: CheckedProgram,
    relevant: set[str] | None = None,
    *,
    gated: bool = False,
    max_steps: int = MAX_STEPS,
    body: Iterable[Literal] | None = None,
) -> st.SearchStrategy[History]:
    """Histories of up to `max_steps` steps starting at `BASE` (aimed at the invariant's `body`, if given)."""
    aim = aimed(program, body)
    used, pool = _used_requests(program, relevant), aim[0]
    return st.lists(steps(program, relevant, gated, aim=aim), max_size=max_steps).map(
        lambda raw: History(BASE, _resolve(program, pool, raw, used))
    )

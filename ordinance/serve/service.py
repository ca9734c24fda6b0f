"""The service: one warm gate over one store, asked by principals.

Every way in (HTTP, the Claude Code hooks, MCP) calls these methods; each
returns JSON-ready data or raises an OrdinanceError, which the transport
turns into its `error[CODE]` data. The gate follows the store: before
each decision it reads the store's revision (one indexed read) and extends
its warm model by whatever other processes or hosts appended, so a write
anywhere counts on the next decision (`follow.py` adds PostgreSQL
LISTEN/NOTIFY to warm the model before the decision asks).

The principal is the agent of its requests: a request naming another agent
is refused, one naming none gets the principal. Writes are decided by the
policy (`may_assert`, stdlib writes.rules); derived and request-side
relations are never stored.

Reads answer for an audience (privacy layers, `ordinance.project`): the
one asked for, which the principal must be allowed (`Principal.may_see`:
one of its audiences, or one that sees no more layers than one of them),
or by default the widest it may see. A read for an audience is evaluated
over the facts of the layers that audience sees, never filtered after
derivation; its `/log` holds only the fact events of those layers (gate
decisions are made over every layer, so only the full view has them).
"""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from typing import Any, Callable, Iterable, Mapping

from ..diagnostics import CheckError, OrdinanceError, StaleEpochError, diagnostic_of
from ..engine import Model, Pattern, answers, parse_pattern, why, why_not
from ..explain import annotator, decision_json, rebuild, rebuilt_json, to_json
from ..facts import FACT_KINDS, Event, Store, parse_json
from ..project import DEFAULT_BOUND, DEFAULT_CAP, Projector, rehydrate
from ..gate import SERVER_CLOCK, Batch, Decision, Gate, Request
from ..rules import typed_fact
from ..rules.checked import CheckedProgram
from ..facts.events import kind_of
from ..values import format_instant, parse_instant, value_problem
from .identity import Principal

__all__ = ["Forbidden", "Service", "BadRequest", "SERVER_FILLED", "clock"]

# events and the fence they are written under (`Store.append_each`)

# request attributes only the service fills, never a caller
SERVER_FILLED = frozenset({"request_owner"})


class BadRequest(OrdinanceError):
    """A request to the service is malformed (phase: serve)."""

    default_code = "bad_request"


class Forbidden(OrdinanceError):
    """The principal may not do this (phase: serve)."""

    default_code = "forbidden"


def _now(value: Any) -> int:
    if value is None:
        return int(time.time())
    if isinstance(value, int) and not isinstance(value, bool):
        problem = value_problem(value, "time")
        if problem is not None:
            raise BadRequest(f"`now` {problem[1]}", code=problem[0])
        return value
    if isinstance(value, str):
        try:
            return parse_instant(value)
        except ValueError:
            pass
    raise BadRequest(f"`now` must be an ISO-8601 instant such as 2026-08-14T23:00:00Z, got `{value}`")


def clock(principal: Principal, value: Any) -> tuple[int, str]:
    """The `now` a principal's request is decided at, and whose clock gave
    it: the server's, unless the owner gave the principal the clock
    (`clock = true` in the tokens file); a `now` from any other principal is
    refused, never silently replaced."""
    if value is None:
        return _now(None), SERVER_CLOCK
    if not principal.clock:
        raise Forbidden(
            f"principal `{principal.name}` may not give `now`: decisions use the server's clock "
            "unless the owner grants `clock = true` in the tokens file",
            code="clock_not_granted",
        )
    return _now(value), f"principal:{principal.name}"


def _object(body: Any) -> Mapping[str, Any]:
    if not isinstance(body, Mapping):
        raise BadRequest("the body must be a JSON object")
    return body


class Service:
    """`Service(policy, store)`: check, write, query, why, why-not, log, health."""

    def __init__(self, policy: CheckedProgram, store: Store, *, limits: Any = None, settle: bool = True) -> None:
        """`settle=False` for a service answering once and exiting (the
        command-line hook): a long-running one pays a full collection after
        each warm build (gate/core.py), which a one-shot process never needs."""
        self.policy = policy
        self.store = store
        self.gate = Gate(policy, store, limits=limits, snapshot=True, settle=settle)
        self.limits = self.gate.limits  # every evaluation a request starts has the gate's deadline
        self.projector = Projector(policy, gate=self.gate)  # warm per audience
        self.lock = threading.RLock()  # one store connection, one warm model
        self._ids = itertools.count(1)
        self._revision = store.revision()  # the newest revision health read

    # ---------------------------------------------------------------- requests

    def request(self, principal: Principal, data: Any) -> Request:
        """The Request of a JSON object, with the principal as its agent."""
        if not isinstance(data, Mapping):
            raise BadRequest("`request` is a JSON object with `kind`, `target` and `epoch`")
        data = dict(data)
        agent = data.setdefault("agent", principal.name)
        if agent != principal.name:
            raise Forbidden(f"principal `{principal.name}` cannot ask for agent `{agent}`", code="principal_mismatch")
        if "id" not in data:
            data["id"] = f"{principal.name}-{uuid.uuid4().hex[:12]}"
        attributes = data.get("attributes") or {}
        reserved = sorted(set(attributes) & SERVER_FILLED) if isinstance(attributes, Mapping) else []
        if reserved:
            raise Forbidden(f"`{reserved[0]}` is filled by the service, not the caller", code="reserved_attribute")
        request = Request.from_json(data)
        if principal.owner and "request_owner" in self.gate.request_relations:
            request = Request.from_json(
                {**request.to_json(), "attributes": {**(data.get("attributes") or {}), "request_owner": [[]]}}
            )
        return request

    def ask(self, principal: Principal, body: Any) -> tuple[Request, int, str, bool]:
        """A check's (request, now, clock, proofs) from its JSON body."""
        body = _object(body)
        request = self.request(principal, body.get("request"))
        now, by = clock(principal, body.get("now"))
        return request, now, by, bool(body.get("proofs", False))

    def check(self, principal: Principal, body: Any) -> dict[str, Any]:
        """Decide and log (`Gate.log`); the decision's JSON."""
        request, now, by, proofs = self.ask(principal, body)
        with self.lock:
            (decision,) = self.gate.log([(request, now)], clock=by)
            return decision_json(decision, program=self.policy, proofs=proofs)

    def check_many(self, asks: list[tuple[Request, int, str]]) -> list[Any]:
        """(request, now, clock) asks decided and logged in one append (`Gate.log`), under the lock."""
        with self.lock:
            return self.gate.log_then([(r, n) for r, n, _ in asks], clock=[c for _, _, c in asks])[0]

    def check_then(
        self,
        request: Request,
        now: int,
        then: Callable[[Decision], Batch | None],
        shown: Callable[[Decision, dict[str, Any]], dict[str, Any]] | None = None,
        clock: str = SERVER_CLOCK,
    ) -> tuple[Decision, StaleEpochError | None]:
        """`Gate.log_then`: the decision, and the fenced batch `then` makes of
        it (an intent receipt) appended in the same transaction: one durable
        commit. The decision is logged with its payload as `shown` makes it of
        the decision and the logged payload (a host marks an ask, keeps file
        contents as digests), whether or not the fence refuses the batch (the
        error is returned)."""

        def batches(decisions: list[Decision]) -> list[Batch]:
            extra = then(decisions[0])
            return [] if extra is None else [extra]

        with self.lock:
            (decision,), seqs = self.gate.log_then([(request, now)], clock=clock, then=batches, shown=shown)
        refused = seqs[-1] if seqs and isinstance(seqs[-1], StaleEpochError) else None
        return decision, refused

    def lease(self, principal: Principal, body: Any) -> dict[str, Any]:
        """Take or release a lease for the principal (gate/lease.py):
        `{"action": "take", "work", "epoch", "until", "scope"?, "now"?}` or
        `{"action": "release", "work"}`."""
        from ..gate.lease import release, take

        body = _object(body)
        action, work = body.get("action"), body.get("work")
        if action not in ("take", "release") or not isinstance(work, str) or not work:
            raise BadRequest('a lease call is {"action": "take" or "release", "work": NAME, ...}')
        now, by = clock(principal, body.get("now"))
        with self.lock:
            if action == "release":
                return {"released": work, "revision": release(self.gate, principal.name, work, now)}
            epoch, scope = body.get("epoch"), body.get("scope")
            if (
                not isinstance(epoch, int)
                or isinstance(epoch, bool)
                or (scope is not None and not isinstance(scope, str))
            ):
                raise BadRequest("a take names the `epoch` of the grant it takes the lease under (and maybe a `scope`)")
            until = _now(body.get("until"))
            leased = take(self.gate, principal.name, work, epoch, until, now, scope=scope, clock=by)
            return {
                "taken": leased.taken,
                "epoch": leased.epoch,
                "revision": leased.revision,
                "decision": decision_json(leased.decision, program=self.policy, proofs=False),
            }

    def warm(self) -> None:
        """Bring the warm model up to the store and the clock now, so the
        next decision finds it ready (run after answering a call that wrote
        facts: the intent receipt, an assert)."""
        with self.lock:
            try:
                self.gate.model(self.store.revision(), int(time.time()))
            except Exception:  # the next decision meets it again, and denies with it as data
                pass

    # ---------------------------------------------------------------- writes

    def may_assert(self, principal: Principal, relation: str, now: int) -> bool:
        """The policy's `may_assert(Principal, Relation)` for this principal."""
        if "may_assert" not in self.policy.relations:
            return principal.owner  # a policy without writes.rules: the owner only
        attrs = (("request_owner", ()),) if principal.owner else ()
        ask = Request(f"write-{next(self._ids)}", "assert", relation, principal.name, 0, attributes=attrs)
        return bool(self.gate.overlay(ask, now).contains("may_assert", (principal.name, relation)))

    def _fact(self, relation: Any, args: Any, where: str) -> tuple[str, tuple[Any, ...]]:
        """A fact to store, checked by `typed_fact`: refused as a bad
        request, or forbidden for a derived relation."""
        if not isinstance(relation, str) or not isinstance(args, list):
            raise BadRequest(f'{where}: a fact is {{"relation": NAME, "args": [...]}}')
        try:
            return typed_fact(self.policy, relation, args, where=f"{where}: ", stored=True)
        except CheckError as exc:
            raise (Forbidden if exc.code == "derived_relation" else BadRequest)(exc.diagnostics, exc.code) from None

    def facts_of(self, body: Mapping[str, Any]) -> list[tuple[str, tuple[Any, ...]]]:
        """`facts`: [{"relation", "args"}] or `text`: facts in the rule language."""
        if "text" in body:
            from ..rules import parse
            from ..rules.ast import Const, Rule

            out = []
            for item in parse(str(body["text"]), file="<assert>").items:
                if not isinstance(item, Rule) or item.body or not all(isinstance(a, Const) for a in item.head.args):
                    raise BadRequest(
                        '`text` holds ground facts such as `claim("c1", "db", "role", "primary").`', code="not_a_fact"
                    )
                out.append(
                    self._fact(
                        item.head.relation,
                        [a.value for a in item.head.args if isinstance(a, Const)],
                        item.head.relation,
                    )
                )
            return out
        facts = body.get("facts")
        if not isinstance(facts, list) or not facts:
            raise BadRequest("give `facts` (a non-empty list) or `text`")
        return [
            self._fact(
                f.get("relation") if isinstance(f, Mapping) else None,
                f.get("args") if isinstance(f, Mapping) else None,
                f"fact {n}",
            )
            for n, f in enumerate(facts, 1)
        ]

    def _layer(self, layer: Any, where: str = "") -> str:
        """A declared privacy layer; the policy's default for None."""
        if layer is None:
            return self.projector.layers.default
        if not isinstance(layer, str):
            raise BadRequest(f"{where}`layer` is the name of a privacy layer, such as `public`")
        return self.projector.layers.require(layer)

    def write(
        self,
        principal: Principal,
        facts: Iterable[tuple[str, tuple[Any, ...]]],
        source: str = "serve",
        now: int | None = None,
        layer: Any = None,
    ) -> dict[str, Any]:
        """Append `facts` as one batch, in privacy `layer` (default: the
        policy's), if the policy lets the principal assert every relation
        in it; nothing is written otherwise."""
        chosen = self._layer(layer)
        return self._append(principal, [(rel, args, chosen) for rel, args in facts], source, now)

    def _append(
        self, principal: Principal, batch: list[tuple[str, tuple[Any, ...], str]], source: str, now: int | None
    ) -> dict[str, Any]:
        at = _now(now)
        with self.lock:
            for relation in sorted({rel for rel, _, _ in batch}):
                if not self.may_assert(principal, relation, at):
                    raise Forbidden(f"principal `{principal.name}` may not assert `{relation}`", code="may_not_assert")
            fence = self._bound(principal, [(rel, args) for rel, args, _ in batch], at)
            events = [Event(kind_of(rel), rel, args, source, principal.name, layer=layer) for rel, args, layer in batch]
            revision = self.store.append(events, fence=fence)
        return {"revision": revision, "written": len(events)}

    def _bound(self, principal: Principal, facts: list[tuple[str, tuple[Any, ...]]], at: int) -> tuple[str, int] | None:
        """The fence a write goes under, once each fact is bound to its
        writer: a relation's `bound_to(Relation, Position)` argument must be
        the principal (the owner writes in any name). A receipt is fenced as
        `guard`'s are: an intent is the gate's to write, when it allows the
        action; an outcome needs its writer's intent on record and goes
        under that intent's fence, so after a takeover it is refused as
        stale (`stale_epoch`)."""
        model = self.gate.model(self.store.revision(), at)
        positions: dict[str, set[int]] = {}
        if "bound_to" in self.policy.relations:
            for rel, n in model.query("bound_to", (None, None)):
                positions.setdefault(str(rel), set()).add(int(n))
        fences: set[tuple[str, int]] = set()
        for rel, args in facts:
            for n in sorted(positions.get(rel, ())):
                if not principal.owner and n < len(args) and args[n] != principal.name:
                    raise Forbidden(
                        f"`{rel}` names `{args[n]}` as its writer, not the principal `{principal.name}`",
                        code="bound_to_writer",
                    )
            if rel == "receipt" and len(args) == 4:
                fences |= self._receipt_fence(principal, model, args)
        if len(fences) > 1:
            raise BadRequest("outcome receipts fenced at different resources: write them separately")
        return next(iter(fences), None)

    def _receipt_fence(self, principal: Principal, model: Any, receipt: tuple[Any, ...]) -> set[tuple[str, int]]:
        action, kind, by = receipt[0], receipt[1], receipt[2]
        if principal.owner:
            return set()
        if kind != "outcome":
            raise Forbidden(
                f"receipt `{action}`: only an outcome is written here; the intent is the gate's, "
                "written when it allows the action",
                code="ungated_intent",
            )
        intents = [row for row in model.query("receipt", (action, "intent", by, None))]
        seqs = [s for row in intents for s in self.store.seqs_of("receipt", row)]
        if not seqs:
            raise Forbidden(f"receipt `{action}`: no intent of `{by}` on record for this outcome", code="no_intent")
        newest = max(self.store.events_at(seqs), key=lambda e: e.seq)
        if newest.resource is None or newest.epoch is None:
            return set()
        return {(newest.resource, newest.epoch)}

    def load(self, principal: Principal, text: str, source: str = "load") -> dict[str, Any]:
        """JSON Lines of facts (`ordinance load`'s format, with an optional
        `"layer"`, default the policy's), one batch."""
        batch = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            obj = parse_json(line, f"line {n}", malformed="bad_jsonl")  # bounded: `too_deep`, `integer_range`
            if not isinstance(obj, Mapping) or "seq" in obj:
                raise BadRequest(f'line {n}: a fact is {{"relation": NAME, "args": [...]}}', code="bad_jsonl")
            relation, args = self._fact(obj.get("relation"), obj.get("args"), f"line {n}")
            batch.append((relation, args, self._layer(obj.get("layer"), f"line {n}: ")))
        if not batch:
            raise BadRequest("nothing to load", code="bad_jsonl")
        return self._append(principal, batch, source, None)

    # ---------------------------------------------------------------- reading

    def audience(self, principal: Principal, asked: Any = None) -> str | None:
        """The audience a read answers for (None: every layer): `asked`, if
        the principal may see what it sees, else the principal's widest."""
        bound = principal.may_see()
        layers = self.projector.layers
        if asked is not None and not isinstance(asked, str):
            raise BadRequest("`audience` is the name of an audience, such as `public`")
        if asked is None:
            if bound is None:
                return None
            return max(bound, key=lambda a: (len(layers.visible(a) or ()), a))
        wanted = layers.visible(asked) or frozenset()  # refuses an audience the policy does not declare
        if bound is None or any(wanted <= (layers.visible(a) or frozenset()) for a in bound):
            return asked
        raise Forbidden(f"principal `{principal.name}` may not ask as audience `{asked}`", code="audience_forbidden")

    def _model(self, principal: Principal, body: Mapping[str, Any], asked: Pattern, why_not: bool = False) -> Model:
        """The model `asked` is asked of (`Projector.model_for`): at `now`,
        over the facts the audience may see (the warm model for every
        layer), plus the request in `request`, if any."""
        request = None if body.get("request") is None else self.request(principal, body["request"])
        # a read of the store alone may ask about any time; with a request, the time is a decision's
        now = _now(body.get("now")) if request is None else clock(principal, body.get("now"))[0]
        audience = self.audience(principal, body.get("audience"))
        return self.projector.model_for(
            now, request=request, audience=audience, asked=asked, why_not=why_not, limits=self.limits
        ).model

    def _pattern(self, text: Any, ground: bool) -> Pattern:
        if not isinstance(text, str):
            raise BadRequest('give the atom as a string, such as `permit("a1")`')
        return parse_pattern(text, self.policy, ground=ground)

    def query(self, principal: Principal, body: Any) -> dict[str, Any]:
        body = _object(body)
        asked = self._pattern(body.get("pattern"), ground=False)
        with self.lock:
            found = answers(self._model(principal, body, asked), asked)
        return {"relation": asked.relation, "answers": found, "holds": bool(found)}

    def why(self, principal: Principal, body: Any) -> dict[str, Any]:
        """The proof of `fact`, or, given `decision` (a seq), of that logged decision, rebuilt."""
        body = _object(body)
        if body.get("decision") is not None:
            return self.why_decision(principal, body["decision"])
        asked = self._pattern(body.get("fact"), ground=True)
        with self.lock:
            proof = why(self._model(principal, body, asked), asked.relation, asked.values)
            return {"holds": proof is not None, "proof": None if proof is None else to_json(proof, program=self.policy)}

    def why_decision(self, principal: Principal, seq: Any) -> dict[str, Any]:
        """A logged decision rebuilt (`ordinance why --decision`): the owner's
        or, for its own decisions, an agent's; the proofs only for a principal
        that sees every layer (a proof shows the facts it rests on)."""
        if type(seq) is not int:
            raise BadRequest("`decision` is the seq of a logged decision")
        with self.lock:
            rebuilt = rebuild(self.gate, seq)
            if not principal.owner and rebuilt.logged.request.agent != principal.name:
                raise Forbidden(f"decision `{seq}` is not of principal `{principal.name}`")
            if self.audience(principal) is not None:
                return {**rebuilt_json(rebuilt), "decision": decision_json(rebuilt.again, proofs=False)}
            return rebuilt_json(rebuilt, annotator(self.store, rebuilt.again.revision), self.policy)

    def why_not(self, principal: Principal, body: Any) -> dict[str, Any]:
        body = _object(body)
        asked = self._pattern(body.get("fact"), ground=False)
        with self.lock:
            answer = why_not(self._model(principal, body, asked, why_not=True), asked.relation, asked.values)
            return {"holds": bool(answer.holds), "why_not": to_json(answer, program=self.policy)}

    def log(
        self,
        principal: Principal,
        since: int = 0,
        limit: int = 100,
        kinds: Iterable[str] | None = None,
        audience: Any = None,
    ) -> dict[str, Any]:
        """Events after `since`; for an audience, only fact events of the layers it sees."""
        with self.lock:
            seen = self.projector.layers.visible(self.audience(principal, audience))
            events = self.store.events(since, kinds=None if kinds is None else list(kinds))
        if seen is not None:
            events = [e for e in events if e.kind in FACT_KINDS and e.layer in seen]
        return {"events": [e.to_json() for e in events[: max(0, limit)]], "more": len(events) > limit}

    def read_revision(self) -> int:
        """Read the store's revision for `health`, unless the lock is held
        (a decision, a store writer another process holds up): then the
        revision last read."""
        if self.lock.acquire(blocking=False):
            try:
                self._revision = self.store.revision()
            finally:
                self.lock.release()
        return self._revision

    def health(self, read: bool = True) -> dict[str, Any]:
        """Liveness, never waiting for the lock: the revision as
        `read_revision` reads it, or (`read=False`, the server's event loop,
        which reads it in a thread of its own) as it last read it."""
        revision = self.read_revision() if read else self._revision
        return {
            "status": "ok",
            "revision": revision,
            "policy_hash": self.policy.source_hash,
            "now": format_instant(int(time.time())),
        }

    def state(self, principal: Principal, now: Any = None, audience: Any = None, cap: Any = None) -> dict[str, Any]:
        """The state file (`ordinance state`) as the audience may see it: its lines, as JSON, and its text."""
        at, size = _now(now), _size(cap, DEFAULT_CAP, "cap")
        with self.lock:
            state = self.projector.render("state", at, audience=self.audience(principal, audience), cap=size)
        return {**state.to_json(), "text": state.text}

    def rehydrate(
        self, principal: Principal, now: Any = None, audience: Any = None, bound: Any = None, cap: Any = None
    ) -> dict[str, Any]:
        """The rehydration bundle (`ordinance rehydrate`) as the audience may see it."""
        at = _now(now)
        limit, size = _size(bound, DEFAULT_BOUND, "bound"), _size(cap, DEFAULT_CAP, "cap")
        with self.lock:
            bundle = rehydrate(self.projector, self.policy, at, self.audience(principal, audience), limit, cap=size)
        return {
            "revision": bundle.state.revision,
            "audience": bundle.state.to_json()["audience"],
            "text": bundle.text,
            "state": bundle.state.to_json(),
            "decisions": bundle.decisions.to_json(),
            "log": list(bundle.log),
        }


def _size(value: Any, default: int, name: str) -> int:
    if value is None:
        return default
    try:
        size = int(value)
    except (TypeError, ValueError):
        size = 0
    if size < 1 or isinstance(value, bool):
        raise BadRequest(f"`{name}` is a positive number of bytes, got `{value}`")
    return size


def error_data(exc: BaseException) -> dict[str, Any]:
    """`{"error": {code, message, span}}` for any exception (no traceback):
    `diagnostic_of`, its message's first line; anything but an
    OrdinanceError is `internal`, named by its class only."""
    if not isinstance(exc, OrdinanceError):
        return {"error": {"code": "internal", "message": type(exc).__name__, "span": None}}
    d = diagnostic_of(exc)
    span = {"file": d.span.file, "line": d.span.line, "column": d.span.column} if d.span.line else None
    return {"error": {"code": d.code, "message": d.message.splitlines()[0] if d.message else d.code, "span": span}}

"""why and why-not, rebuilt on demand from the per-tuple notes.

`why` proves a tuple of rank r (see `Note.rank`) from an instance of one of
its rules whose positive premises all rank below r, choosing the instance
whose highest premise ranks lowest, recursively; ties go to the lowest rule
id, then to the instance whose premises come first in value order (matches
are tried sorted), so a proof depends on the facts, never on the order they
arrived in (heights a seed run left are renumbered first). EDB facts are "fact"
leaves, negated premises "absent" leaves, comparisons and assignments "holds"
leaves, aggregates "aggregate" leaves with their value. Each leaf holds the
literal as it held, instantiated: an AST literal whose constants carry the
types the checked program infers for the rule's variables, so it prints
(`T <= $now` as `2026-08-14T10:05:00Z <= $now`) without reading text back.
Proofs are built with an explicit stack, so a proof thousands of steps deep
does not overflow Python's.

`why_not` walks, for every rule whose head unifies with the (possibly partial)
tuple, the rule's body in *source order* (each comparison, negation and
aggregate moved to the first point where its variables are bound) and finds
the best partial binding: the one satisfying the longest prefix. The literal
after that prefix is the failure, with the facts that would make it hold
(a missing atom's instance; for a negation, the facts that block it);
a missing atom of a derived relation is explained recursively to `depth`.

Both interpret the rule's join plan over the model's relations and indexes;
nothing here runs during evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterator

from ..diagnostics import Diagnostic, EvaluationError
from ..rules.ast import (
    Aggregate,
    Atom,
    BinOp,
    Branch,
    Call,
    Comparison,
    Const,
    Literal,
    Negation,
    Predicate,
    Record,
    Term,
    Var,
    Wildcard,
    var_names,
)
from ..rules.functors import EVAL_ERRORS, FUNCTORS, evaluate, holds, match, mean, values
from ..rules.infer import TIMED, term_type
from ..rules.printer import format_literal
from ..values import format_value
from .evaluate import aggregator
from .incremental import renumber
from .model import Model
from .plan import AggStep, AntiJoin, Assign, Filter, JoinPlan, Scan, Step, Unpack, plan_rule
from .qualify import rivals

__all__ = ["ProofNode", "Failure", "WhyNot", "why", "why_not", "premises"]

Binding = dict[str, Any]
Row = tuple[Any, ...]
Bindings = tuple[tuple[str, Any], ...]
SEARCH_BUDGET = 20_000  # steps tried per why-not search


@dataclass(frozen=True, slots=True)
class ProofNode:
    """One step of a proof. "rule" and "fact" nodes hold `relation(tuple)`;
    "absent", "holds" and "aggregate" leaves hold the instantiated `literal`
    (an aggregate's as `aggregate = value`). `rule` is the rule's id in the
    checked program, `bindings` its variables' values."""

    kind: str  # "rule" | "fact" | "absent" | "holds" | "aggregate"
    relation: str | None = None
    tuple: Row | None = None
    rule: int | None = None
    rule_text: str | None = None
    bindings: Bindings = ()
    children: "Proofs" = ()
    height: int = 0
    literal: Literal | None = None

    @property
    def text(self) -> str:
        """The literal as it holds, e.g. `!banned("alice")`, `3 < 5`."""
        return "" if self.literal is None else format_literal(self.literal)


@dataclass(frozen=True, slots=True)
class Failure:
    """Why one rule did not derive the fact: the first literal that fails
    under the best partial binding, instantiated (None when the search
    budget ran out before any binding was found)."""

    rule: int
    rule_text: str
    bindings: Bindings  # the best partial binding
    literal: Literal | None
    kind: str  # "missing" (no matching fact) | "present" (negated fact exists) | "false" | "empty"
    #   | "chosen" (a `choice-domain` key is taken) | "dominated" (a subsumption clause removed it)
    needed: tuple[
        tuple[str, Row], ...
    ]  # facts to add ("missing") or remove ("present"), the rivals ("chosen", "dominated")
    children: "tuple[WhyNot, ...]" = ()

    @property
    def text(self) -> str:
        return "(search budget exhausted)" if self.literal is None else format_literal(self.literal)


@dataclass(frozen=True, slots=True)
class WhyNot:
    relation: str
    tuple: Row  # None marks an unknown value
    holds: bool
    failures: "Failures" = ()


Proofs = tuple[ProofNode, ...]
Failures = tuple[Failure, ...]


# ---------------------------------------------------------------- interpreter


# source-order plans per prepared program, shared by every proof of it
_PLANS: dict[int, tuple[Any, dict[int, JoinPlan]]] = {}


def _plans(prepared: Any) -> dict[int, JoinPlan]:
    hit = _PLANS.get(id(prepared))
    if hit is None or hit[0] is not prepared:
        if len(_PLANS) >= 64:
            _PLANS.pop(next(iter(_PLANS)))
        hit = _PLANS[id(prepared)] = (prepared, {})
    return hit[1]


class _Interp:
    def __init__(self, model: Model):
        self.model = model
        self.plans: dict[int, JoinPlan] = _plans(model.prepared)

    def plan(self, rid: int) -> JoinPlan:
        plan = self.plans.get(rid)
        if plan is None:
            rule = self.model.prepared.program.rules[rid]
            plan = self.plans[rid] = plan_rule(rule, rid, source_order=True)
        return plan

    def value(self, term: Term, b: Binding) -> Any:
        return evaluate(term, b, self.model.now)

    def known(self, term: Term, b: Binding) -> bool:
        return all(v in b for v in var_names(term, True))

    def pattern(self, args: tuple[Term, ...], b: Binding) -> tuple[Any, ...]:
        return tuple(self.value(a, b) if self.known(a, b) else None for a in args)

    def unify(self, args: tuple[Term, ...], t: tuple[Any, ...], b: Binding, strict: bool = True) -> Binding | None:
        """`b` extended to match `args` to `t`; None if they cannot match. Not
        `strict` (a rule's head), an expression whose variables stay unbound
        is left for the caller to check once the body has bound them."""
        out = dict(b)
        later = []
        for a, v in zip(args, t):
            if v is None or _counter(a):  # a number of `autoinc()`: `_rules_matching` reads its binding
                continue
            if isinstance(a, Var) and a.name not in out:
                out[a.name] = v
            elif isinstance(a, (Record, Branch)) and not self.known(a, out):
                fits = match(a, v, out, self.model.now)
                if fits is None:
                    return None
                out = fits
            elif self.known(a, out):
                if not _eq(self.value(a, out), v):
                    return None
            else:
                later.append((a, v))
        for a, v in later:
            if not self.known(a, out):
                if strict:
                    return None
            elif not _eq(self.value(a, out), v):
                return None
        return out

    def matches(
        self, relation: str, args: tuple[Term, ...], b: Binding, ordered: bool = True
    ) -> Iterator[tuple[tuple[Any, ...], Binding]]:
        """Tuples unifying with `args` under `b`, in value order if `ordered`."""
        rows = self.model.query(relation, self.pattern(args, b))
        if ordered and len(rows) > 1:
            rows.sort(key=_order)
        for t in rows:
            nb = self.unify(args, t, b)
            if nb is not None:
                yield t, nb

    def compare(self, c: Comparison | Predicate, b: Binding) -> bool:
        try:
            if isinstance(c, Predicate):
                return holds(c, b, self.model.now)
            if c.op == "=" and isinstance(c.right, Call) and FUNCTORS[c.right.func].multi:
                return any(_eq(self.value(c.left, b), v) for v in values(c.right, b, self.model.now))
            if c.op == "=" and isinstance(c.left, Call) and FUNCTORS[c.left.func].multi:
                return any(_eq(self.value(c.right, b), v) for v in values(c.left, b, self.model.now))
            x, y = self.value(c.left, b), self.value(c.right, b)
            return {
                "=": _eq(x, y),
                "!=": not _eq(x, y),
                "<": x < y,
                "<=": x <= y,
                ">": x > y,
                ">=": x >= y,
            }[c.op]
        except EVAL_ERRORS:
            return False

    def aggregate(self, step: AggStep, b: Binding) -> Any:
        outer = {v: b[v] for v in step.outer}
        seen = {tuple(self.value(t, sol) for t in step.plan.head) for sol in self.solve(step.plan.steps, outer)}
        func = step.aggregate.func
        if func == "count":
            return len(seen)
        values = [t[-1] for t in seen]
        if func == "sum":
            return sum(values)
        if func == "mean":
            return mean(values)
        if not values:
            return None
        return min(values) if func == "min" else max(values)

    def solve(self, steps: tuple[Step, ...], b: Binding) -> Iterator[Binding]:
        """Every binding satisfying the steps (no height condition)."""
        if not steps:
            yield b
            return
        for nb, _ in self.step(steps[0], b):
            yield from self.solve(steps[1:], nb)

    def step(self, step: Step, b: Binding, below: tuple[int, int] | None = None) -> Iterator[tuple[Binding, Any]]:
        """Extensions of `b` through one step, each with its evidence."""
        if isinstance(step, Scan):
            for t, nb in self.matches(step.atom.relation, step.atom.args, b):
                if below is None:
                    yield nb, t
                else:
                    note = self.model.note(step.atom.relation, t)
                    if note is not None and note.rank < below:
                        yield nb, t
        elif isinstance(step, AntiJoin):
            if not any(True for _ in self.matches(step.atom.relation, step.atom.args, b, ordered=False)):
                yield b, None
        elif isinstance(step, Filter):
            if self.compare(step.literal, b):
                yield b, None
        elif isinstance(step, Unpack):
            if not self.known(step.value, b):  # a fact with an unknown argument
                return
            try:
                fits = match(step.pattern, self.value(step.value, b), b, self.model.now)
            except EVAL_ERRORS:
                return
            if fits is not None:
                yield fits, None
        elif isinstance(step, Assign):
            try:
                vs = list(values(step.expr, b, self.model.now))
            except EVAL_ERRORS:
                return
            for v in vs:
                if step.var not in b:
                    yield {**b, step.var: v}, None
                elif _eq(b[step.var], v):
                    yield b, None
        else:
            v = self.aggregate(step, b)
            if v is not None and (step.var not in b or _eq(b[step.var], v)):
                yield {**b, step.var: v}, v


def _counter(t: Term) -> bool:
    return isinstance(t, Call) and t.func == "autoinc"


def _numbered(model: Model, rid: int, head: tuple[Term, ...], t: tuple[Any, ...]) -> Binding:
    """The binding that rule `rid` numbered with the values of `t` at its
    `autoinc()` arguments ({"#no": True} if it numbered none of them so)."""
    q = model.prepared.qualified
    if q is None or rid not in q.binding:
        return {}
    b: Binding = {}
    for i, (h, v) in enumerate(zip(head, t)):
        if _counter(h) and v is not None:
            found = q.ticket_binding(model, rid, i, v)
            if found is None or any(b.get(k, x) != x for k, x in found.items()):
                return {"#no": True}
            b.update(found)
    return b


def _eq(x: Any, y: Any) -> bool:
    """Equal as the engine compares: a symbol never equals a number."""
    return (type(x) is str) == (type(y) is str) and x == y


def _order(t: tuple[Any, ...]) -> tuple[tuple[bool, Any], ...]:
    """A total order on tuples of numbers and symbols (numbers first)."""
    return tuple((type(v) is str, v) for v in t)


def _visible(b: Binding) -> tuple[tuple[str, Any], ...]:
    return tuple((k, v) for k, v in b.items() if "#" not in k)


def _const(value: Any, type_: str | None) -> Const:
    if isinstance(value, str):
        return Const(value, "symbol")
    return Const(value, type_ if type_ in TIMED else "number")


class _Instance:
    """Instantiates a rule's literals under a binding, typed by the checked
    program's inference for that rule."""

    def __init__(self, interp: _Interp, rule: int) -> None:
        self.interp = interp
        self.program = interp.model.prepared.program
        self.env = self.program.variable_types(rule)
        self.aggregates: dict[str, AggStep] = {}  # the planner's `_agg#n` -> the step computing it

    def term(self, term: Term, b: Binding, fold: bool = True) -> Term:
        """`term` with the values of `b`; `fold` also replaces a known
        expression by its value (else it stays an expression of values, an
        aggregate the planner lifted as written, its outer variables' values in)."""
        interp = self.interp
        if isinstance(term, Var):
            if not fold and term.name in self.aggregates:
                agg = self.aggregates[term.name]
                return self.term(agg.aggregate, {k: v for k, v in b.items() if k in agg.outer})
            if term.name in b:
                return _const(b[term.name], self.env.get(term.name))
            if term.name.startswith("_#"):
                return Wildcard(term.span)
            # an aggregate's local variable, renamed apart by the planner: its own name
            return Var(term.name.split("#")[0], term.span) if "#" in term.name else term
        if isinstance(term, BinOp):
            if fold and interp.known(term, b):
                return _const(interp.value(term, b), term_type(term, self.env))
            return BinOp(term.op, self.term(term.left, b, fold), self.term(term.right, b, fold), term.span)
        if isinstance(term, Call):
            if fold and interp.known(term, b):
                try:
                    return _const(interp.value(term, b), term_type(term, self.env))
                except EVAL_ERRORS:
                    pass
            return Call(term.func, tuple(self.term(a, b, fold) for a in term.args), term.span)
        if isinstance(term, (Record, Branch)):
            return replace(term, args=tuple(self.term(a, b) for a in term.args))
        if isinstance(term, Aggregate):
            target = None if term.target is None else self.term(term.target, b)
            return Aggregate(term.func, target, tuple(self.literal(lit, b) for lit in term.body), term.span)
        return term

    def atom(self, atom: Atom, b: Binding) -> Atom:
        declared = self.program.relation_types(atom.relation) or ()
        args = []
        for i, a in enumerate(atom.args):
            t = self.term(a, b)
            if isinstance(t, Const) and t.type == "number" and i < len(declared) and declared[i] in TIMED:
                t = Const(t.value, declared[i], t.span)
            args.append(t)
        return Atom(atom.relation, tuple(args), atom.span)

    def literal(self, lit: Literal, b: Binding) -> Literal:
        if isinstance(lit, Atom):
            return self.atom(lit, b)
        if isinstance(lit, Negation):
            return Negation(self.atom(lit.atom, b), lit.span)
        if isinstance(lit, Predicate):
            return Predicate(lit.name, tuple(self.term(a, b) for a in lit.args), lit.negated, lit.span)
        return Comparison(lit.op, self.term(lit.left, b), self.term(lit.right, b), lit.span)

    def step(self, step: Step, b: Binding, failed: bool = False) -> Literal:
        """The step as a literal of values; a `failed` comparison keeps its
        expressions (`D = Y - X` fails as `5 = 3 - 1`, never as `D = 2`)."""
        if isinstance(step, Scan):
            return self.atom(step.atom, b)
        if isinstance(step, AntiJoin):
            return Negation(self.atom(step.atom, b))
        if isinstance(step, Filter) and isinstance(step.literal, Comparison) and failed:
            c = step.literal
            return Comparison(c.op, self.term(c.left, b, fold=False), self.term(c.right, b, fold=False), c.span)
        if isinstance(step, Filter):
            return self.literal(step.literal, b)
        if isinstance(step, Assign) and failed:
            return Comparison("=", self.term(Var(step.var), b), self.term(step.expr, b, fold=False))
        if isinstance(step, Assign):
            return Comparison("=", Var(step.var), self.term(step.expr, b))
        if isinstance(step, Unpack):
            return Comparison("=", self.term(step.value, b), self.term(step.pattern, b))
        outer = {k: v for k, v in b.items() if k in step.outer}
        agg = self.term(step.aggregate, outer)
        if step.var not in b:  # it aggregated nothing
            return Comparison("=", agg, Wildcard())
        return Comparison("=", agg, _const(b[step.var], term_type(step.aggregate, self.env)))


# ---------------------------------------------------------------- why


def why(model: Model, relation: str, t: tuple[Any, ...]) -> ProofNode | None:
    """A minimal-height proof of `relation(t)`, or None if it is not in the model."""
    if model.note(relation, t) is None:
        return None
    if model.inexact:
        renumber(model, model.prepared.stratum_index.get(relation, -1))
    return _prove(_Interp(model), relation, tuple(t), {})


def _prove(interp: _Interp, relation: str, t: tuple[Any, ...], memo: dict[Any, ProofNode]) -> ProofNode:
    """Proofs of `relation(t)` and of every premise, children first, with an
    explicit stack (a premise always ranks below its conclusion: no cycles)."""
    chosen: dict[Any, tuple[int, Binding, list[tuple[Step, Binding, Any]]]] = {}
    stack = [(relation, t)]
    while stack:
        key = stack[-1]
        if key in memo:
            stack.pop()
            continue
        if key in chosen:
            stack.pop()
            memo[key] = _node(interp, key, chosen.pop(key), memo)
            continue
        note = interp.model.note(*key)
        assert note is not None
        if note.rule is None:
            stack.pop()
            memo[key] = ProofNode("fact", key[0], key[1])
            continue
        chosen[key] = _best(interp, key[0], key[1], note.rank)
        for step, _, evidence in chosen[key][2]:
            if isinstance(step, Scan) and (step.atom.relation, evidence) not in memo:
                stack.append((step.atom.relation, evidence))
    return memo[relation, t]


def _best(
    interp: _Interp, relation: str, t: tuple[Any, ...], rank: tuple[int, int]
) -> tuple[int, Binding, list[tuple[Step, Binding, Any]]]:
    """The rule instance proving `relation(t)` whose highest premise ranks lowest."""
    model = interp.model
    best: tuple[tuple[int, int], int, Binding, list[tuple[Step, Binding, Any]]] | None = None
    for rid, plan, start in _rules_matching(interp, relation, t):
        for b, trail in _instances(interp, plan, start, rank):
            if not all(_counter(h) or interp.known(h, b) and _eq(interp.value(h, b), v) for h, v in zip(plan.head, t)):
                continue
            top = max((_rank(model, s.atom.relation, ev) for s, _, ev in trail if isinstance(s, Scan)), default=(0, 0))
            if best is None or top < best[0]:  # the first of equals is the least in value order
                best = (top, rid, b, trail)
                if top == (0, 0):
                    break
        if best is not None and best[0] == (0, 0):
            break
    if best is None and model.prepared.qualified is not None:
        shown = f"{relation}({', '.join(format_value(v) for v in t)})"
        raise EvaluationError(
            [
                Diagnostic(
                    "unsupported",
                    f"no proof of `{shown}`: a subsumption clause removed "
                    "a premise of each of its derivations after it was derived",
                )
            ]
        )
    assert best is not None, f"no proof found for {relation}{t}"
    return best[1], best[2], best[3]


def _rank(model: Model, relation: str, t: tuple[Any, ...]) -> tuple[int, int]:
    note = model.note(relation, t)
    assert note is not None, "a premise is in the model"
    return note.rank


def _node(
    interp: _Interp,
    key: tuple[str, tuple[Any, ...]],
    instance: tuple[int, Binding, list[tuple[Step, Binding, Any]]],
    memo: dict[Any, ProofNode],
) -> ProofNode:
    """The rule node of a chosen instance, its premises' proofs in `memo`."""
    rid, b, trail = instance
    inst = _Instance(interp, rid)
    children = []
    for step, sb, evidence in trail:
        if isinstance(step, Scan):
            children.append(memo[step.atom.relation, evidence])
        elif isinstance(step, AntiJoin):
            children.append(
                ProofNode("absent", step.atom.relation, interp.pattern(step.atom.args, sb), literal=inst.step(step, sb))
            )
        elif isinstance(step, AggStep):
            children.append(ProofNode("aggregate", bindings=_visible(sb), literal=inst.step(step, sb)))
        else:
            children.append(ProofNode("holds", literal=inst.step(step, sb)))
    note = interp.model.note(*key)
    assert note is not None
    return ProofNode(
        "rule", key[0], key[1], rid, interp.model.prepared.labels[rid], _visible(b), tuple(children), note.height
    )


def premises(model: Model, relation: str, t: tuple[Any, ...]) -> Iterator[tuple[tuple[str, Row], ...]]:
    """The positive premises of every rule instance deriving `relation(t)`
    from the model's tuples, whatever their heights (demand.py numbers
    rounds with them)."""
    interp = _Interp(model)
    for _, plan, start in _rules_matching(interp, relation, tuple(t)):
        for b, trail in _instances(interp, plan, start, None, None):
            if all(interp.known(h, b) and _eq(interp.value(h, b), v) for h, v in zip(plan.head, t)):
                yield tuple((s.atom.relation, ev) for s, _, ev in trail if isinstance(s, Scan))


def _instances(
    interp: _Interp, plan: JoinPlan, b: Binding, below: tuple[int, int] | None, limit: int | None = 1000
) -> Iterator[tuple[Binding, list[tuple[Step, Binding, Any]]]]:
    """Rule instances whose positive premises have heights below `below`
    (any heights: None), at most `limit` of them."""
    count = 0

    def go(
        i: int, b: Binding, trail: list[tuple[Step, Binding, Any]]
    ) -> Iterator[tuple[Binding, list[tuple[Step, Binding, Any]]]]:
        nonlocal count
        if limit is not None and count >= limit:
            return
        if i == len(plan.steps):
            count += 1
            yield b, trail
            return
        step = plan.steps[i]
        for nb, evidence in interp.step(step, b, below):
            yield from go(i + 1, nb, trail + [(step, nb, evidence)])

    return go(0, b, [])


# ---------------------------------------------------------------- why not


def why_not(model: Model, relation: str, t: tuple[Any, ...], depth: int = 3) -> WhyNot:
    """Why `relation(t)` is not in the model; None in `t` stands for any value."""
    return _why_not(_Interp(model), relation, tuple(t), depth)


def _why_not(interp: _Interp, relation: str, t: tuple[Any, ...], depth: int) -> WhyNot:
    model = interp.model
    if any(True for _ in model.query(relation, t)):
        return WhyNot(relation, t, True)
    failures = tuple(
        _rule_failure(interp, plan, start, depth) for _, plan, start in _rules_matching(interp, relation, t)
    )
    return WhyNot(relation, t, False, failures)


def _rules_matching(interp: _Interp, relation: str, t: tuple[Any, ...]) -> Iterator[tuple[int, Any, Binding]]:
    """Each rule with a body whose head unifies with `relation(t)`: its id,
    its plan and the binding the unification starts from."""
    program = interp.model.prepared.program
    for rid in program.rules_for(relation):
        if program.rules[rid].is_fact:
            continue
        plan = interp.plan(rid)
        # `p(N + 1)`: an expression over body variables is checked once the body binds them
        start = interp.unify(plan.head, t, _numbered(interp.model, rid, plan.head, t), strict=False)
        if start is not None and not start.get("#no"):
            yield rid, plan, start


def _rule_failure(interp: _Interp, plan: JoinPlan, start: Binding, depth: int) -> Failure:
    best: tuple[int, Binding] = (-1, start)
    budget = SEARCH_BUDGET

    def go(i: int, b: Binding) -> None:
        nonlocal best, budget
        if i == len(plan.steps) and i > best[0]:
            best = (i, b)
        if budget <= 0 or i == len(plan.steps):
            return
        budget -= 1
        extended = False
        for nb, _ in interp.step(plan.steps[i], b):
            extended = True
            go(i + 1, nb)
            if budget <= 0:
                return
        if not extended and i > best[0]:
            best = (i, b)

    go(0, start)
    i, b = best
    label = interp.model.prepared.labels[plan.rule_id]
    inst = _Instance(interp, plan.rule_id)
    inst.aggregates = {s.var: s for s in plan.steps if isinstance(s, AggStep)}
    if i < 0:
        return Failure(plan.rule_id, label, _visible(start), None, "false", ())
    if i == len(plan.steps):  # the body holds: a qualifier excluded the head, or its expression differs
        head = interp.model.prepared.program.rules[plan.rule_id].head
        found = rivals(interp.model, head.relation, tuple(interp.value(h, b) for h in plan.head), aggregator)
        if found is not None:
            return Failure(plan.rule_id, label, _visible(b), inst.atom(head, b), found[0], found[1])
        return Failure(plan.rule_id, label, _visible(b), inst.atom(head, b), "false", ())
    step = plan.steps[i]
    text = inst.step(step, b, failed=True)
    if isinstance(step, Scan):
        pattern = interp.pattern(step.atom.args, b)
        children: tuple[WhyNot, ...] = ()
        if depth > 1 and interp.model.prepared.program.rules_for(step.atom.relation):
            children = (_why_not(interp, step.atom.relation, pattern, depth - 1),)
        return Failure(plan.rule_id, label, _visible(b), text, "missing", ((step.atom.relation, pattern),), children)
    if isinstance(step, AntiJoin):
        blocking = tuple((step.atom.relation, u) for u, _ in interp.matches(step.atom.relation, step.atom.args, b))
        return Failure(plan.rule_id, label, _visible(b), text, "present", blocking)
    if isinstance(step, AggStep):
        return Failure(plan.rule_id, label, _visible(b), text, "empty", ())
    return Failure(plan.rule_id, label, _visible(b), text, "false", ())

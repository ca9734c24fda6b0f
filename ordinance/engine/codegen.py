"""Compile a join plan into a specialised Python function.

The function is generated as source (the rule text as a comment above its
join) and `exec`-ed once. A rule's function takes `rels` (name -> `Rel`),
`agg` (AggStep -> the aggregate's callable), `out` (the set matches go to) and
`now`, and fetches its inputs (sets, frontiers, indexes) itself, so running a
variant is one call; variables are plain locals, so the hot loop does no dict
lookups for bindings. An aggregate sub-plan compiles to a function that takes
the outer variables, then its inputs, then `now`, and returns the aggregate's
value (None: min/max of nothing). `compile_round` joins the variants one
round of a stratum may run into one function, so shared inputs are fetched
once and a variant whose frontier is empty costs one test.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from typing import Any, Callable, Sequence

from ..rules.ast import BinOp, Branch, Call, Comparison, Const, Now, Record, Term, Var, var_names
from ..rules.functors import FUNCTORS, OPERATOR_NAMES, c_div, c_mod, namespace, predicate_name
from ..values import Branch as BranchValue
from ..values import Record as RecordValue
from .plan import AggStep, AntiJoin, Assign, Filter, JoinPlan, Scan, Unpack

__all__ = ["Compiled", "Input", "compile_plan", "compile_round", "c_div", "c_mod", "drain", "unlimited", "CHUNK"]

# ("stable", relation) | ("recent", relation) | ("index", relation, cols) | ("agg", AggStep)
Input = tuple[Any, ...]

_CMP = {"=": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def _multi(t: Term) -> bool:
    """A functor with several values (`range`)."""
    return isinstance(t, Call) and FUNCTORS[t.func].multi


CHUNK = 4096  # matches between two checks of the run limits
_NESTED = 16  # loops a join nests at most (CPython refuses more than 20 nested blocks)


def drain(matches: Any, out: set[Any], outs: Any, spend: Callable[[int, Any], None]) -> None:
    """Add the matches to `out` as they are made (duplicates never pile up),
    calling `spend(matches, outs)` every CHUNK matches and at the end, so the
    limits hold inside a round (`outs`: every output set of the round). A
    join that matched nothing spends nothing: the round's end checks the
    clock (evaluate.run_stratum)."""
    chunk = list(islice(matches, CHUNK))
    if not chunk:
        return
    update = out.update
    while True:
        update(chunk)
        spend(len(chunk), outs)
        if len(chunk) < CHUNK:
            return
        chunk = list(islice(matches, CHUNK))


def unlimited(matches: int, outs: Any) -> None:
    """`spend` for runs without limits (re-running a variant to name a culprit)."""


_NAMESPACE = {
    **namespace(),
    "drain": drain,
    "unlimited": unlimited,
    "CHUNK": CHUNK,
    "ADT": BranchValue,
    "REC": RecordValue,
}


@dataclass(frozen=True, slots=True)
class Compiled:
    plan: JoinPlan
    inputs: tuple[Input, ...]
    fn: Callable[..., Any]
    source: str


class _Gen:
    def __init__(self, plan: JoinPlan, inputs: dict[Input, str] | None = None, getters: set[str] | None = None):
        self.plan = plan
        self.items: list[str] = []  # comprehension clauses, outermost first
        self.getters: set[str] = set() if getters is None else getters  # indexes probed with a bound `.get`
        self.names: dict[str, str] = {}
        self.inputs: dict[Input, str] = {} if inputs is None else inputs
        self.temps = 0
        self.used: list[Input] = []  # this plan's inputs, in order of first use

    def join(self, out: str, outs: str = "None", counted: bool = True) -> list[str]:
        """The plan's join as nested loops adding each match to `out` as it
        is made, counting them in `n` and calling `spend` (the run limits)
        every CHUNK matches and, if `counted`, at the end (else the caller
        counts from 0 and spends the rest: a round, once for its variants).
        A join nested deeper than Python's compiler allows loops to be is
        one generator of matches that `drain` feeds to `out`."""
        self.steps(set(self.plan.bound_in))
        head = self.tup([self.term(t) for t in self.plan.head]) if self.plan.head else "()"
        if sum(c.startswith("for ") for c in self.items) > _NESTED:
            clauses = self.items if self.items[0].startswith("for ") else ["for _ in (0,)"] + self.items
            return (
                ["    drain((", f"        {head}"]
                + [f"        {c}" for c in clauses]
                + [f"    ), {out}, {outs}, spend)"]
            )
        lines, indent = ["    n = 0", "    w = 0"] if counted else [], "    "
        for k, clause in enumerate(self.items):
            lines.append(f"{indent}{clause}:")
            indent += "    "
            if clause.startswith("for ") and self.items[k + 1 :][:1] and self.items[k + 1].startswith("if "):
                # candidates a filter may reject all of count too (in `w`): a join matching
                # nothing still meets the deadline (`X = range(0, N), Y = range(0, N), X + Y < 0`)
                lines += [f"{indent}w += 1", f"{indent}if w == CHUNK:", f"{indent}    spend(0, {outs})"]
                lines += [f"{indent}    w = 0"]
        lines += [f"{indent}{out}.add({head})", f"{indent}n += 1", f"{indent}if n == CHUNK:"]
        lines += [f"{indent}    spend(n, {outs})", f"{indent}    n = 0"]
        return lines + (["    if n:", f"        spend(n, {outs})"] if counted else [])

    def var(self, name: str) -> str:
        py = self.names.get(name)
        if py is None:
            py = self.names[name] = f"v{len(self.names)}"
        return py

    def inp(self, spec: Input) -> str:
        if spec not in self.used:
            self.used.append(spec)
        name = self.inputs.get(spec)
        if name is None:
            name = self.inputs[spec] = f"{spec[0][0]}{len(self.inputs)}"
        return name

    def temp(self) -> str:
        self.temps += 1
        return f"t{self.temps}"

    def term(self, t: Term) -> str:
        if isinstance(t, Var):
            return self.var(t.name)
        if isinstance(t, Const):
            return f"U({t.value!r})" if t.type == "unsigned" else repr(t.value)
        if isinstance(t, Now):
            return "now"
        if isinstance(t, BinOp):
            left, right = self.term(t.left), self.term(t.right)
            return f"op_{OPERATOR_NAMES[t.op]}({left}, {right})"
        if isinstance(t, Call):
            return f"f_{t.func}({', '.join(self.term(a) for a in t.args)})"
        if isinstance(t, Record):
            return f"REC({self.tup([self.term(a) for a in t.args])})" if t.args else "()"
        if isinstance(t, Branch):
            return f"ADT({self.tup([repr(t.name)] + [self.term(a) for a in t.args])})"
        raise AssertionError(f"unexpected term {t!r}")

    def tup(self, items: list[str]) -> str:
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"

    def key(self, items: list[str]) -> str:
        return items[0] if len(items) == 1 else self.tup(items)

    def steps(self, bound: set[str]) -> None:
        for step in self.plan.steps:
            if isinstance(step, Scan):
                self.scan(step, bound)
            elif isinstance(step, AntiJoin):
                self.anti(step, bound)
            elif isinstance(step, Filter):
                c = step.literal
                if isinstance(c, Comparison) and _multi(c.right):  # `X = range(...)` with X bound
                    self.items.append(f"if {self.term(c.left)} in tuple({self.term(c.right)})")
                elif isinstance(c, Comparison) and _multi(c.left):
                    self.items.append(f"if {self.term(c.right)} in tuple({self.term(c.left)})")
                elif isinstance(c, Comparison):
                    self.items.append(f"if {self.term(c.left)} {_CMP[c.op]} {self.term(c.right)}")
                else:
                    test = f"{predicate_name(c)}({', '.join(self.term(a) for a in c.args)})"
                    self.items.append(f"if {test} is False" if c.negated else f"if {test}")
            elif isinstance(step, Assign):
                values = self.term(step.expr) if _multi(step.expr) else f"[{self.term(step.expr)}]"
                self.items.append(f"for {self.var(step.var)} in {values}")
                bound.add(step.var)
            elif isinstance(step, Unpack):
                value = self.term(step.value)
                if not isinstance(step.value, Var):
                    value = self.temp()
                    self.items.append(f"for {value} in [{self.term(step.value)}]")
                self.unpack(value, step.pattern, bound)
            else:
                self.aggregate(step)
                bound.add(step.var)

    def unpack(
        self, value: str, pattern: Record | Branch, bound: set[str], row: bool = False, tests: list[str] | None = None
    ) -> None:
        """Match `value` (a Python name) against a record or constructor
        pattern: its shape, then its fields (binding the unbound variables),
        then the fields that test, once every nested pattern has bound its
        variables (`[[Y + 1, _], [Y, Y]]`: Y comes from the second).
        A `row` (a relation's tuple, matched field by field) has its shape."""
        outermost = tests is None
        tests = [] if tests is None else tests
        if isinstance(pattern, Record):
            if not row:
                self.items.append(f"if type({value}) is REC and len({value}) == {len(pattern.args)}")
            targets = []
        else:
            self.items.append(f"if type({value}) is ADT and {value}[0] == {pattern.name!r}")
            targets = ["_"]
        later: list[tuple[str, Term]] = []
        for a in pattern.args:
            if isinstance(a, Var) and a.name not in bound:
                targets.append(self.var(a.name))
                bound.add(a.name)
            else:
                t = self.temp()
                targets.append(t)
                later.append((t, a))
        self.items.append(f"for {', '.join(targets)}, in [{value}]")
        nested = [(t, a) for t, a in later if isinstance(a, (Record, Branch)) and not set(var_names(a, True)) <= bound]
        for t, a in nested:  # first what binds, then what tests (`[X + 1, [X]]`)
            self.unpack(t, a, bound, tests=tests)
        tests += [f"if {t} == {self.term(a)}" for t, a in later if (t, a) not in nested]
        if outermost:
            self.items += tests

    def scan(self, step: Scan, bound: set[str]) -> None:
        atom, rel = step.atom, step.atom.relation
        args = atom.args
        if step.exists and not (step.recent and step.key):
            # nothing it binds is used again: one test, not one match per tuple
            if step.recent:
                self.items.append(f"if {self.inp(('recent', rel))}")
            elif step.key:
                key = self.key([self.term(args[p]) for p in step.key])
                self.items.append(f"if {key} in {self.inp(('index', rel, step.key))}")
            else:
                self.items.append(f"if {self.inp(('stable', rel))}")
            return
        if not step.recent and len(step.key) == len(args):
            items = [self.term(a) for a in args]
            self.items.append(f"if {self.tup(items) if items else '()'} in {self.inp(('stable', rel))}")
            return
        use_index = bool(step.key) and not step.recent
        targets: list[str] = []
        checks: list[tuple[str, Term]] = []
        fresh: set[str] = set()
        for p, a in enumerate(args):
            if use_index and p in step.key:
                targets.append("_")
            elif isinstance(a, Var) and a.name not in bound and a.name not in fresh:
                fresh.add(a.name)
                targets.append(self.var(a.name))
            else:
                t = self.temp()
                targets.append(t)
                checks.append((t, a))
        if step.recent:
            source = self.inp(("recent", rel))
        elif use_index:
            idx = self.inp(("index", rel, step.key))
            key = self.key([self.term(args[p]) for p in step.key])
            source = f"{idx}_get({key}, ())"
            self.getters.add(idx)
        else:
            source = self.inp(("stable", rel))
        target = "_" if not targets else (f"{targets[0]}," if len(targets) == 1 else ", ".join(targets))
        self.items.append(f"for {target} in {source}")
        bound |= fresh
        for t, a in checks:
            self.items.append(f"if {t} == {self.term(a)}")

    def anti(self, step: AntiJoin, bound: set[str]) -> None:
        atom, rel = step.atom, step.atom.relation
        args = atom.args
        if any(isinstance(a, (Record, Branch)) for p, a in enumerate(args) if p not in step.key):
            # `!p([X, _])`: no tuple matches the pattern (its unbound variables existential)
            outer, self.items = self.items, [f"for u in {self.inp(('stable', rel))}"]
            self.unpack("u", Record(args), set(bound), row=True)
            inner, self.items = self.items, outer
            self.items.append(f"if not any(True {' '.join(inner)})")
            return
        if len(step.key) == len(args):
            items = [self.term(a) for a in args]
            self.items.append(f"if {self.tup(items) if items else '()'} not in {self.inp(('stable', rel))}")
            return
        # existential positions: equal local variables must match each other
        first: dict[str, int] = {}
        same: list[str] = []
        for p, a in enumerate(args):
            if p in step.key:
                continue
            assert isinstance(a, Var)
            if a.name in first:
                same.append(f"u[{first[a.name]}] == u[{p}]")
            else:
                first[a.name] = p
        if step.key:
            key = self.key([self.term(args[p]) for p in step.key])
            idx = self.inp(("index", rel, step.key))
            if not same:
                self.items.append(f"if {key} not in {idx}")
            else:
                self.items.append(f"if not any({' and '.join(same)} for u in {idx}.get({key}, ()))")
        elif not same:
            self.items.append(f"if not {self.inp(('stable', rel))}")
        else:
            self.items.append(f"if not any({' and '.join(same)} for u in {self.inp(('stable', rel))})")

    def aggregate(self, step: AggStep) -> None:
        fn = self.inp(("agg", step))
        outer = self.key([self.var(v) for v in step.outer]) if step.outer else "()"
        name = self.var(step.var)
        self.items.append(f"for {name} in [{fn}({outer})]")
        if step.aggregate.func in ("min", "max", "mean"):  # over nothing: no value
            self.items.append(f"if {name} is not None")


def _fetch(spec: Input, name: str, namespace: dict[str, Any]) -> str:
    kind, rel = spec[0], spec[1]
    if kind == "index":
        return f"rels[{rel!r}].index({spec[2]!r})"
    if kind == "agg":
        namespace[f"{name}_step"] = rel
        return f"agg({name}_step)"
    return f"rels[{rel!r}].{kind}"


def _prologue(inputs: dict[Input, str], getters: set[str], namespace: dict[str, Any] | None) -> list[str]:
    """Bound `.get`s of the probed indexes, after fetching the inputs from
    `rels` and `agg` if `namespace` is given (else they are parameters)."""
    fetch = (
        [] if namespace is None else [f"    {name} = {_fetch(spec, name, namespace)}" for spec, name in inputs.items()]
    )
    return fetch + [f"    {g}_get = {g}.get" for g in sorted(getters)]


def compile_round(plans: Sequence[JoinPlan]) -> Callable[..., Any]:
    """One function running the rule plans in order: `(rels, agg, now, spend) ->
    {rule id: matches}` (ids in order of first run), None if no plan ran. A delta variant runs
    only if its frontier is not empty; an input is fetched when first needed. The
    variants count their matches together: the limits are checked every CHUNK
    matches of the round and at its end, not after each variant.

    A frontier that holds its whole relation (`recent` is `stable`, as a
    request's facts in an overlay) is *complete*: the variant reading it
    finds every instance of its rule, so when one of a rule's frontiers is
    complete only the first such variant runs, not the rule's other ones
    (they would find a subset of the same matches again)."""
    inputs: dict[Input, str] = {}
    getters: set[str] = set()
    parts = [
        (plan, gen.join(f"o{plan.rule_id}", "outs", counted=False), gen.used)
        for plan in plans
        for gen in [_Gen(plan, inputs, getters)]
    ]
    namespace: dict[str, Any] = dict(_NAMESPACE)
    outs = list(dict.fromkeys(f"o{plan.rule_id}" for plan in plans))
    lazy = [name for spec, name in inputs.items() if spec[0] != "recent"]
    lines = ["def _round(rels, agg, now, spend=unlimited):", "    outs = {}", "    n = 0", "    w = 0"]
    lines += [f"    {name} = {_fetch(spec, name, namespace)}" for spec, name in inputs.items() if spec[0] == "recent"]
    lines += [f"    {name} = None" for name in lazy + outs]
    frontiers: dict[int, list[str]] = {}  # rule id -> the frontier of each of its delta variants, in order
    for plan, _join, used in parts:
        first = next((spec for spec in used if spec[0] == "recent"), None)
        if first is not None:
            frontiers.setdefault(plan.rule_id, []).append(inputs[first])
    complete = {r: f"c{r[1:]}" for rs in frontiers.values() if len(rs) > 1 for r in rs}
    recent_of = {name: spec[1] for spec, name in inputs.items() if spec[0] == "recent"}
    lines += [f"    {c} = {r} and len({r}) == len(rels[{recent_of[r]!r}].stable)" for r, c in complete.items()]
    seen: dict[int, int] = {}
    for plan, join, used in parts:
        out = f"o{plan.rule_id}"
        block = [f"    if {out} is None:", f"        {out} = outs[{plan.rule_id}] = set()"]
        for spec in used:
            name = inputs[spec]
            if spec[0] != "recent":
                block += [f"    if {name} is None:", f"        {name} = {_fetch(spec, name, namespace)}"]
                block += [f"        {name}_get = {name}.get"] if name in getters else []
        guard = [inputs[spec] for spec in used if spec[0] == "recent"]
        test = guard[0] if guard else ""
        rs = frontiers.get(plan.rule_id, [])
        if guard and len(rs) > 1:  # not if an earlier variant's frontier is complete, nor a later one unless its own is
            k = seen[plan.rule_id] = seen.get(plan.rule_id, -1) + 1
            earlier, later = [complete[r] for r in rs[:k]], [complete[r] for r in rs[k + 1 :]]
            test += f" and not ({' or '.join(earlier)})" if earlier else ""
            test += f" and ({complete[rs[k]]} or not ({' or '.join(later)}))" if later else ""
        lines += [f"    if {test}:"] + ["    " + line for line in block + join] if guard else block + join
    lines += ["    if n:", "        spend(n, outs)", "    return outs or None"]
    exec(_code("\n".join(lines), "<round>"), namespace)
    return namespace["_round"]  # type: ignore[no-any-return]


@lru_cache(maxsize=8192)
def _code(source: str, filename: str) -> Any:
    """`source` compiled, once per process: a code object holds nothing of
    the namespace it runs in, so programs generating the same text (a policy
    checked again, its gates' jump rewrites) share it."""
    return compile(source, filename, "exec")


def compile_plan(plan: JoinPlan, aggregate: str | None = None) -> Compiled:
    """`aggregate` (count/sum/min/max) compiles an aggregate body instead of a rule.

    The join is nested statements adding matches to `out`: `for` loops are
    the scans and probes, `if`s the filters and anti-joins, `for x in [expr]`
    the assignments (`_Gen.join`)."""
    gen = _Gen(plan)
    outer = [gen.var(v) for v in plan.bound_in]
    join = gen.join("out")
    params = list(gen.inputs.values())
    namespace: dict[str, Any] = dict(_NAMESPACE)
    prologue = _prologue(gen.inputs, gen.getters, namespace if aggregate is None else None)
    if aggregate is None:
        signature = "rels, agg, out, now, spend=unlimited"
        epilogue: list[str] = []
    else:
        signature = ", ".join(outer + params + ["now", "spend=unlimited"])
        prologue.append("    out = set()")
        value = "t[-1] for t in out"
        epilogue = [
            {
                "count": "    return len(out)",
                "sum": f"    return sum({value})",
                "min": f"    return min(({value}), default=None)",
                "max": f"    return max(({value}), default=None)",
                "mean": f"    return MEAN([{value}])",
            }[aggregate]
        ]
    label = plan.label.replace("\n", " ")
    source = "\n".join(
        [f"# {label}" + (f"  [delta {plan.delta}]" if plan.delta is not None else ""), f"def _join({signature}):"]
        + prologue
        + join
        + epilogue
    )
    exec(_code(source, f"<plan {plan.rule_id}>"), namespace)
    return Compiled(plan, tuple(gen.inputs), namespace["_join"], source)

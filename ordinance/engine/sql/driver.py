"""The driver: the checked program's strata run as SQL, round by round.

Every relation is a table (`r<i>`, columns `c0…`). A stratum without
recursion is one statement per relation: the union of its rules' selects,
less what the table holds. A recursive stratum runs semi-naive rounds driven
from Python: the first round runs every rule in full; each later one runs,
for each positive body atom over a relation of the stratum, the variant
reading that atom from the last round's delta table (`d<i>`) and every other
literal from the full tables, and keeps what is new (`n<i>`, the dialect's
`round`). Lower strata are complete before a stratum starts, so negations
and aggregates read full tables. Everything is compiled before anything
runs: a construct the compiler refuses is an error up front.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from ...diagnostics import Diagnostic, EvaluationError, Span
from ...rules.checked import CheckedProgram
from .. import prepared
from ..evaluate import ground_value
from .compile import RuleCompiler, _Unready, columns, refusals
from .dialects import Dialect, dialect
from .kinds import infer_kinds

__all__ = ["evaluate_sql", "SqlModel"]

_TYPES: dict[str, set[type]] = {"int": {int}, "float": {float}, "str": {str}}


class SqlModel:
    """The relations a SQL run computed, read back on demand."""

    def __init__(self, program: CheckedProgram, d: Dialect, tables: dict[str, str], arity: dict[str, int]):
        self.program, self.dialect, self.tables, self.arity = program, d, tables, arity
        self.rounds: dict[int, int] = {}  # stratum -> rounds it ran

    @property
    def relations(self) -> tuple[str, ...]:
        return tuple(self.tables)

    def tuples(self, relation: str) -> set[tuple[Any, ...]]:
        table = self.tables.get(relation)
        if table is None:
            return set()
        if not self.arity[relation]:
            return {()} if self.dialect.scalar(f"SELECT count(*) FROM {table}") else set()
        return set(self.dialect.rows(f"SELECT * FROM {table}"))

    def count(self, relation: str) -> int:
        table = self.tables.get(relation)
        return int(self.dialect.scalar(f"SELECT count(*) FROM {table}")) if table else 0

    def close(self) -> None:
        self.dialect.close()

    def __enter__(self) -> "SqlModel":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def evaluate_sql(
    program: CheckedProgram,
    facts: Mapping[str, Iterable[tuple[Any, ...]]] | None = None,
    *,
    now: int = 0,
    engine: str | Dialect = "duckdb",
    **options: Any,
) -> SqlModel:
    """Evaluate `program` over `facts` at `now` on a SQL engine (a dialect
    name, or a `Dialect` on a connection of your own): the same relations as
    `ordinance.engine.evaluate`, or `unsupported_on_backend` up front."""
    given: dict[str, list[tuple[Any, ...]]] = {
        name: rows if isinstance(rows, list) else list(rows) for name, rows in (facts or {}).items()
    }
    for rule in program.rules:
        if not rule.body:
            given.setdefault(rule.head.relation, []).append(tuple(ground_value(a, now) for a in rule.head.args))
    kinds = infer_kinds(program, given)
    found = refusals(program, kinds)
    if found:
        raise EvaluationError(found)
    arity = {name: r.arity for name, r in program.relations.items()}
    for name, rows in given.items():
        sizes = {len(t) for t in rows} | ({arity[name]} if name in arity else set())
        if len(sizes) > 1:
            sizes_text = " and ".join(map(str, sorted(sizes)))
            raise EvaluationError([Diagnostic("arity_mismatch", f"facts of `{name}` have {sizes_text} arguments")])
        arity.setdefault(name, sizes.pop() if sizes else 0)
    index = {name: i for i, name in enumerate(sorted(arity))}
    kind_of = {name: [kinds.column(name, i) for i in range(n)] or ["int"] for name, n in arity.items()}
    data = {name: list(zip(*rows)) if arity[name] else [(0,) * len(rows)] for name, rows in given.items() if rows}
    for name, cols in data.items():
        for i, col in enumerate(cols if arity[name] else ()):
            extra = set(map(type, col)) - set(_TYPES[kind_of[name][i]])
            if extra:
                raise EvaluationError(
                    [
                        Diagnostic(
                            "unsupported_on_backend",
                            f"unsupported on the sql backend: column {i + 1} of `{name}` holds "
                            f"{kind_of[name][i]} values and a {sorted(t.__name__ for t in extra)[0]}",
                        )
                    ]
                )
    d = engine if isinstance(engine, Dialect) else dialect(engine, **options)
    tables = {name: d.quote(f"r{i}") for i, name in enumerate(sorted(arity))}
    try:
        plan = _compile(program, kinds, d, now, tables, index)
    except EvaluationError:
        d.close()
        raise
    model = SqlModel(program, d, tables, arity)
    where = "the facts"
    filled = {name for name, rows in given.items() if rows}
    try:
        d.begin()  # one commit, not one per statement of every round
        for name, table in tables.items():
            d.create(table, columns(arity[name]), kind_of[name], keyed=True)
            if name in data:
                d.load(table, columns(arity[name]), kind_of[name], data[name])
        for st, steps in plan:
            where = ", ".join(f"`{r}`" for r in program.strata[st])
            model.rounds[st] = _run(d, steps, tables, index, arity, kind_of, filled)
        d.commit()
    except Exception as exc:
        mapped = d.failure(exc, where)
        d.close()
        if mapped is not None:
            raise mapped from exc
        raise
    return model


# (relations, recursive, each relation's full select, its variants as (delta relation, select),
# whether each full select is already free of duplicates)
_Steps = tuple[tuple[str, ...], bool, dict[str, str], dict[str, list[tuple[str, str]]], bool]


def _compile(
    program: CheckedProgram, kinds: Any, d: Dialect, now: int, tables: dict[str, str], index: dict[str, int]
) -> list[tuple[int, _Steps]]:
    """Per stratum: its relations, whether it recurses, each relation's full
    select, and each relation's variants as (delta relation, select)."""
    prep = prepared(program)
    c = RuleCompiler(program, kinds, d, now)
    out: list[tuple[int, _Steps]] = []
    try:
        for st in prep.strata:
            full: dict[str, list[str]] = {}
            variants: dict[str, list[tuple[str, str]]] = {}
            for rid in st.rules:
                head = program.rules[rid].head.relation
                full.setdefault(head, []).append(c.select(rid, tables.__getitem__))
                if st.recursive:
                    for p, rel in st.atoms[rid]:
                        if rel in st.relations:
                            delta = d.quote(f"d{index[rel]}")
                            variants.setdefault(head, []).append((rel, c.select(rid, tables.__getitem__, {p: delta})))
            unions = {r: " UNION ALL ".join(qs) for r, qs in full.items()}
            cte = _linear(program, st, c, tables, d) if st.recursive and d.recursive_cte else None
            if cte is not None:
                out.append((st.index, (st.relations, False, {st.relations[0]: cte}, {}, True)))
            else:
                single = all(len(qs) == 1 for qs in full.values())
                out.append((st.index, (st.relations, st.recursive, unions, variants, single)))
    except _Unready as exc:
        raise EvaluationError(
            [
                Diagnostic(
                    "unsupported_on_backend",
                    "unsupported on the sql backend: a rule whose bindings it cannot order",
                    exc.span or Span(),
                )
            ]
        ) from None
    return out


def _linear(program: CheckedProgram, st: Any, c: RuleCompiler, tables: dict[str, str], d: Dialect) -> str | None:
    """A stratum of one relation that exactly one rule reads, once: one
    `WITH RECURSIVE … UNION` query (its working table is the last
    iteration's new tuples, so it is semi-naive). None for any other shape:
    a rule reading the recursive relation twice is where DuckDB's recursive
    CTE loses tuples, so that stays with the rounds."""
    if len(st.relations) != 1:
        return None
    (rel,) = st.relations
    reads = [(rid, p) for rid in st.rules for p, r in st.atoms[rid] if r == rel]
    if len(reads) != 1:
        return None
    rid, p = reads[0]
    base = [c.select(r, tables.__getitem__) for r in st.rules if r != rid]
    step = c.select(rid, tables.__getitem__, {p: "rec"}, distinct=False)  # UNION removes them
    cols = ", ".join(columns(program.relations[rel].arity))
    anchor = " UNION ".join([f"SELECT * FROM {tables[rel]}", *base])
    return f"WITH RECURSIVE rec({cols}) AS ({anchor} UNION {step}) SELECT * FROM rec"


def _run(
    d: Dialect,
    steps: _Steps,
    tables: dict[str, str],
    index: dict[str, int],
    arity: dict[str, int],
    kind_of: dict[str, list[str]],
    filled: set[str],
) -> int:
    """One stratum to its fixpoint; the number of rounds it ran (`filled`:
    the relations given facts of their own)."""
    relations, recursive, unions, variants, distinct = steps
    if not recursive:  # one statement per relation, no delta: what the table held is kept out
        for r, select in unions.items():
            if r in filled:
                d.insert(tables[r], f"SELECT * FROM ({select}) AS q EXCEPT SELECT * FROM {tables[r]}")
            elif distinct:
                d.insert(tables[r], select)
            else:
                d.insert(tables[r], f"SELECT DISTINCT * FROM ({select}) AS q")
        return 1
    names = {r: (d.quote(f"d{index[r]}"), d.quote(f"n{index[r]}")) for r in relations}
    counts = {}
    for r, select in unions.items():
        counts[r] = d.round(tables[r], names[r][1], select)
    rounds = 1
    while recursive:
        for r in relations:
            delta, new = names[r]
            d.drop(delta)
            if r in counts:
                d.rename(new, delta)
            else:
                d.create(delta, columns(arity[r]), kind_of[r])
        live = {r for r, n in counts.items() if n}
        if not live:
            break
        rounds += 1
        counts = {}
        for r in relations:
            parts = [q for rel, q in variants.get(r, ()) if rel in live]
            if parts:
                counts[r] = d.round(tables[r], names[r][1], " UNION ALL ".join(parts))
    for r in relations:
        for t in names[r]:
            d.drop(t)
    return rounds

"""Hypothesis strategies for rule-language ASTs (any syntactically valid tree,
not only checkable ones), for the parse/print round-trip property."""

from __future__ import annotations

from hypothesis import strategies as st

from ordinance.diagnostics import NO_SPAN
from ordinance.rules import ast
from ordinance.rules.functors import FUNCTORS, PREDICATES
from ordinance.values import FOREVER

RESERVED = (
    {"not", "count", "min", "max", "sum", "forever", "_"}
    | set(PREDICATES)
    | {
        "band",
        "bor",
        "bxor",
        "bshl",
        "bshr",
        "bshru",
        "bnot",
        "land",
        "lor",
        "lxor",
        "lnot",
        "cat",
        "strlen",
        "substr",
        "ord",
        "to_string",
        "to_number",
        "to_float",
        "to_unsigned",
        "range",
        "eqrel",
        "btree",
        "btree_delete",
        "brie",
        "inline",
        "no_inline",
        "magic",
        "no_magic",
        "overridable",
        "nil",
    }
)

names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True).filter(lambda s: s not in RESERVED)

# a relation's name: plain, or qualified by instances (`inst.rel`)
relation_names = names | st.lists(names, min_size=2, max_size=3).map(".".join)

symbols = st.builds(ast.Const, st.text(max_size=8), st.just("symbol"))
numbers = st.builds(ast.Const, st.integers(-(2**63) + 1, 2**63 - 1), st.just("number"))
instants = st.builds(ast.Const, st.integers(0, 4102444800) | st.just(FOREVER), st.just("time"))
durations = st.builds(ast.Const, st.integers(-(10**9), 10**9), st.just("duration"))
unsigneds = st.builds(ast.Const, st.integers(0, 2**64 - 1), st.just("unsigned"))
floats = st.builds(ast.Const, st.floats(allow_nan=False, allow_infinity=False), st.just("float"))
consts = symbols | numbers | instants | durations | unsigneds | floats

leaves: st.SearchStrategy[ast.Term] = st.one_of(
    st.builds(ast.Var, names), st.builds(ast.Wildcard), st.builds(ast.Now), consts
)


def atoms_of(term_strategy: st.SearchStrategy[ast.Term]) -> st.SearchStrategy[ast.Atom]:
    return st.builds(ast.Atom, relation_names, st.lists(term_strategy, max_size=4).map(tuple))


def _arity(builtin_name: str, table: dict) -> st.SearchStrategy[int]:  # type: ignore[type-arg]
    b = table[builtin_name]
    return st.integers(len(b.params), b.most or len(b.params) + 2) if b.variadic else st.just(len(b.params))


def calls_of(term_strategy: st.SearchStrategy[ast.Term], table: dict, build):  # type: ignore[no-untyped-def,type-arg]
    """Applications of a builtin of `table` with the number of arguments it takes."""

    @st.composite
    def draw_call(draw):  # type: ignore[no-untyped-def]
        name = draw(st.sampled_from(sorted(table)))
        n = draw(_arity(name, table))
        args = tuple(draw(st.lists(term_strategy, min_size=n, max_size=n)))
        return build(name, args, draw)

    return draw_call()


def literals_of(term_strategy: st.SearchStrategy[ast.Term]) -> st.SearchStrategy[ast.Literal]:
    atom = atoms_of(term_strategy)
    predicates = calls_of(term_strategy, PREDICATES, lambda n, a, draw: ast.Predicate(n, a, draw(st.booleans())))
    plain = st.one_of(
        atom,
        st.builds(ast.Negation, atom),
        st.builds(ast.Comparison, st.sampled_from(ast.COMPARISON_OPS), term_strategy, term_strategy),
        predicates,
    )
    # `(a ; b, c)`: two or more branches (one branch would be mere parentheses)
    branch = st.lists(plain, min_size=1, max_size=2).map(tuple)
    disjunctions = st.builds(ast.Disjunction, st.lists(branch, min_size=2, max_size=3).map(tuple))
    nested = st.builds(ast.Disjunction, st.lists(st.tuples(disjunctions) | branch, min_size=2, max_size=2).map(tuple))
    return plain | disjunctions | nested


def _compound(children: st.SearchStrategy[ast.Term]) -> st.SearchStrategy[ast.Term]:
    binops = st.builds(ast.BinOp, st.sampled_from(ast.ARITH_OPS), children, children)
    calls = calls_of(children, FUNCTORS, lambda n, a, draw: ast.Call(n, a))
    counts = st.builds(
        ast.Aggregate, st.just("count"), st.none(), st.lists(literals_of(children), min_size=1, max_size=2).map(tuple)
    )
    others = st.builds(
        ast.Aggregate,
        st.sampled_from(("min", "max", "sum")),
        children,
        st.lists(literals_of(children), min_size=1, max_size=2).map(tuple),
    )
    # records (`nil` is the one without fields) and constructors `$A(..)`, `$B`
    records = st.builds(ast.Record, st.lists(children, max_size=3).map(tuple))
    branches = st.builds(ast.Branch, names.filter(lambda n: n != "now"), st.lists(children, max_size=3).map(tuple))
    return binops | calls | counts | others | records | branches


terms: st.SearchStrategy[ast.Term] = st.recursive(leaves, _compound, max_leaves=8)


atoms = atoms_of(terms)
literals = literals_of(terms)
bodies = st.lists(literals, min_size=1, max_size=4).map(tuple)

rules = st.builds(ast.Rule, atoms, st.lists(literals, max_size=4).map(tuple)) | st.builds(
    ast.Rule, atoms, bodies, st.just(NO_SPAN), st.lists(atoms, max_size=2).map(tuple)
)
facts = st.builds(ast.Rule, atoms)
decls = st.builds(
    ast.Decl,
    relation_names,
    st.lists(st.builds(ast.Param, names, st.sampled_from(ast.TYPES)), max_size=4).map(tuple),
    st.just(NO_SPAN),
    st.lists(st.sampled_from(("eqrel", "btree", "brie", "inline")), max_size=2).map(tuple),
    st.lists(st.builds(ast.ChoiceKey, st.lists(names, min_size=1, max_size=3).map(tuple)), max_size=2).map(tuple),
)
subsumptions = st.builds(ast.Subsumption, atoms, atoms, bodies)
includes = st.builds(ast.Include, st.text(max_size=12))
tests = st.builds(
    ast.TestBlock,
    st.text(max_size=10),
    st.lists(facts, max_size=3).map(tuple),
    st.lists(st.builds(ast.Expect, atoms, st.booleans()), max_size=3).map(tuple),
    st.none() | st.integers(0, 4102444800),
)
invariants = st.builds(ast.Invariant, st.text(max_size=10), bodies)
hints = st.builds(ast.Hint, names, st.lists(st.lists(consts, max_size=3).map(tuple), max_size=3).map(tuple))

type_decls = st.builds(ast.TypeDecl, names, names, st.just(())) | st.builds(
    ast.TypeDecl, names, st.none(), st.lists(names, min_size=1, max_size=3).map(tuple)
)

# components: type parameters, bases, nested components, instances, overrides
component_types = st.builds(ast.ComponentType, names, st.lists(names, max_size=2).map(tuple))
inits = st.builds(ast.Init, names, component_types)
overrides = st.builds(ast.Override, names)


@st.composite
def draw_component(draw, depth: int = 0):  # type: ignore[no-untyped-def]
    """A component whose items may hold components, two levels deep at most."""
    inner = rules | decls | type_decls | inits | overrides
    if depth < 2:
        inner = inner | draw_component(depth + 1)
    return ast.Component(
        draw(names),
        tuple(draw(st.lists(names, max_size=2))),
        tuple(draw(st.lists(component_types, max_size=2))),
        tuple(draw(st.lists(inner, max_size=4))),
    )


components = draw_component()

params = st.lists(st.builds(ast.Param, names, names), max_size=3).map(tuple)
record_types = st.builds(
    ast.RecordType, names, st.lists(st.builds(ast.Param, names, names), min_size=1, max_size=3).map(tuple)
)
adt_types = st.builds(
    ast.AdtType, names, st.lists(st.builds(ast.BranchDecl, names, params), min_size=1, max_size=3).map(tuple)
)


items = st.one_of(
    rules,
    decls,
    includes,
    tests,
    invariants,
    hints,
    type_decls,
    components,
    inits,
    subsumptions,
    record_types,
    adt_types,
)
programs = st.builds(ast.Program, st.lists(items, max_size=6).map(tuple))

"""The abstract syntax tree: immutable dataclasses with source spans.

Spans never take part in equality, so `parse(print(ast)) == ast` compares
meaning, not layout. Every node is hashable.

Terms:        Var, Wildcard, Const, Now, BinOp, Call, Aggregate, Record, Branch
Literals:     Atom, Negation, Comparison, Predicate, Disjunction, NegatedGroup
Clauses:      Rule (a fact is a rule with an empty body)
Items:        Decl, TypeDecl, RecordType, AdtType, IODirective, Include, Rule,
              TestBlock, Invariant, Hint, Pragma, Subsumption, Component, Init (and
              Override inside a component)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Iterator, Union

from ..diagnostics import NO_SPAN, Span

__all__ = [
    "Subsumption",
    "ChoiceKey",
    "literal_terms",
    "map_terms",
    "map_children",
    "rename_vars",
    "subterms",
    "var_names",
    "Var",
    "Wildcard",
    "Const",
    "Now",
    "BinOp",
    "Call",
    "Aggregate",
    "Term",
    "Atom",
    "Negation",
    "Comparison",
    "Predicate",
    "Disjunction",
    "NegatedGroup",
    "Literal",
    "Rule",
    "Param",
    "Decl",
    "Include",
    "Expect",
    "TestBlock",
    "Invariant",
    "Hint",
    "Pragma",
    "TypeDecl",
    "IODirective",
    "ComponentType",
    "Component",
    "Init",
    "Override",
    "Item",
    "Program",
    "TYPES",
    "ARITH_OPS",
    "COMPARISON_OPS",
    "AGGREGATES",
    "Record",
    "Branch",
    "RecordType",
    "BranchDecl",
    "AdtType",
    "COMPOUND",
]

TYPES = ("symbol", "number", "unsigned", "float", "time", "duration")
ARITH_OPS = ("+", "-", "*", "/", "%", "^", "band", "bor", "bxor", "bshl", "bshr", "bshru", "land", "lor", "lxor")
COMPARISON_OPS = ("=", "!=", "<", "<=", ">", ">=")
AGGREGATES = ("count", "min", "max", "sum", "mean")


def _span() -> Span:
    return field(default=NO_SPAN, compare=False, repr=False)


# ---------------------------------------------------------------- terms


@dataclass(frozen=True, slots=True)
class Var:
    name: str
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Wildcard:
    """`_`: a fresh variable at each occurrence; never in a head."""

    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Const:
    """A constant. `type` is one of TYPES; time and duration values are ints
    (seconds), so `value` is `str` for symbols, `float` for floats and `int`
    otherwise (an unsigned constant holds its value as a plain int)."""

    value: str | int | float
    type: str = "symbol"
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Now:
    """`$now`: the evaluation time the caller passes in."""

    span: Span = _span()


@dataclass(frozen=True, slots=True)
class BinOp:
    op: str  # one of ARITH_OPS
    left: "Term"
    right: "Term"
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Call:
    """A built-in functor applied to arguments: `cat(A, B)`, `strlen(S)`
    (the names and their meaning are in `functors.FUNCTORS`)."""

    func: str
    args: tuple["Term", ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Aggregate:
    """`count : { body }`, `max X : { body }`; `target` is None for count."""

    func: str  # one of AGGREGATES
    target: "Term | None"
    body: tuple["Literal", ...]
    span: Span = _span()


Term = Union[Var, Wildcard, Const, Now, BinOp, Call, Aggregate, "Record", "Branch"]


# ---------------------------------------------------------------- literals


@dataclass(frozen=True, slots=True)
class Atom:
    relation: str
    args: tuple[Term, ...]
    span: Span = _span()

    @property
    def arity(self) -> int:
        return len(self.args)


@dataclass(frozen=True, slots=True)
class Negation:
    """`!atom` or `not atom`."""

    atom: Atom
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Comparison:
    op: str  # one of COMPARISON_OPS
    left: Term
    right: Term
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Predicate:
    """A built-in constraint, `contains(Sub, S)` or `!match(Regex, S)` (the
    names and their meaning are in `functors.PREDICATES`)."""

    name: str
    args: tuple[Term, ...]
    negated: bool = False
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Disjunction:
    """`(a ; b, c)`: holds when one branch (a conjunction) holds. The loader
    expands a rule with disjunctions into one rule per branch (expand.py)."""

    branches: tuple[tuple["Literal", ...], ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class NegatedGroup:
    """`!(a, b)`: holds when the conjunction (which may hold `;`) has no
    match. The loader rewrites it into a negated relation of its own (expand.py)."""

    body: tuple["Literal", ...]
    span: Span = _span()


# A parsed body may also hold a `Disjunction` or a `NegatedGroup`; the loader
# expands them all, so a checked program's literals are these.
Literal = Union[Atom, Negation, Comparison, Predicate]


def literal_terms(lit: Literal | Disjunction) -> tuple[Term, ...]:
    """The terms a literal holds directly (none for a disjunction: its
    branches are literals)."""
    if isinstance(lit, Atom):
        return lit.args
    if isinstance(lit, Negation):
        return lit.atom.args
    if isinstance(lit, Predicate):
        return lit.args
    if isinstance(lit, Comparison):
        return (lit.left, lit.right)
    return ()


def map_terms(lit: Literal, f: Callable[[Term], Term]) -> Literal:
    """`lit` with `f` applied to each term it holds directly (the terms
    `literal_terms` lists)."""
    if isinstance(lit, Atom):
        return Atom(lit.relation, tuple(f(a) for a in lit.args), lit.span)
    if isinstance(lit, Negation):
        return Negation(Atom(lit.atom.relation, tuple(f(a) for a in lit.atom.args), lit.atom.span), lit.span)
    if isinstance(lit, Predicate):
        return Predicate(lit.name, tuple(f(a) for a in lit.args), lit.negated, lit.span)
    if isinstance(lit, Comparison):
        return Comparison(lit.op, f(lit.left), f(lit.right), lit.span)
    return lit


def map_children(t: Term, f: Callable[[Term], Term]) -> Term:
    """`t` with `f` applied to its operands or arguments (an operator, a
    functor call, a record or a constructor); any other term as it is."""
    if isinstance(t, BinOp):
        return replace(t, left=f(t.left), right=f(t.right))
    if isinstance(t, COMPOUND):
        return replace(t, args=tuple(f(a) for a in t.args))
    return t


def rename_vars(t: Term, rename: Callable[[str], str]) -> Term:
    """`t` with each variable named `rename(name)`, inside aggregates too."""
    if isinstance(t, Var):
        return replace(t, name=rename(t.name))
    if isinstance(t, Aggregate):
        target = None if t.target is None else rename_vars(t.target, rename)
        body = tuple(map_terms(lit, lambda x: rename_vars(x, rename)) for lit in t.body)
        return replace(t, target=target, body=body)
    return map_children(t, lambda x: rename_vars(x, rename))


def subterms(t: Term | None, into_aggregates: bool = False) -> Iterator[Term]:
    """The one walk over terms: a term and the terms inside it, depth first;
    an aggregate's target and body are entered only when `into_aggregates`
    is set (nothing for None, an aggregate without a target)."""
    if t is None:
        return
    yield t
    if isinstance(t, BinOp):
        yield from subterms(t.left, into_aggregates)
        yield from subterms(t.right, into_aggregates)
    elif isinstance(t, COMPOUND):
        for a in t.args:
            yield from subterms(a, into_aggregates)
    elif into_aggregates and isinstance(t, Aggregate):
        yield from subterms(t.target, True)
        for lit in t.body:
            for term in literal_terms(lit):
                yield from subterms(term, True)


def var_names(t: Term | None, into_aggregates: bool = False) -> Iterator[str]:
    """The names of the variables in a term, in `subterms` order."""
    return (s.name for s in subterms(t, into_aggregates) if isinstance(s, Var))


# ---------------------------------------------------------------- items


@dataclass(frozen=True, slots=True)
class Rule:
    """`head :- body.`; a fact has an empty body. `more_heads` holds the other
    heads of `a(X), b(X) :- body.` (expanded by the loader into one rule each)."""

    head: Atom
    body: tuple[Literal, ...] = ()
    span: Span = _span()
    more_heads: tuple[Atom, ...] = ()

    @property
    def is_fact(self) -> bool:
        return not self.body


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    type: str  # one of TYPES
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Decl:
    """`.decl name(param: type, ...) qualifier...`; `eqrel` makes the relation
    an equivalence relation (the loader adds its closure rules, expand.py);
    Soufflé's representation qualifiers (`btree`, `brie`, `inline`, ...) are
    accepted and change nothing. `choice` holds the `choice-domain` keys
    (attribute names, see qualify.py in the engine)."""

    name: str
    params: tuple[Param, ...]
    span: Span = _span()
    qualifiers: tuple[str, ...] = ()
    choice: tuple["ChoiceKey", ...] = ()

    @property
    def arity(self) -> int:
        return len(self.params)

    @property
    def types(self) -> tuple[str, ...]:
        return tuple(p.type for p in self.params)


@dataclass(frozen=True, slots=True)
class Include:
    """`.include "continuity"` (a stdlib module) or a relative path."""

    path: str
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Expect:
    """`expect atom.` or `expect not atom.` inside a test block."""

    atom: Atom
    negated: bool = False
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class TestBlock:
    """`test "name" { facts... expect ... }`; `now` is an optional instant."""

    __test__ = False  # not a pytest test class

    name: str
    facts: tuple[Rule, ...]
    expects: tuple[Expect, ...]
    now: int | None = None
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Invariant:
    """`.invariant "name" :- body.`: broken by any binding making body true."""

    name: str
    body: tuple[Literal, ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Hint:
    """`.hint relation(arg: pool)` steering the fuzzer's generators.

    `values[i]` is the tuple of constants (a pool) for argument i, or () for
    no hint at that position."""

    relation: str
    values: tuple[tuple[Const, ...], ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Pragma:
    """`.pragma "key" "value"`: a Soufflé command-line option set in the
    program. `magic-transform` evaluates `run`'s outputs on demand; the
    others change nothing here (lint warns)."""

    key: str
    value: str = ""
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class TypeDecl:
    """`.type Name <: base` (a subtype: `supertype` is set), or `.type Name = A | B`
    (a union of types; one member makes an alias)."""

    name: str
    supertype: str | None = None
    union: tuple[str, ...] = ()
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class IODirective:
    """`.input rel`, `.output rel(IO=file, filename="out.csv")`, `.printsize rel`:
    `kind` is input, output or printsize; `params` the (key, value) pairs."""

    kind: str
    relation: str
    params: tuple[tuple[str, str], ...] = ()
    span: Span = _span()


Item = Union[
    Decl,
    Include,
    Rule,
    TestBlock,
    Invariant,
    Hint,
    Pragma,
    TypeDecl,
    IODirective,
    "RecordType",
    "AdtType",
    "Component",
    "Init",
    "Subsumption",
]


@dataclass(frozen=True, slots=True)
class Program:
    items: tuple[Item, ...]
    file: str | None = field(default=None, compare=False)

    def _of(self, kind: type) -> Iterator:
        return (i for i in self.items if isinstance(i, kind))

    @property
    def decls(self) -> tuple[Decl, ...]:
        return tuple(self._of(Decl))

    @property
    def includes(self) -> tuple[Include, ...]:
        return tuple(self._of(Include))

    @property
    def rules(self) -> tuple[Rule, ...]:
        return tuple(self._of(Rule))

    @property
    def tests(self) -> tuple[TestBlock, ...]:
        return tuple(self._of(TestBlock))

    @property
    def invariants(self) -> tuple[Invariant, ...]:
        return tuple(self._of(Invariant))

    @property
    def hints(self) -> tuple[Hint, ...]:
        return tuple(self._of(Hint))

    @property
    def types(self) -> tuple[TypeDecl, ...]:
        return tuple(self._of(TypeDecl))

    @property
    def io(self) -> tuple[IODirective, ...]:
        return tuple(self._of(IODirective))


# ---------------------------------------------------------------- components


@dataclass(frozen=True, slots=True)
class ComponentType:
    """`Name` or `Name<T1, T2>`: a component named with its type arguments
    (or, after `.comp`, with its type parameters)."""

    name: str
    args: tuple[str, ...] = ()
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Override:
    """`.override rel` inside a component: the base components' rules and
    facts for `rel` (declared `overridable`) are dropped."""

    relation: str
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Init:
    """`.init inst = Name<number>`: an instance of a component, whose
    relations are named `inst.rel` (components.py expands it)."""

    name: str
    component: ComponentType
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Component:
    """`.comp Name<T1, T2> : Base<T1>, Other { items }`: a template of
    declarations, types, rules, I/O directives, components, instances and
    overrides; nothing of it exists until an `.init` instantiates it."""

    name: str
    params: tuple[str, ...]
    bases: tuple[ComponentType, ...]
    items: tuple[Union[Decl, TypeDecl, IODirective, Rule, "Component", Init, Override], ...]
    span: Span = _span()


# ---------------------------------------------------------------- qualifiers


@dataclass(frozen=True, slots=True)
class ChoiceKey:
    """One key of a `choice-domain`: an attribute, or `(a, b)` for several."""

    attributes: tuple[str, ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Subsumption:
    """`r(X) <= r(Y) :- body.`: at each round, a tuple of `r` matching
    `dominated` is removed when a different tuple matching `dominating`
    exists with `body` true (Soufflé's subsumption)."""

    dominated: Atom
    dominating: Atom
    body: tuple[Literal, ...] = ()
    span: Span = _span()

    @property
    def relation(self) -> str:
        return self.dominated.relation

    def as_rule(self) -> Rule:
        """The clause as the rule the checks read: both atoms are premises."""
        return Rule(self.dominated, (self.dominated, self.dominating, *self.body), self.span)


# ---------------------------------------------------------------- records and ADTs


@dataclass(frozen=True, slots=True)
class Record:
    """`[a, b]`: a record built from its fields, or matched against them in a
    body; `nil` (the null record, of every record type) has no fields."""

    args: tuple[Term, ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Branch:
    """`$A(x, y)` (or `$B` without arguments): a value of the algebraic data
    type that declares branch `name`."""

    name: str
    args: tuple[Term, ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class RecordType:
    """`.type Pair = [x: number, y: symbol]`: a record type and its fields."""

    name: str
    fields: tuple[Param, ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class BranchDecl:
    """One branch `A {x: number}` of an algebraic data type."""

    name: str
    fields: tuple[Param, ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class AdtType:
    """`.type T = A {x: number} | B {}`: an algebraic data type."""

    name: str
    branches: tuple[BranchDecl, ...]
    span: Span = _span()


# terms holding argument terms (`args`), for the traversals
COMPOUND = (Call, Record, Branch)

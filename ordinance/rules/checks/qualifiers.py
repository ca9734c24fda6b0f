"""Qualifier pass: `choice-domain` keys, subsumption clauses and counters.

The other passes check a subsumption clause as the rule
`r(X) :- r(X), r(Y), body.` (`Subsumption.as_rule`); this pass checks what
is particular to the qualifiers: a key names attributes of its relation and
leaves one free, both sides of `<=` name one relation, and neither is
combined with `eqrel`. `autoinc()` stands only as an argument of the head
or of a body atom of a rule with a body that reads no relation of its own
stratum (a head's numbered once per binding, see engine/qualify.py; a body
atom's matches nothing; a recursive one would number without end).
"""

from __future__ import annotations

from typing import Iterable

from ...diagnostics import Diagnostic
from .. import ast
from .walk import literal_terms, subterms

__all__ = ["check_qualifiers", "check_counters", "as_rules", "stratum_rules"]


def check_qualifiers(items: tuple[ast.Item, ...]) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    decls: dict[str, ast.Decl] = {}
    for item in items:
        if isinstance(item, ast.Decl):
            decls.setdefault(item.name, item)
            found += _choice(item)
    for item in items:
        if not isinstance(item, ast.Subsumption):
            continue
        low, high = item.dominated.relation, item.dominating.relation
        if low != high:
            found.append(
                Diagnostic(
                    "subsumption",
                    f"both sides of `<=` name one relation, not `{low}` and `{high}`",
                    item.dominating.span,
                )
            )
        if any(
            isinstance(t, ast.Now) for lit in item.body for term in literal_terms(lit) for t in subterms(term, True)
        ):
            found.append(Diagnostic("subsumption", "a subsumption clause cannot read `$now`", item.span))
        decl = decls.get(low)
        if decl is not None and "eqrel" in decl.qualifiers:
            found.append(
                Diagnostic(
                    "subsumption", f"`{low}` is an `eqrel` relation: it cannot have subsumption clauses", item.span
                )
            )
    return found


def _choice(decl: ast.Decl) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    names = [p.name for p in decl.params]
    for choice in decl.choice:
        key = choice.attributes
        for a in key:
            if a not in names:
                found.append(Diagnostic("choice_domain", f"`{a}` is not an attribute of `{decl.name}`", choice.span))
        if len(set(key)) != len(key):
            found.append(
                Diagnostic("choice_domain", f"a `choice-domain` key of `{decl.name}` repeats an attribute", choice.span)
            )
        elif set(key) >= set(names):
            found.append(
                Diagnostic(
                    "choice_domain",
                    f"the `choice-domain` key ({', '.join(key)}) holds every attribute of `{decl.name}`: "
                    "it would choose nothing",
                    choice.span,
                )
            )
    if decl.choice and "eqrel" in decl.qualifiers:
        found.append(
            Diagnostic(
                "choice_domain", f"`{decl.name}` is an `eqrel` relation: it cannot have a `choice-domain`", decl.span
            )
        )
    return found


def as_rules(items: tuple[ast.Item, ...]) -> tuple[ast.Item, ...]:
    """The items with each subsumption clause as the rule the passes check."""
    return tuple(i.as_rule() if isinstance(i, ast.Subsumption) else i for i in items)


def stratum_rules(items: tuple[ast.Item, ...]) -> tuple[ast.Rule, ...]:
    """What stratification adds for subsumption clauses: the relation depends
    on the relations of the body as on negated ones (pruning removes tuples,
    so they must be complete first), but for itself: a body reading the
    relation (`p(X, Y) <= p(X, Z) :- p(Z, Y).`) reads it as every round's
    pruning leaves it; and the relation is derived (it has a stratum)."""
    extra: list[ast.Rule] = []
    for item in items:
        if isinstance(item, ast.Subsumption):
            own = item.dominated.relation
            body: list[ast.Literal] = [
                ast.Negation(lit, lit.span) if isinstance(lit, ast.Atom) and lit.relation != own else lit
                for lit in item.body
            ]
            always = ast.Comparison("=", ast.Const(0, "number"), ast.Const(0, "number"), item.span)
            extra.append(ast.Rule(item.dominated, (*body, always), item.span))
    return tuple(extra)


def _counters(t: ast.Term) -> list[ast.Call]:
    return [s for s in subterms(t, True) if isinstance(s, ast.Call) and s.func == "autoinc"]


def check_counters(items: tuple[ast.Item, ...], strata: tuple[tuple[str, ...], ...]) -> list[Diagnostic]:
    """`autoinc()` as an argument of a rule's head or of an atom of its body
    (negated too), in a rule that reads no relation of its own stratum:
    Soufflé's rule (SemanticChecker.cpp refuses a counter anywhere in a
    recursive clause), with the whole argument required here."""
    found: list[Diagnostic] = []
    stratum = {name: i for i, names in enumerate(strata) for name in names}
    misplaced = "`autoinc()` stands only as an argument of an atom of a rule with a body"

    def refuse(terms: Iterable[ast.Term]) -> None:
        for term in terms:
            found.extend(Diagnostic("autoinc", misplaced, c.span) for c in _counters(term))

    def atom_args(args: tuple[ast.Term, ...]) -> list[ast.Call]:
        """The counters that are a whole argument; any other is refused."""
        whole: list[ast.Call] = []
        for arg in args:
            counters = _counters(arg)
            if counters == [arg]:
                whole.append(counters[0])
            else:
                refuse((arg,))
        return whole

    for item in items:
        if isinstance(item, ast.Rule):
            counters: list[ast.Call] = []
            for lit in item.body:
                atom = lit.atom if isinstance(lit, ast.Negation) else lit
                if isinstance(atom, ast.Atom):
                    counters += atom_args(atom.args)
                else:
                    refuse(literal_terms(lit))
            if item.body:
                counters += atom_args(item.head.args)
            else:
                refuse(item.head.args)
            recursive = any(
                isinstance(lit, ast.Atom)
                and lit.relation in stratum
                and stratum[lit.relation] == stratum.get(item.head.relation)
                for lit in item.body
            )
            if recursive:
                endless = f"`autoinc()` in a recursive rule of `{item.head.relation}` would number without end"
                found.extend(Diagnostic("autoinc", endless, c.span) for c in counters)
        elif isinstance(item, ast.Invariant):
            refuse(t for lit in item.body for t in literal_terms(lit))
        elif isinstance(item, ast.Subsumption):
            refuse(t for lit in (item.dominated, item.dominating, *item.body) for t in literal_terms(lit))
        elif isinstance(item, ast.TestBlock):
            refuse(t for fact in item.facts for t in literal_terms(fact.head))
    return found

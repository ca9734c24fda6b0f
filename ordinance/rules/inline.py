"""`inline` relations, as Soufflé has them: a positive atom of a relation
declared `inline` is replaced, where it is used, by the bodies of the
relation's rules (one rule per rule of the relation), their variables renamed
apart and their head arguments equated with the atom's. So
`query(x) :- nat_pair(x, x), x < 2.` never computes the `nat(x), nat(y)`
cross product `nat_pair` stands for.

An inline relation used nowhere but in positive atoms of rules is not
evaluated at all (queries of it find nothing); one also used elsewhere (a
negation, an aggregate, an `.output`, a test) keeps its rules. An inline
relation that depends on itself through inline relations is `unsupported`.
"""

from __future__ import annotations

from dataclasses import replace

from ..diagnostics import Diagnostic
from . import ast

from .witness import FreshNames, rule_vars

__all__ = ["inline_relations"]

_MAX_RULES = 10_000  # rules one rule may become (the product of the inlined relations' rules)


def _inline_names(items: list[ast.Item]) -> set[str]:
    return {i.name for i in items if isinstance(i, ast.Decl) and "inline" in i.qualifiers}


def _recursive(name: str, rules: dict[str, list[ast.Rule]], inline: set[str]) -> bool:
    seen, todo = set(), [name]
    while todo:
        for rule in rules.get(todo.pop(), ()):
            for lit in rule.body:
                atom = lit.atom if isinstance(lit, ast.Negation) else lit
                if isinstance(atom, ast.Atom) and atom.relation in inline:
                    if atom.relation == name:
                        return True
                    if atom.relation not in seen:
                        seen.add(atom.relation)
                        todo.append(atom.relation)
    return False


def _expand(rule: ast.Rule, rules: dict[str, list[ast.Rule]], inline: set[str]) -> list[ast.Rule]:
    """`rule` with its positive inline atoms replaced, one at a time."""
    for i, lit in enumerate(rule.body):
        if isinstance(lit, ast.Atom) and lit.relation in inline:
            out: list[ast.Rule] = []
            for definition in rules.get(lit.relation, ()):
                outer = rule_vars(rule)
                names = FreshNames(outer | rule_vars(definition))
                renamed = {
                    v: names.fresh(v) for v in sorted(rule_vars(definition))
                }  # (sorted: the same names in every process)
                head = list(zip(lit.args, definition.head.args))
                took: set[int] = set()  # a head variable's first match with a variable: renamed to it, no equality
                for k, (a, h) in enumerate(head):
                    if isinstance(a, ast.Var) and isinstance(h, ast.Var) and renamed[h.name] not in outer:
                        renamed[h.name] = a.name
                        took.add(k)

                def rename(t: ast.Term) -> ast.Term:
                    return ast.rename_vars(t, lambda n: renamed.get(n, n))

                body: list[ast.Literal] = [ast.map_terms(b, rename) for b in definition.body]
                equal: list[ast.Literal] = [
                    ast.Comparison("=", a, rename(h), a.span)
                    for k, (a, h) in enumerate(head)
                    if not isinstance(a, ast.Wildcard) and k not in took
                ]
                spliced = rule.body[:i] + tuple(body + equal) + rule.body[i + 1 :]
                out += _expand(replace(rule, body=spliced), rules, inline)
                if len(out) > _MAX_RULES:
                    break
            return out
    return [rule]


def _reads(term: ast.Term, name: str) -> bool:
    """Whether `term` is an aggregate whose body reads `name`."""
    if not isinstance(term, ast.Aggregate):
        return False
    for lit in term.body:
        atom = lit.atom if isinstance(lit, ast.Negation) else lit
        if isinstance(atom, ast.Atom) and atom.relation == name:
            return True
    return False


def _used_otherwise(name: str, items: list[ast.Item]) -> bool:
    """Whether `name` is read other than by a positive atom of a rule's body."""
    for item in items:
        if isinstance(item, ast.IODirective) and item.relation == name and item.kind != "input":
            return True
        if isinstance(item, (ast.TestBlock, ast.Invariant)):
            return True  # an expectation or invariant may read it: keep it evaluated
        if isinstance(item, ast.Rule):
            for lit in item.body:
                if isinstance(lit, ast.Negation) and lit.atom.relation == name:
                    return True
                terms = (sub for t in ast.literal_terms(lit) for sub in ast.subterms(t, into_aggregates=True))
                if any(_reads(sub, name) for sub in terms):
                    return True
    return False


def inline_relations(items: list[ast.Item], diagnostics: list[Diagnostic]) -> list[ast.Item]:
    inline = _inline_names(items)
    if not inline:
        return items
    rules: dict[str, list[ast.Rule]] = {}
    for item in items:
        if isinstance(item, ast.Rule) and item.head.relation in inline:
            rules.setdefault(item.head.relation, []).append(item)
    for name in sorted(inline):
        if _recursive(name, rules, inline):
            decl = next(i for i in items if isinstance(i, ast.Decl) and i.name == name)
            diagnostics.append(
                Diagnostic(
                    "unsupported", f"`{name}` is `inline` and depends on itself: it cannot be inlined", decl.span
                ),
            )
            return items
    kept = {name for name in inline if _used_otherwise(name, items)}
    out: list[ast.Item] = []
    for item in items:
        if isinstance(item, ast.Rule) and item.head.relation in inline - kept:
            continue
        if isinstance(item, ast.Rule) and item.body:
            out.extend(_expand(item, rules, inline))
        else:
            out.append(item)
    return out

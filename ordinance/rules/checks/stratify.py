"""Stratification: the dependency graph of relations, with networkx.

An edge `body relation -> head relation` is negative when the body mentions
the relation under negation or inside an aggregate. Strongly connected
components are the strata, in topological order; a negative edge inside a
component is `cyclic_negation`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...diagnostics import Diagnostic, Span
from .. import ast
from .walk import body_atoms, where

if TYPE_CHECKING:  # imported when a policy is checked, not when a cached one is loaded
    import networkx as nx

__all__ = ["Stratification", "stratify", "dependency_graph"]


@dataclass
class Stratification:
    strata: tuple[tuple[str, ...], ...]
    diagnostics: list[Diagnostic] = field(default_factory=list)


def dependency_graph(rules: tuple[ast.Rule, ...]) -> nx.DiGraph:
    """Nodes are relations; edge data: `rules` (ids), `negative` [(rule id, node)]."""
    import networkx as nx

    graph = nx.DiGraph()
    for rule_id, rule in enumerate(rules):
        head = rule.head.relation
        graph.add_node(head)
        for atom, role, holder in body_atoms(rule.body):
            if not graph.has_edge(atom.relation, head):
                graph.add_edge(atom.relation, head, rules=[], negative=[])
            data = graph.edges[atom.relation, head]
            if rule_id not in data["rules"]:
                data["rules"].append(rule_id)
            if role in ("negated", "aggregate"):
                data["negative"].append((rule_id, holder))
    return graph


def _cycle(graph: nx.DiGraph, src: str, dst: str) -> list[str]:
    """`dst` depends on `src`; the cycle in depends-on order, from `dst` back to it."""
    import networkx as nx

    back = nx.shortest_path(graph, dst, src)  # src depends (transitively) on dst
    return [dst] + list(reversed(back))


def stratify(rules: tuple[ast.Rule, ...]) -> Stratification:
    import networkx as nx

    graph = dependency_graph(rules)
    order = {name: i for i, name in enumerate(graph.nodes)}  # first mention
    condensed = nx.condensation(graph)
    members = condensed.graph["mapping"]  # relation -> component id
    diagnostics: list[Diagnostic] = []
    for src, dst, data in graph.edges(data=True):
        if members[src] != members[dst]:
            continue
        for _rule_id, holder in data["negative"]:
            cycle = _cycle(graph, src, dst)
            involved: list[int] = []
            for a, b in zip(cycle, cycle[1:]):
                first = graph.edges[b, a]["rules"][0]
                if first not in involved:
                    involved.append(first)
            span: Span = holder.span
            how = "negation of" if isinstance(holder, ast.Negation) else f"`{holder.func}` over"  # type: ignore[union-attr]
            places = [where(rules[i].span, span) for i in sorted(involved)]
            if all(p.startswith("line ") for p in places) and len(places) > 1:
                rules_at = "rules at lines " + ", ".join(p[5:] for p in places)
            else:
                rules_at = ("rule at " if len(places) == 1 else "rules at ") + ", ".join(places)
            diagnostics.append(
                Diagnostic(
                    "cyclic_negation",
                    f"{how} `{src}` is on a recursive cycle " + " -> ".join(f"`{r}`" for r in cycle) + f" ({rules_at})",
                    span,
                )
            )
    derived = {r.head.relation for r in rules if r.body}
    strata: list[tuple[str, ...]] = []
    for component in nx.lexicographical_topological_sort(
        condensed, key=lambda c: min(order[n] for n in condensed.nodes[c]["members"])
    ):
        names = sorted((n for n in condensed.nodes[component]["members"] if n in derived), key=order.__getitem__)
        if names:
            strata.append(tuple(names))
    diagnostics.sort(key=lambda d: (d.span.file or "", d.span.line, d.span.column))
    return Stratification(tuple(strata), diagnostics)

"""Render proofs (`ProofNode`) and why-not answers (`WhyNot`) as JSON, text, DOT.

`annotate(relation, tuple) -> str | None` decorates fact leaves (the store
adds source, validity and revision).
"""

from __future__ import annotations

from typing import Any, Callable

import networkx as nx

from .provenance import Failure, ProofNode, WhyNot
from .text import value_text

__all__ = ["to_json", "to_text", "to_dot", "graph_to_dot", "Annotate"]

Annotate = Callable[[str, tuple[Any, ...]], "str | None"]


def _atom(relation: str | None, t: tuple[Any, ...] | None) -> str:
    args = ", ".join("_" if v is None else value_text(v) for v in (t or ()))
    return f"{relation}({args})"


def _bindings(b: tuple[tuple[str, Any], ...]) -> str:
    return ", ".join(f"{k}={value_text(v)}" for k, v in b)


def to_json(node: ProofNode | WhyNot) -> dict[str, Any]:
    if isinstance(node, WhyNot):
        return {
            "relation": node.relation,
            "tuple": list(node.tuple),
            "holds": node.holds,
            "failures": [_failure_json(f) for f in node.failures],
        }
    out: dict[str, Any] = {"kind": node.kind}
    if node.relation is not None:
        out["relation"] = node.relation
        out["tuple"] = list(node.tuple or ())
    if node.kind == "rule":
        out.update(rule=node.rule, rule_text=node.rule_text, height=node.height)
    if node.bindings:
        out["bindings"] = {k: v for k, v in node.bindings}
    if node.text:
        out["text"] = node.text
    if node.children:
        out["children"] = [to_json(c) for c in node.children]
    return out


def _failure_json(f: Failure) -> dict[str, Any]:
    return {
        "rule": f.rule,
        "rule_text": f.rule_text,
        "bindings": {k: v for k, v in f.bindings},
        "literal": f.literal,
        "kind": f.kind,
        "needed": [{"relation": r, "tuple": list(t)} for r, t in f.needed],
        "children": [to_json(c) for c in f.children],
    }


def _label(node: ProofNode, annotate: Annotate | None) -> str:
    if node.kind == "rule":
        b = _bindings(node.bindings)
        return f"{_atom(node.relation, node.tuple)}  by rule {node.rule}: {node.rule_text}" + (f"  [{b}]" if b else "")
    if node.kind == "fact":
        note = annotate(node.relation or "", node.tuple or ()) if annotate else None
        return f"{_atom(node.relation, node.tuple)}  fact" + (f"  ({note})" if note else "")
    if node.kind == "absent":
        return f"{node.text}  absent"
    if node.kind == "aggregate":
        return f"{node.text}  aggregate"
    return f"{node.text}  holds"


def to_text(node: ProofNode | WhyNot, annotate: Annotate | None = None) -> str:
    """An indented tree, one line per node."""
    lines: list[str] = []
    if isinstance(node, WhyNot):
        _why_not_text(node, 0, lines)
    else:
        _proof_text(node, 0, lines, annotate)
    return "\n".join(lines)


def _proof_text(node: ProofNode, depth: int, lines: list[str], annotate: Annotate | None) -> None:
    lines.append("  " * depth + _label(node, annotate))
    for c in node.children:
        _proof_text(c, depth + 1, lines, annotate)


def _why_not_text(node: WhyNot, depth: int, lines: list[str]) -> None:
    pad = "  " * depth
    atom = _atom(node.relation, node.tuple)
    if node.holds:
        lines.append(f"{pad}{atom} holds")
        return
    if not node.failures:
        lines.append(f"{pad}{atom} is not a fact and no rule derives it")
        return
    lines.append(f"{pad}{atom} does not hold:")
    for f in node.failures:
        b = _bindings(f.bindings)
        lines.append(f"{pad}  rule {f.rule}: {f.rule_text}" + (f"  [{b}]" if b else ""))
        what = {"missing": "no such fact", "present": "blocked by", "false": "is false", "empty": "aggregates nothing"}
        needed = ", ".join(_atom(r, t) for r, t in f.needed)
        lines.append(f"{pad}    fails at {f.literal}: {what[f.kind]}" + (f" {needed}" if f.kind == "present" else ""))
        if f.kind == "missing" and needed:
            lines.append(f"{pad}    would hold with {needed}")
        for c in f.children:
            _why_not_text(c, depth + 3, lines)


def to_dot(node: ProofNode | WhyNot) -> str:
    """A DOT digraph (built as a networkx DiGraph; edges point to premises)."""
    g: nx.DiGraph = nx.DiGraph()
    counter = iter(range(1 << 30))

    def proof(n: ProofNode) -> str:
        name = f"n{next(counter)}"
        g.add_node(name, label=_label(n, None), shape="box" if n.kind == "rule" else "ellipse")
        for c in n.children:
            g.add_edge(name, proof(c))
        return name

    def missing(w: WhyNot) -> str:
        name = f"n{next(counter)}"
        g.add_node(name, label=_atom(w.relation, w.tuple) + (" holds" if w.holds else " does not hold"), shape="box")
        for f in w.failures:
            fname = f"n{next(counter)}"
            g.add_node(fname, label=f"rule {f.rule} fails at {f.literal} ({f.kind})", shape="ellipse")
            g.add_edge(name, fname)
            for c in f.children:
                g.add_edge(fname, missing(c))
        return name

    if isinstance(node, WhyNot):
        missing(node)
    else:
        proof(node)
    return graph_to_dot(g, "proof", "rankdir=TB;")


def graph_to_dot(g: nx.DiGraph, name: str, *settings: str) -> str:
    """A graph whose nodes carry `label` and `shape` as Graphviz DOT text."""
    lines = [f"digraph {name} {{", *(f"  {line}" for line in settings)]
    for n, data in g.nodes(data=True):
        lines.append(f"  {n} [label={_quote(data['label'])}, shape={data['shape']}];")
    for a, b in g.edges():
        lines.append(f"  {a} -> {b};")
    lines.append("}")
    return "\n".join(lines)


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'

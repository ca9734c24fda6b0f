"""Render proofs (`ProofNode`) and why-not answers (`WhyNot`) as JSON, text, DOT.

`annotate(relation, tuple) -> str | None` decorates fact leaves (the store
adds source, validity and revision). Given the `program`, text and DOT show
values by their declared types (instants, durations); JSON stays raw.
"""

from __future__ import annotations

from typing import Any, Callable

import networkx as nx

from ..rules.checked import CheckedProgram
from .provenance import Failure, ProofNode, WhyNot
from .text import Typed, value_text

__all__ = ["to_json", "to_text", "to_dot", "graph_to_dot", "Annotate"]

Annotate = Callable[[str, tuple[Any, ...]], "str | None"]


def _atom(relation: str | None, t: tuple[Any, ...] | None, typed: Typed | None = None) -> str:
    if typed is not None:
        return typed.atom(relation, t)
    args = ", ".join("_" if v is None else value_text(v) for v in (t or ()))
    return f"{relation}({args})"


def _bindings(b: tuple[tuple[str, Any], ...], rule: int | None = None, typed: Typed | None = None) -> str:
    if typed is not None:
        return typed.bindings(rule, b)
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


def _label(node: ProofNode, annotate: Annotate | None, typed: Typed | None = None, parent: ProofNode | None = None) -> str:
    """One node's line; `parent` is the rule node whose body it is in."""
    atom = _atom(node.relation, node.tuple, typed)
    if node.kind == "rule":
        b = _bindings(node.bindings, node.rule, typed)
        return f"{atom}  by rule {node.rule}: {node.rule_text}" + (f"  [{b}]" if b else "")
    if node.kind == "fact":
        note = annotate(node.relation or "", node.tuple or ()) if annotate else None
        return f"{atom}  fact" + (f"  ({note})" if note else "")
    text = node.text
    if typed is not None and node.kind != "aggregate":
        text = typed.literal(text, parent.rule, parent.bindings) if parent is not None else typed.literal(text, None)
    word = {"absent": "absent", "aggregate": "aggregate"}.get(node.kind, "holds")
    return f"{text}  {word}"


def to_text(node: ProofNode | WhyNot, annotate: Annotate | None = None, program: CheckedProgram | None = None) -> str:
    """An indented tree, one line per node; with `program`, values are
    shown by their declared types (`2026-08-14T10:05:00Z`, `4h`)."""
    lines: list[str] = []
    typed = None if program is None else Typed(program)
    if isinstance(node, WhyNot):
        _why_not_text(node, 0, lines, typed)
    else:
        _proof_text(node, 0, lines, annotate, typed, None)
    return "\n".join(lines)


def _proof_text(
    node: ProofNode, depth: int, lines: list[str], annotate: Annotate | None, typed: Typed | None, parent: ProofNode | None
) -> None:
    lines.append("  " * depth + _label(node, annotate, typed, parent))
    for c in node.children:
        _proof_text(c, depth + 1, lines, annotate, typed, node)


def _why_not_text(node: WhyNot, depth: int, lines: list[str], typed: Typed | None) -> None:
    pad = "  " * depth
    atom = _atom(node.relation, node.tuple, typed)
    if node.holds:
        lines.append(f"{pad}{atom} holds")
        return
    if not node.failures:
        lines.append(f"{pad}{atom} is not a fact and no rule derives it")
        return
    lines.append(f"{pad}{atom} does not hold:")
    for f in node.failures:
        b = _bindings(f.bindings, f.rule, typed)
        lines.append(f"{pad}  rule {f.rule}: {f.rule_text}" + (f"  [{b}]" if b else ""))
        what = {"missing": "no such fact", "present": "blocked by", "false": "is false", "empty": "aggregates nothing"}
        needed = ", ".join(_atom(r, t, typed) for r, t in f.needed)
        literal = f.literal if typed is None else typed.literal(f.literal, f.rule, f.bindings)
        lines.append(f"{pad}    fails at {literal}: {what[f.kind]}" + (f" {needed}" if f.kind == "present" else ""))
        if f.kind == "missing" and needed:
            lines.append(f"{pad}    would hold with {needed}")
        for c in f.children:
            _why_not_text(c, depth + 3, lines, typed)


def to_dot(node: ProofNode | WhyNot, program: CheckedProgram | None = None) -> str:
    """A DOT digraph (built as a networkx DiGraph; edges point to premises)."""
    g: nx.DiGraph = nx.DiGraph()
    counter = iter(range(1 << 30))
    typed = None if program is None else Typed(program)

    def proof(n: ProofNode, parent: ProofNode | None = None) -> str:
        name = f"n{next(counter)}"
        g.add_node(name, label=_label(n, None, typed, parent), shape="box" if n.kind == "rule" else "ellipse")
        for c in n.children:
            g.add_edge(name, proof(c, n))
        return name

    def missing(w: WhyNot) -> str:
        name = f"n{next(counter)}"
        g.add_node(name, label=_atom(w.relation, w.tuple, typed) + (" holds" if w.holds else " does not hold"), shape="box")
        for f in w.failures:
            fname = f"n{next(counter)}"
            g.add_node(fname, label=f"rule {f.rule} fails at {f.literal if typed is None else typed.literal(f.literal, f.rule, f.bindings)} ({f.kind})", shape="ellipse")
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

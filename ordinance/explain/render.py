"""User-facing explanations of gate decisions: text tree, JSON, DOT.

Each EDB leaf of a proof is annotated from the store: the event that put
the fact there (revision, source, author), and its validity window when the
fact is about a claim (`claim_valid`) or carries a time of its own (leases,
stops, receipts, observations). Request facts are marked as the request's
own; facts written in the policy as policy facts.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Mapping

import networkx as nx

from ..engine import to_text
from ..engine.explain import graph_to_dot
from ..facts import Store
from ..gate.decision import Decision, Reason
from ..rules.checked import CheckedProgram
from ..values import format_instant

__all__ = ["annotator", "explain_text", "explain_json", "explain_dot", "decision_graph"]

Annotate = Callable[[str, tuple[Any, ...]], "str | None"]

# relation -> the argument positions holding instants worth showing
_TIMES = {
    "lease": ("expires", 3),
    "stop": ("from", 1),
    "receipt": ("at", 3),
    "observation": ("at", 2),
    "retest_after": ("from", 1),
}


def _window(facts: Mapping[str, Iterable[tuple[Any, ...]]], claim: Any) -> str | None:
    for c, start, end in facts.get("claim_valid", ()):
        if c == claim:
            return f"valid [{format_instant(start)}, {format_instant(end)})"
    return None


def annotator(store: Store, revision: int, facts: Mapping[str, Iterable[tuple[Any, ...]]] | None = None) -> Annotate:
    """An `annotate(relation, tuple)` for the engine's renderers: where the
    fact came from in the store at `revision`, and when it is valid. Reads
    only the events behind the facts it is asked about (`Store.asserting`);
    `facts` (default: the replay, read on first need) gives claim windows."""
    origins: dict[tuple[str, tuple[Any, ...]], Any] = {}
    replay: list[Mapping[str, Iterable[tuple[Any, ...]]]] = [] if facts is None else [facts]

    def origin(relation: str, t: tuple[Any, ...]) -> Any:
        key = (relation, tuple(t))
        if key not in origins:
            found = store.asserting(relation, t, revision)
            origins[key] = found[0] if found else None
        return origins[key]

    def windows() -> Mapping[str, Iterable[tuple[Any, ...]]]:
        if not replay:
            replay.append(store.facts(revision))
        return replay[0]

    def annotate(relation: str, t: tuple[Any, ...]) -> str | None:
        parts: list[str] = []
        event = origin(relation, t)
        if event is not None:
            parts.append(f"r{event.seq} {event.kind} by {event.author or '?'} via {event.source or '?'}")
        elif relation.startswith("request"):
            parts.append("this request")
        else:
            parts.append("policy fact")
        if relation.startswith("claim") and t:
            window = _window(windows(), t[0])
            if window is not None and relation != "claim_valid":
                parts.append(window)
        if relation == "claim_valid" and len(t) == 3:
            parts.append(f"valid [{format_instant(t[1])}, {format_instant(t[2])})")
        if relation in _TIMES:
            word, i = _TIMES[relation]
            if i < len(t) and isinstance(t[i], int):
                parts.append(f"{word} {format_instant(t[i])}")
        return "; ".join(parts)

    return annotate


def _headline(d: Decision) -> list[str]:
    r = d.request
    word = "ALLOWED" if d.allowed else "DENIED"
    return [
        f"{word} {r.id}: {r.agent} wants {r.kind} on {r.target} "
        f"(scope {r.authority_scope}, epoch {r.epoch})",
        f"  at revision {d.revision}, now {format_instant(d.now)}, policy {d.policy_hash[:12]}",
    ]


def _reason_title(r: Reason) -> str:
    if r.kind == "missing-permit":
        return f"no permit ({r.code}: no current grant in {r.detail}); why not:"
    if r.kind == "error":
        return f"error {r.code}: {r.detail}"
    if r.kind == "flag":
        return f"flag {r.code} {r.detail} (does not block)"
    return f"forbid {r.code} {r.detail}"


def explain_text(d: Decision, annotate: Annotate | None = None, program: CheckedProgram | None = None) -> str:
    """The decision as a terminal tree: headline, then each reason with the
    rule and the facts that made it (each fact with its store annotation;
    with the policy's `program`, values shown by their declared types)."""
    lines = _headline(d)
    items = list(d.reasons) + list(d.flags)
    for n, r in enumerate(items, 1):
        lines.append(f"  {n}. {_reason_title(r)}")
        if r.proof is not None:
            body = to_text(r.proof, annotate=annotate, program=program)
            lines.extend("      " + line for line in body.splitlines())
    if d.allowed and not d.flags:
        lines.append("  a permit holds and no forbid does")
    return "\n".join(lines)


def _annotate_json(node: Any, annotate: Annotate | None) -> Any:
    """Copy of a proof's JSON with `annotation` on every fact leaf."""
    if isinstance(node, list):
        return [_annotate_json(n, annotate) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _annotate_json(v, annotate) for k, v in node.items()}
    if annotate is not None and node.get("kind") == "fact" and isinstance(node.get("tuple"), list):
        note = annotate(str(node.get("relation")), tuple(node["tuple"]))
        if note:
            out["annotation"] = note
    return out


def explain_json(d: Decision, annotate: Annotate | None = None) -> dict[str, Any]:
    """The decision's JSON with annotated proofs."""
    out = d.to_json(proofs=True)
    for key in ("reasons", "flags"):
        for item in out[key]:
            if "proof" in item:
                item["proof"] = _annotate_json(item["proof"], annotate)
    return out


def _atom(node: Mapping[str, Any]) -> str:
    return f"{node.get('relation')}({', '.join(json.dumps(v) for v in node.get('tuple', []))})"


def decision_graph(d: Decision, annotate: Annotate | None = None) -> nx.DiGraph:
    """The decision as a networkx graph: decision -> reasons -> proof nodes
    (rules, facts with their annotations, absent premises; for a missing
    permit, each rule's failing literal and the facts it would need)."""
    g = nx.DiGraph()
    data = explain_json(d, annotate)
    g.add_node("decision", label=("ALLOWED " if d.allowed else "DENIED ") + d.request.id, shape="box")
    names = (f"n{i}" for i in range(1 << 30))

    def add(label: str, parent: str, shape: str = "ellipse") -> str:
        name = next(names)
        g.add_node(name, label=label, shape=shape)
        g.add_edge(parent, name)
        return name

    def proof(node: Mapping[str, Any], parent: str) -> None:
        kind = node.get("kind")
        if kind == "rule":
            name = add(f"{_atom(node)}\nrule {node.get('rule')}: {node.get('rule_text')}", parent, "box")
        elif kind == "fact":
            note = node.get("annotation")
            name = add(_atom(node) + (f"\n{note}" if note else ""), parent)
        else:
            name = add(f"{node.get('text', '')} ({kind})", parent)
        for child in node.get("children", []):
            proof(child, name)

    def why_not(node: Mapping[str, Any], parent: str) -> None:
        name = add(f"{_atom(node)} {'holds' if node.get('holds') else 'does not hold'}", parent, "box")
        for f in node.get("failures", []):
            fname = add(f"rule {f['rule']} fails at {f['literal']} ({f['kind']})", name)
            for need in f.get("needed", []):
                add(f"needs {_atom(need)}", fname, "note")
            for child in f.get("children", []):
                why_not(child, fname)

    for item in data["reasons"] + data["flags"]:
        rname = add(f"{item['kind']} {item['code']} {item['detail']}", "decision", "box")
        p = item.get("proof")
        if isinstance(p, dict):
            (why_not if "failures" in p else proof)(p, rname)
    return g


def explain_dot(d: Decision, annotate: Annotate | None = None) -> str:
    """The decision graph in Graphviz DOT."""
    return graph_to_dot(decision_graph(d, annotate), "decision", "node [fontname=monospace];")

"""Proofs (`ProofNode`) and why-not answers (`WhyNot`) as text, JSON and DOT.

The one renderer of explanations: the CLI's `why` and `why-not`, the gate's
decisions, `ordinance test`, the pytest plugin and the fuzzer's reports all
print through it. Given the checked `program`, every value prints by its type
(`format_value`: instants, durations, quoted and escaped symbols; `_` for an
unknown value), from the declared relation types and the variable types the
program infers once per rule. Rules are cited by id and `file:line`.

`annotate(relation, tuple) -> str | None` decorates fact leaves (the store
says which event wrote the fact; a fuzz report, which step of its history).

Walks use an explicit stack, so a proof thousands of steps deep renders in
full: text indentation stops growing at `MAX_INDENT` levels and each deeper
line says its depth; JSON nests `MAX_JSON_DEPTH` levels and then ends the
branch in an `elided` node naming the fact, whose own proof `why` gives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator

from ..engine.provenance import Failure, ProofNode, WhyNot
from ..rules.checked import CheckedProgram
from ..values import escape, format_value, json_value

if TYPE_CHECKING:  # networkx is imported when a graph is drawn: it costs a command's start 0.2 s
    import networkx as nx

__all__ = [
    "Annotate",
    "Renderer",
    "to_text",
    "to_json",
    "to_dot",
    "graph_to_dot",
    "text_lines",
    "MAX_INDENT",
    "MAX_JSON_DEPTH",
]

Annotate = Callable[[str, tuple[Any, ...]], "str | None"]
Bindings = tuple[tuple[str, Any], ...]
MAX_INDENT = 40  # levels of indentation in text; deeper lines say their depth
MAX_JSON_DEPTH = 200  # levels of nesting in JSON (json.dumps recurses)
_FAILED = {
    "missing": "no such fact",
    "present": "blocked by",
    "false": "is false",
    "empty": "aggregates nothing",
    "chosen": "its `choice-domain` key is taken by",
    "dominated": "dominated by",
}


class Renderer:
    """Values, atoms, bindings and rule citations typed by one program."""

    def __init__(self, program: CheckedProgram | None = None, annotate: Annotate | None = None) -> None:
        self.program = program
        self.annotate = annotate

    # ------------------------------------------------------------ pieces

    def types(self, relation: str | None) -> tuple[str, ...]:
        if self.program is None or relation is None:
            return ()
        return self.program.relation_types(relation) or ()

    def env(self, rule: int | None) -> dict[str, str]:
        return {} if self.program is None else self.program.variable_types(rule)

    def atom(self, relation: str | None, t: tuple[Any, ...] | None) -> str:
        """`relation(args)`, each argument by its declared type; None is `_`."""
        types = self.types(relation)
        args = ", ".join(format_value(v, types[i] if i < len(types) else None) for i, v in enumerate(t or ()))
        return f"{escape(relation or '')}({args})"

    def atom_json(self, relation: str | None, t: tuple[Any, ...] | None) -> list[Any]:
        types = self.types(relation)
        return [json_value(v, types[i] if i < len(types) else None) for i, v in enumerate(t or ())]

    def bindings(self, rule: int | None, b: Bindings) -> str:
        env = self.env(rule)
        return ", ".join(f"{k}={format_value(v, env.get(k))}" for k, v in b)

    def bindings_json(self, rule: int | None, b: Bindings) -> dict[str, Any]:
        env = self.env(rule)
        return {k: json_value(v, env.get(k)) for k, v in b}

    def at(self, rule: int | None) -> str | None:
        """`file:line` of rule `rule`, when the program is known."""
        if self.program is None or rule is None or not 0 <= rule < len(self.program.rules):
            return None
        return escape(self.program.cite(rule))

    def cite(self, rule: int | None) -> str:
        where = self.at(rule)
        return f"rule {rule}" + (f" ({where})" if where else "")

    def note(self, node: ProofNode) -> str | None:
        return self.annotate(node.relation or "", node.tuple or ()) if self.annotate else None

    # ------------------------------------------------------------ proof lines

    def label(self, node: ProofNode, parent: ProofNode | None = None) -> str:
        """One node's line; `parent` is the rule node whose body it is in."""
        atom = self.atom(node.relation, node.tuple)
        if node.kind == "rule":
            b = self.bindings(node.rule, node.bindings)
            return f"{atom}  by {self.cite(node.rule)}: {node.rule_text}" + (f"  [{b}]" if b else "")
        if node.kind == "fact":
            note = self.note(node)
            return f"{atom}  fact" + (f"  ({escape(note)})" if note else "")
        word = {"absent": "absent", "aggregate": "aggregate"}.get(node.kind, "holds")
        return f"{node.text}  {word}"

    def failure_line(self, f: Failure) -> str:
        needed = ", ".join(self.atom(r, t) for r, t in f.needed)
        return f"fails at {f.text}: {_FAILED[f.kind]}" + (
            f" {needed}" if f.kind in ("present", "chosen", "dominated") else ""
        )


def _walk(root: ProofNode) -> Iterator[tuple[ProofNode, int, ProofNode | None]]:
    """Every node of a proof, depth first in order, with its depth and parent."""
    stack: list[tuple[ProofNode, int, ProofNode | None]] = [(root, 0, None)]
    while stack:
        node, depth, parent = stack.pop()
        yield node, depth, parent
        stack.extend((c, depth + 1, node) for c in reversed(node.children))


def _pad(depth: int) -> str:
    if depth <= MAX_INDENT:
        return "  " * depth
    return "  " * MAX_INDENT + f"[depth {depth}] "


def to_text(node: ProofNode | WhyNot, annotate: Annotate | None = None, program: CheckedProgram | None = None) -> str:
    """An indented tree, one line per node; with `program`, values are
    shown by their declared types (`2026-08-14T10:05:00Z`, `4h`)."""
    return "\n".join(text_lines(node, Renderer(program, annotate)))


def text_lines(node: ProofNode | WhyNot, r: Renderer, depth: int = 0) -> list[str]:
    if isinstance(node, WhyNot):
        return _why_not_lines(node, r, depth)
    return [_pad(depth + d) + r.label(n, parent) for n, d, parent in _walk(node)]


def _why_not_lines(node: WhyNot, r: Renderer, depth: int) -> list[str]:
    """(Recursive: its nesting is bounded by the why-not depth.)"""
    pad = _pad(depth)
    atom = r.atom(node.relation, node.tuple)
    if node.holds:
        return [f"{pad}{atom} holds"]
    if not node.failures:
        return [f"{pad}{atom} is not a fact and no rule derives it"]
    lines = [f"{pad}{atom} does not hold:"]
    for f in node.failures:
        b = r.bindings(f.rule, f.bindings)
        lines.append(f"{pad}  {r.cite(f.rule)}: {f.rule_text}" + (f"  [{b}]" if b else ""))
        lines.append(f"{pad}    {r.failure_line(f)}")
        if f.kind == "missing" and f.needed:
            lines.append(f"{pad}    would hold with {', '.join(r.atom(x, t) for x, t in f.needed)}")
        for c in f.children:
            lines.extend(_why_not_lines(c, r, depth + 3))
    return lines


def to_json(
    node: ProofNode | WhyNot, annotate: Annotate | None = None, program: CheckedProgram | None = None
) -> dict[str, Any]:
    """The JSON shape of a proof or a why-not answer (ordinance/output.schema.json)."""
    r = Renderer(program, annotate)
    return proof_json(node, r) if isinstance(node, ProofNode) else why_not_json(node, r)


def proof_json(root: ProofNode, r: Renderer) -> dict[str, Any]:
    out: dict[str, Any] = {}
    stack: list[tuple[ProofNode, int, ProofNode | None, dict[str, Any]]] = [(root, 0, None, out)]
    while stack:
        node, depth, parent, slot = stack.pop()
        slot["kind"] = node.kind
        if node.relation is not None:
            slot["relation"] = node.relation
            slot["tuple"] = r.atom_json(node.relation, node.tuple)
        if depth >= MAX_JSON_DEPTH and node.children:
            slot["kind"] = "elided"
            slot["note"] = f"the proof goes on below depth {depth}; ask `why` of this fact"
            continue
        if node.kind == "rule":
            slot.update(rule=node.rule, rule_text=node.rule_text)
            at = r.at(node.rule)
            if at is not None:
                slot["at"] = at
        if node.bindings:
            rule = node.rule if node.kind == "rule" else (parent.rule if parent is not None else None)
            slot["bindings"] = r.bindings_json(rule, node.bindings)
        if node.literal is not None:
            slot["text"] = node.text
        if node.kind == "fact":
            note = r.note(node)
            if note:
                slot["annotation"] = note
        if node.children:
            slot["children"] = [{} for _ in node.children]
            for child, cslot in zip(reversed(node.children), reversed(slot["children"])):
                stack.append((child, depth + 1, node, cslot))
    return out


def why_not_json(node: WhyNot, r: Renderer) -> dict[str, Any]:
    """A why-not answer's JSON (its nesting is bounded by the why-not depth)."""
    return {
        "relation": node.relation,
        "tuple": r.atom_json(node.relation, node.tuple),
        "holds": node.holds,
        "failures": [
            {
                "rule": f.rule,
                "rule_text": f.rule_text,
                **({"at": r.at(f.rule)} if r.at(f.rule) else {}),
                "bindings": r.bindings_json(f.rule, f.bindings),
                "literal": f.text,
                "kind": f.kind,
                "needed": [{"relation": x, "tuple": r.atom_json(x, t)} for x, t in f.needed],
                "children": [why_not_json(c, r) for c in f.children],
            }
            for f in node.failures
        ],
    }


def add_to_graph(g: nx.DiGraph, node: ProofNode | WhyNot, r: Renderer, names: Iterator[str]) -> str:
    """Add a proof or why-not answer to `g` (edges point to premises); its root's name."""
    if isinstance(node, WhyNot):
        name = next(names)
        g.add_node(
            name, label=r.atom(node.relation, node.tuple) + (" holds" if node.holds else " does not hold"), shape="box"
        )
        for f in node.failures:
            fname = next(names)
            g.add_node(fname, label=f"{r.cite(f.rule)} fails at {f.text} ({f.kind})", shape="ellipse")
            g.add_edge(name, fname)
            for x, t in f.needed:
                nname = next(names)
                g.add_node(nname, label=f"needs {r.atom(x, t)}", shape="note")
                g.add_edge(fname, nname)
            for c in f.children:
                g.add_edge(fname, add_to_graph(g, c, r, names))
        return name
    ids: dict[int, str] = {}
    for n, _, parent in _walk(node):
        name = ids[id(n)] = next(names)
        g.add_node(name, label=r.label(n, parent), shape="box" if n.kind == "rule" else "ellipse")
        if parent is not None:
            g.add_edge(ids[id(parent)], name)
    return ids[id(node)]


def to_dot(node: ProofNode | WhyNot, program: CheckedProgram | None = None, annotate: Annotate | None = None) -> str:
    """A DOT digraph (built as a networkx DiGraph; edges point to premises)."""
    import networkx as nx

    g: nx.DiGraph = nx.DiGraph()
    add_to_graph(g, node, Renderer(program, annotate), (f"n{i}" for i in range(1 << 30)))
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
    return '"' + escape(s).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'

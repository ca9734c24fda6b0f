"""The counterexample report: the shrunk history, the breaking binding, and
the proof of each fact in the invariant's body, as plain text."""

from __future__ import annotations

import re
from typing import Any

from ..engine import ProofNode
from ..engine.text import value_text
from ..values import FOREVER, format_instant
from .history import History, show_fact, show_value
from .runner import Breach, Harness, Target
from .strategies import REQUEST_RELATIONS

__all__ = ["where", "report", "binding_text", "proof_lines"]


def where(target: Target) -> str:
    span = target.invariant.span
    return f"{span.file or '<input>'}:{span.line}" if span.line else (span.file or "<input>")


def binding_text(breach: Breach) -> str:
    t = breach.target
    if not t.variables:
        return "(the body holds; it has no variables)"
    return ", ".join(
        f"{v} = {show_value(x, ty)}" for v, x, ty in zip(t.variables, breach.binding, t.types)
    )


def _fact_note(breach: Breach, relation: str, t: tuple[Any, ...], given: str) -> str:
    step = breach.origins.get((relation, tuple(t)))
    if step is not None:
        return f"event {step}"
    if relation in REQUEST_RELATIONS and breach.request is not None:
        return "the request"
    return given


# the fuzzer's instants (10 digits around 2026) and `forever`, in instantiated literals
_INSTANT = re.compile(rf"(?<![\w.\"])(1\d{{9}}|{FOREVER})(?![\w.])")


def _instants(text: str) -> str:
    return _INSTANT.sub(lambda m: format_instant(int(m.group(1))), text)


def proof_lines(
    node: ProofNode, breach: Breach, types: dict[str, Any], depth: int = 0, given: str = "policy fact"
) -> list[str]:
    """The proof tree, one line per node, facts annotated with the event
    that wrote them (`given` for facts no event wrote)."""
    pad = "  " * depth
    if node.kind == "rule":
        head = show_fact(node.relation or "", node.tuple or (), types)
        line = f"{pad}{head}  by rule {node.rule}: {node.rule_text}"
    elif node.kind == "fact":
        fact = show_fact(node.relation or "", node.tuple or (), types)
        line = f"{pad}{fact}  fact ({_fact_note(breach, node.relation or '', node.tuple or (), given)})"
    else:
        word = {"absent": "absent", "aggregate": "aggregate"}.get(node.kind, "holds")
        line = f"{pad}{_instants(node.text)}  {word}"
    out = [line]
    children: Any = node.children  # (mypy misreads the field types of ProofNode)
    for child in children:
        out.extend(proof_lines(child, breach, types, depth + 1, given))
    return out


def report(harness: Harness, history: History, breach: Breach, *, shrunk: bool = True) -> str:
    """The whole counterexample, ready to print."""
    types = harness.types
    t = breach.target
    lines = [f'invariant "{t.name}" is broken ({where(t)})']
    lines.append(history.render(types).replace("history (", "history (shrunk, " if shrunk else "history (", 1))
    at = f"at now {format_instant(breach.now)}, store revision {breach.revision}"
    if breach.request is not None:
        lines.append(f"broken when event {breach.step} asked the gate for request "
                     f"{value_text(breach.request.request.id)}, {at}")
    elif breach.step == 0:
        lines.append(f"broken before any event, {at}")
    else:
        lines.append(f"broken after event {breach.step}, {at}")
    lines.append(f"binding: {binding_text(breach)}")
    lines.append("proof of each fact in the body:")
    if breach.proof is not None:
        children: Any = breach.proof.children
        for child in children:
            lines.extend(proof_lines(child, breach, types, 2))
    return "\n".join(lines)

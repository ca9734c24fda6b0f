"""The counterexample report: the shrunk history, the breaking binding, and
the proof of each fact in the invariant's body, as plain text (printed by
`ordinance.explain`'s renderer, facts annotated with the event that wrote them)."""

from __future__ import annotations

from typing import Any

from ..engine import ProofNode
from ..explain import Annotate, Renderer, text_lines
from ..values import escape, format_instant, format_value
from .history import History
from .runner import Breach, Harness, InvariantRule
from .strategies import REQUEST_RELATIONS

__all__ = ["where", "report", "binding_text", "proof_lines", "breach_annotator"]


def where(target: InvariantRule) -> str:
    span = target.invariant.span
    return escape(f"{span.file or '<input>'}:{span.line}" if span.line else (span.file or "<input>"))


def binding_text(breach: Breach) -> str:
    t = breach.target
    if not t.variables:
        return "(the body holds; it has no variables)"
    return ", ".join(f"{v} = {format_value(x, ty)}" for v, x, ty in zip(t.variables, breach.binding, t.types))


def breach_annotator(breach: Breach, given: str = "policy fact") -> Annotate:
    """Fact leaves say which event of the history wrote them (`given` for
    facts no event wrote)."""

    def annotate(relation: str, t: tuple[Any, ...]) -> str:
        step = breach.origins.get((relation, tuple(t)))
        if step is not None:
            return f"event {step}"
        if relation in REQUEST_RELATIONS and breach.request is not None:
            return "the request"
        return given

    return annotate


def proof_lines(
    harness: Harness, node: ProofNode, breach: Breach, depth: int = 0, given: str = "policy fact"
) -> list[str]:
    """The proof tree, one line per node, indented `depth` levels."""
    return text_lines(node, Renderer(harness.program, breach_annotator(breach, given)), depth)


def report(harness: Harness, history: History, breach: Breach, *, shrunk: bool = True) -> str:
    """The whole counterexample, ready to print."""
    types = harness.types
    t = breach.target
    lines = [f"invariant {format_value(t.name)} is broken ({where(t)})"]
    lines.append(history.render(types).replace("history (", "history (shrunk, " if shrunk else "history (", 1))
    at = f"at now {format_instant(breach.now)}, store revision {breach.revision}"
    if breach.request is not None:
        lines.append(
            f"broken when event {breach.step} asked the gate for request "
            f"{format_value(breach.request.request.id)}, {at}"
        )
    elif breach.step == 0:
        lines.append(f"broken before any event, {at}")
    else:
        lines.append(f"broken after event {breach.step}, {at}")
    lines.append(f"binding: {binding_text(breach)}")
    lines.append("proof of each fact in the body:")
    if breach.proof is not None:
        for child in breach.proof.children:
            lines.extend(proof_lines(harness, child, breach, 2))
    return "\n".join(lines)

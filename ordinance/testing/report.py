"""A failed test block as text: the one rendering `ordinance test` and the
pytest plugin print.

Each failed `expect` is shown with its line and its explanation (why for an
unwanted fact; for a missing one, the facts of that relation the model has
and why-not); each broken invariant with the binding that breaks it and the
proof of each fact in its body, every fact leaf marked as a test fact or a
policy fact. Names and values are escaped and typed by the policy.
"""

from __future__ import annotations

from typing import Any

from ..engine import why, why_not
from ..explain import Renderer, text_lines
from ..rules.ast import Branch, Record
from ..rules.printer import format_atom
from ..values import escape, format_value
from .blocks import BlockResult, ground

__all__ = ["SHOWN_FACTS", "failure_lines", "where"]

SHOWN_FACTS = 12  # facts of the expected relation shown in a failure


def where(result: BlockResult) -> str:
    """`file:line` of the block."""
    return escape(f"{result.block.span.file or '<input>'}:{result.block.span.line}")


def failure_lines(result: BlockResult) -> list[str]:
    """The failures of one block, two spaces in, explanations six."""
    if result.error is not None:
        return [f"  error[{result.error.code}]: {escape((str(result.error).splitlines() or [''])[0])}"]
    model = result.model
    program = model.prepared.program
    given = {(f.head.relation, ground(f.head)) for f in result.block.facts}

    def annotate(relation: str, t: tuple[Any, ...]) -> str:
        return "test fact" if (relation, tuple(t)) in given else "policy fact"

    r = Renderer(program, annotate)
    out: list[str] = []
    for f in result.failed:
        negated = "not " if f.expect.negated else ""
        line = f"  line {f.expect.span.line}: expect {negated}{escape(format_atom(f.expect.atom))}"
        if f.expect.negated:
            out.append(f"{line}: it holds")
            proof = why(model, f.relation, f.matches[0])
            if proof is not None:
                out.extend(text_lines(proof, r, 3))
        else:
            out.append(f"{line}: it does not hold")
            have = sorted(model.tuples(f.relation), key=repr)
            out.append(f"    {escape(f.relation)} facts in the model: {len(have)}")
            out.extend(f"      {r.atom(f.relation, t)}" for t in have[:SHOWN_FACTS])
            # a record with `_` inside (`p([_, 1])`) is no pattern why-not takes
            if not any(x is None and isinstance(a, (Record, Branch)) for x, a in zip(f.pattern, f.expect.atom.args)):
                out.append("    why not:")
                out.extend(text_lines(why_not(model, f.relation, f.pattern), r, 3))
    for b in result.broken:
        t = b.target
        binding = ", ".join(f"{v} = {format_value(x, ty)}" for v, x, ty in zip(t.variables, b.binding, t.types))
        out.append(f"  invariant {format_value(t.name)} is broken: {binding or '(its body holds)'}")
        for child in b.proof.children if b.proof is not None else ():
            out.extend(text_lines(child, r, 3))
    return out

"""What would unblock: for a reason's proof, the facts that would have to change.

    for change in unblock(reason.proof, program):
        print(change.text)      # e.g. `stop("everything", ...)` would have to be resumed: ...

A forbid holds because of the facts under its proof; it stops holding when
any one of them changes. Each stored fact leaf says how it can change:
it would have to expire (a lease, a claim's window), be revoked (a grant),
be lifted (a stop: a `resume` at a newer epoch), or be retracted; a negated
premise (`!p(...)`) would have to be added; a request fact whose epoch a
comparison refused would have to carry another epoch; another request fact
means the call itself would have to differ. A missing permit's
why-not already names the facts it needs: those are added (or, where a
negation failed, retracted); a request fact it needs is the call differing. Policy facts would need the policy changed.
One change of the list suffices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from ..engine.provenance import ProofNode, WhyNot
from ..rules.ast import Negation
from ..rules.checked import CheckedProgram, is_request_side
from ..values import FOREVER, escape, format_instant
from .proof import Renderer

__all__ = ["Change", "unblock"]

ADD, EXPIRE, REVOKE, RESUME, RETRACT, EPOCH, POLICY, CALL = (
    "add",
    "expire",
    "revoke",
    "resume",
    "retract",
    "another-epoch",
    "policy",
    "call",
)
_EXPIRES = {"lease": 3, "claim_valid": 2}  # relation -> the argument holding when it ends
_DEPTH = 8  # nested why-nots followed this deep


@dataclass(frozen=True, slots=True)
class Change:
    """One change that would unblock: `how` (add, expire, revoke, resume,
    retract, another-epoch, policy, call), the fact, and a line saying it."""

    how: str
    relation: str
    tuple: tuple[Any, ...]
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"how": self.how, "relation": self.relation, "args": list(self.tuple), "text": self.text}


def _epoch_refused(node: ProofNode, parent: ProofNode | None) -> int | None:
    """The request's epoch, if a comparison beside this `request` leaf refused it."""
    if node.relation not in ("request", "request_lease") or parent is None or not node.tuple:
        return None
    epoch = node.tuple[-1]
    if not isinstance(epoch, int):
        return None
    for sibling in parent.children:
        if sibling.kind == "holds" and str(epoch) in sibling.text.replace("(", " ").replace(")", " ").split():
            return epoch
    return None


def _leaf(node: ProofNode, parent: ProofNode | None, r: Renderer, program: CheckedProgram | None) -> Change | None:
    rel, t = node.relation or "", tuple(node.tuple or ())
    atom = r.atom(rel, t)
    if is_request_side(rel):
        epoch = _epoch_refused(node, parent)
        if epoch is not None:
            return Change(EPOCH, rel, t, f"the request would have to carry another epoch than {epoch} ({atom})")
        if rel in ("request", "request_scope"):
            return None
        return Change(CALL, rel, t, f"the call itself would have to differ ({atom})")
    if program is not None and any(program.rules[i].is_fact for i in program.rules_for(rel)):
        return Change(POLICY, rel, t, f"{atom} is a policy fact: the policy would have to change")
    if rel == "grant":
        return Change(REVOKE, rel, t, f"{atom} would have to be revoked")
    if rel == "stop":
        return Change(
            RESUME, rel, t, f"{atom} would have to be lifted (retracted, or resumed where the policy reads `resume`)"
        )
    if rel in _EXPIRES and len(t) > _EXPIRES[rel] and isinstance(t[_EXPIRES[rel]], int):
        end = t[_EXPIRES[rel]]
        when = "it never does (forever)" if end >= FOREVER else f"at {format_instant(end)}"
        return Change(EXPIRE, rel, t, f"{atom} would have to expire ({when}) or be retracted")
    return Change(RETRACT, rel, t, f"{atom} would have to be retracted or superseded")


def _proof(root: ProofNode, r: Renderer, program: CheckedProgram | None) -> Iterator[Change]:
    todo: list[tuple[ProofNode, ProofNode | None]] = [(root, None)]
    while todo:
        node, parent = todo.pop(0)
        if node.kind == "rule":
            todo.extend((c, node) for c in node.children)
        elif node.kind == "fact":
            change = _leaf(node, parent, r, program)
            if change is not None:
                yield change
        elif node.kind == "absent" and isinstance(node.literal, Negation):
            atom = node.literal.atom
            args = tuple(getattr(a, "value", None) for a in atom.args)
            shown = escape(node.text.lstrip("!"))
            derived = program is not None and _derived(program, atom.relation)
            text = f"{shown} would have to hold (`why-not` says how)" if derived else f"{shown} would have to be added"
            yield Change(ADD, atom.relation, args, text)


def _derived(program: CheckedProgram, relation: str) -> bool:
    rel = program.relations.get(relation)
    return rel is not None and rel.derived


def _why_not(node: WhyNot, r: Renderer, depth: int = 0) -> Iterator[Change]:
    for f in node.failures:
        needed = [(rel, t) for rel, t in f.needed if r.program is None or not _derived(r.program, rel)]
        if f.kind == "missing":
            for rel, t in needed:
                if is_request_side(rel):  # the gate's overlay of the call, never a fact anyone adds
                    yield Change(CALL, rel, tuple(t), f"the call itself would have to differ ({r.atom(rel, t)})")
                else:
                    yield Change(ADD, rel, tuple(t), f"{r.atom(rel, t)} would have to be added")
        elif f.kind == "present":
            for rel, t in needed:
                yield Change(RETRACT, rel, tuple(t), f"{r.atom(rel, t)} would have to be retracted")
        if depth < _DEPTH:
            for child in f.children:
                yield from _why_not(child, r, depth + 1)


def unblock(proof: ProofNode | WhyNot | None, program: CheckedProgram | None = None) -> tuple[Change, ...]:
    """The changes, any one of which would make the proved fact stop holding
    (a proof) or, for a why-not, start holding; each once, in proof order."""
    if proof is None:
        return ()
    r = Renderer(program)
    found = _why_not(proof, r) if isinstance(proof, WhyNot) else _proof(proof, r, program)
    return tuple({(c.how, c.relation, c.tuple): c for c in found}.values())

"""A logged decision explained: its proof rebuilt from what the log keeps.

    rebuilt = rebuild(gate, 42)                 # the decision logged at seq 42
    print(rebuilt_text(rebuilt, annotate, program))
    rebuilt_json(rebuilt, annotate, program)    # `why --decision 42 --json`
    rebuilt_dot(rebuilt, annotate, program)     # one graph, a subgraph per reason

The log keeps a decision's request, `now`, revision and policy hash, not
its proofs (a decision is a pure function of them). `rebuild` decides the
logged request again over the store at its revision and `now` under the
gate's policy (nothing is logged), so the reasons carry their proofs again.
The store does not keep policies: when the gate's policy is not the one the
decision was made under, the rebuilt decision is what this policy says,
and both are shown: the logged answer (its reasons, without proofs) and
this policy's, with proofs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

from ..diagnostics import GateError
from ..gate import Decision, Gate, Request
from ..rules.ast import Const
from ..rules.checked import CheckedProgram
from ..values import escape
from .decision import decision_json, explain_text, reason_title
from .proof import Annotate, Renderer, add_to_graph, graph_to_dot

__all__ = [
    "Rebuilt",
    "rebuild",
    "rebuilt_text",
    "rebuilt_json",
    "rebuilt_dot",
    "outcome_word",
    "logged_asked",
    "ask_codes",
    "action_text",
]

_COMPARED = ("allowed", "reasons", "errors")


def ask_codes(program: CheckedProgram | None) -> frozenset[str]:
    """The codes of the policy's `ask_code("...")` facts: an allowed call with
    a flag of one of these codes asks the user (the Claude Code hook)."""
    if program is None:
        return frozenset()
    return frozenset(
        str(r.head.args[0].value)
        for r in program.rules
        if r.is_fact and r.head.relation == "ask_code" and len(r.head.args) == 1 and isinstance(r.head.args[0], Const)
    )


def action_text(r: Request) -> str:
    """What a request does, in a line: a Bash call's command (its `command`
    input, else its simple commands), otherwise its kind and target."""
    inputs = {str(a[0]): str(a[1]) for rel, a in r.attributes if rel == "request_input" and len(a) == 2}
    numbered = [a for rel, a in r.attributes if rel == "request_command" and len(a) == 2]
    commands = [str(a[1]) for a in sorted(numbered, key=lambda a: a[0] if isinstance(a[0], int) else 0)]
    if r.kind == "Bash" and ("command" in inputs or commands):
        return f"{r.agent} Bash {inputs.get('command') or '; '.join(commands)}"
    return f"{r.agent} {r.kind} {r.target}"


def outcome_word(d: Decision, asks: frozenset[str] = frozenset(), asked: Sequence[Any] = ()) -> str:
    """`allowed`, `ask` (allowed with a flag whose code is in `asks`, or
    logged as `asked`), `DENIED` or `ERROR`."""
    if d.errors:
        return "ERROR"
    if not d.allowed:
        return "DENIED"
    return "ask" if asked or any(f.code in asks for f in d.flags) else "allowed"


def logged_asked(payload: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The ask codes a logged decision asked the user about (a host's hook
    logs them as `asked`; a decision logged without them did not ask)."""
    asked = (payload or {}).get("asked")
    return tuple(str(c) for c in asked) if isinstance(asked, list) else ()


@dataclass(frozen=True, slots=True)
class Rebuilt:
    """The decision logged at `seq` (`logged`, reasons without proofs) and
    the same request decided again (`again`, with proofs); `same_policy`
    if `again` ran under the logged policy, `same` if both answer alike."""

    seq: int
    logged: Decision
    again: Decision
    asked: tuple[str, ...] = ()  # the logged decision's `asked` (logged_asked)

    @property
    def same_policy(self) -> bool:
        return self.logged.policy_hash == self.again.policy_hash

    @property
    def same(self) -> bool:
        was, now = self.logged.to_json(), self.again.to_json()
        return all(was[k] == now[k] for k in _COMPARED)


def rebuild(gate: Gate, seq: int) -> Rebuilt:
    """The decision logged at `seq`, decided again by `gate` at its revision and `now`."""
    found = gate.store.events_at([seq]) if isinstance(seq, int) and seq >= 0 else []
    if not found or found[0].kind != "decision" or found[0].payload is None or seq in gate.store.purged():
        raise GateError(f"no decision is logged at seq `{seq}`", code="no_decision")
    payload = dict(found[0].payload)
    logged = Decision.from_payload(payload, seq)
    if logged.policy_hash != gate.policy.source_hash:  # another policy reads only the attributes it declares
        request = dict(payload["request"])
        attributes = request.get("attributes") or {}
        request["attributes"] = {k: v for k, v in attributes.items() if k in gate.request_relations}
        payload["request"] = request
    again = replace(gate.replay(payload, what_if=True), seq=seq)
    return Rebuilt(seq, logged, again, logged_asked(found[0].payload))


def _policy_line(r: Rebuilt) -> str:
    if r.same_policy:
        return f"decision {r.seq}, rebuilt under its own policy {r.again.policy_hash[:12]}"
    return (
        f"decision {r.seq} was made under policy {r.logged.policy_hash[:12]}; "
        f"the policy has changed since (now {r.again.policy_hash[:12]})"
    )


def rebuilt_text(r: Rebuilt, annotate: Annotate | None = None, program: CheckedProgram | None = None) -> str:
    """The policy line, then the proofs; when the policy changed and the
    answers differ, the logged answer first."""
    lines = [_policy_line(r)]
    if not r.same_policy:
        if r.same:
            lines.append("  this policy answers the same; its proof:")
        else:
            codes = ", ".join(escape(x.code) for x in r.logged.reasons) or "-"
            lines.append(f"  logged: {outcome_word(r.logged, asked=r.asked)} ({codes}); this policy answers:")
    lines.append(explain_text(r.again, annotate, program))
    return "\n".join(lines)


def rebuilt_json(r: Rebuilt, annotate: Annotate | None = None, program: CheckedProgram | None = None) -> dict[str, Any]:
    """`{"seq", "same_policy", "same", "logged": (no proofs), "decision": (with proofs)}`."""
    return {
        "seq": r.seq,
        "same_policy": r.same_policy,
        "same": r.same,
        "logged": decision_json(r.logged, proofs=False),
        "decision": decision_json(r.again, annotate, program),
    }


def rebuilt_dot(r: Rebuilt, annotate: Annotate | None = None, program: CheckedProgram | None = None) -> str:
    """One DOT graph: the decision at the root, each reason under it with its proof."""
    import networkx as nx

    g: nx.DiGraph = nx.DiGraph()
    names = (f"n{i}" for i in range(1 << 30))
    renderer = Renderer(program, annotate)
    root = next(names)
    req = r.again.request
    g.add_node(
        root,
        label=f"decision {r.seq}: {outcome_word(r.again, ask_codes(program))} {req.id} ({_policy_line(r)})",
        shape="box",
    )
    for reason in list(r.again.reasons) + list(r.again.flags):
        node = next(names)
        g.add_node(node, label=reason_title(reason), shape="octagon")
        g.add_edge(root, node)
        if reason.proof is not None:
            g.add_edge(node, add_to_graph(g, reason.proof, renderer, names))
    return graph_to_dot(g, "decision", "rankdir=TB;")

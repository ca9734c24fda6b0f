"""The pre-action gate: `Gate(policy, store).check(request, now) -> Decision`.

gate = Gate(ordinance.rules.load("policy.rules"), open_store("./o.db"))
decision = gate.check(Request("a1", "write", "w1", "alice", 1), now)
result = gate.guard(request, effect, now)   # check, intent, effect, outcome
with gate.guarded(request, now): effect()   # the same, raising Blocked
again = gate.replay(logged_event)           # a logged decision, decided again
for r in replay_log(gate, what_if=True): ...  # the whole log (replay.py)
"""

from .core import GATE_RELATIONS, OWNER_CLOCK, SERVER_CLOCK, Batch, Gate
from .decision import Decision, Reason
from .guard import Blocked, Guarded, GuardResult, guard
from .layers import PUBLIC, Layers
from .lease import Leased
from .replay import Replayed, replay_log
from .request import REQUEST_RELATIONS, Request, is_request_side, request_relations, with_defaults

__all__ = [
    "Batch",
    "Blocked",
    "Decision",
    "Gate",
    "GATE_RELATIONS",
    "Guarded",
    "GuardResult",
    "Layers",
    "Leased",
    "OWNER_CLOCK",
    "SERVER_CLOCK",
    "PUBLIC",
    "REQUEST_RELATIONS",
    "Reason",
    "Replayed",
    "Request",
    "guard",
    "is_request_side",
    "replay_log",
    "request_relations",
    "with_defaults",
]

"""The pre-action gate: `Gate(policy, store).check(request, now) -> Decision`.

    gate = Gate(ordinance.rules.load("policy.rules"), open_store("./o.db"))
    decision = gate.check(Request("a1", "write", "w1", "alice", 1), now)
    result = gate.guard(request, effect, now)   # check, intent, effect, outcome
"""

from .core import Gate
from .decision import Decision, Reason
from .guard import GuardResult, guard
from .request import Request

__all__ = ["Decision", "Gate", "GuardResult", "Reason", "Request", "guard"]

"""Projections: views of the log the policy declares, rendered at (revision,
policy hash, `now`, audience), each line pointing back to its events.

    state = render_state(store, policy, now, audience="public", cap=4096)
    print(state.text)                      # the seed-003 state file
    bundle = rehydrate(store, policy, now) # state + newest log lines + open decisions

An audience's projection is evaluated over the facts of the layers it may
see (layers.py), never filtered after derivation.
"""

from ..gate.layers import PUBLIC, Layers
from .projector import Projector, render_state
from .records import record_facts, records, truth_class
from .rehydrate import DEFAULT_BOUND, Bundle, log_line, rehydrate
from .escape import escape
from .render import DEFAULT_CAP, Line, Projection, render_projection, write_atomically
from .sources import Sources
from .stamps import stamp

__all__ = [
    "Bundle",
    "DEFAULT_BOUND",
    "DEFAULT_CAP",
    "Layers",
    "Line",
    "PUBLIC",
    "Projection",
    "Projector",
    "Sources",
    "escape",
    "log_line",
    "record_facts",
    "records",
    "rehydrate",
    "render_projection",
    "render_state",
    "stamp",
    "truth_class",
    "write_atomically",
]

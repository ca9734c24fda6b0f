"""The cyclic garbage collector around the engine's bulk work.

A model is hundreds of thousands of tuples, sets and index buckets, and
nothing in it forms a reference cycle: reference counting frees it. The
cyclic collector, though, runs every few hundred allocations while a model
is built and walks every container allocated so far, so building a model
at 100k facts spends about half its time in it. `paused()` turns it off
while a model is built (or loaded) and on again after; nested and
concurrent users keep it off until the last one leaves, and a process that
turned it off itself keeps it off. On the way out, what the block made is
moved to the oldest generation in one step (`gc.freeze()` then
`gc.unfreeze()`, unless something is frozen already), so the next young
collection does not walk it all either: only full collections do.

`settle()` is for a long-running gate, once its warm model is built: a
full collection then, while nothing waits for it. The collector's first
full collection walks the whole model (half a second and more at 100k
facts); made by a decision, it is that decision's latency. After one, the
collector runs the next only once the objects that survived young
collections reach a quarter of those the last one kept, so a settled model
is walked again only after the process has grown by that much. (Freezing
the model with `gc.freeze()` instead would also freeze the cyclic garbage of
earlier evaluations, which then keeps their overlays alive for good.)
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

__all__ = ["paused", "settle"]

_lock = threading.Lock()
_depth = 0
_resume = False  # whether the collector was on when the first user came


@contextmanager
def paused() -> Iterator[None]:
    """No cyclic collection inside the block (reference counting still frees)."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                if not gc.get_freeze_count():  # (nobody froze anything we would thaw)
                    gc.freeze()  # what the block made goes straight to the oldest generation,
                    gc.unfreeze()  # instead of being walked by the next young collection
                gc.enable()


def settle() -> None:
    """One full collection now (see the module docstring)."""
    gc.collect()

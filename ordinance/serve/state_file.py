"""`ordinance serve --state-out FILE`: the state file, kept current.

    keeper = StateFile(policy, open_store(url), "prime-state.md", audience="public")
    keeper.start()   # renders and writes once, then follows; raises on a bad option
    ...
    keeper.stop()

The keeper has its own store connection and its own warm model (a Gate's,
for every layer; an audience's model is evaluated over its layers), so it
never holds the service's lock. It rewrites the file, atomically, when

- the store's revision changes, by this server or any other process or
  host: it reads the revision every POLL seconds (one indexed read);
- the clock crosses a change point of the file: an instant where a `$now`
  comparison of its model may flip (an `armed` monitor's cadence, a lease
  running out, a claim's validity ending), or UTC midnight, when stamps start
  printing their date (`Projector.next_change`). A policy whose rules use
  `$now` as a value has no such points: the file is then rendered again
  every REFRESH seconds.

Each write is `ordinance state --out FILE` at the same (revision, policy,
`now`, audience, cap): the same bytes, `now` being the one in its heading. A
change of the clock alone that leaves every line as it was is not written.
A render that fails (the store unreachable) is reported on stderr and
retried on the next change; the server keeps serving.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Callable

from ..engine import Limits
from ..facts import Store
from ..gate import Gate
from ..project import DEFAULT_CAP, Projection, Projector, write_atomically
from ..rules.checked import CheckedProgram

__all__ = ["StateFile", "POLL", "REFRESH"]

POLL = 0.2  # seconds between reads of the store's revision
REFRESH = 60  # seconds between renderings of a policy whose model moves with every `now`


class StateFile:
    def __init__(
        self,
        policy: CheckedProgram,
        store: Store,
        path: str,
        *,
        audience: str | None = None,
        cap: int | None = DEFAULT_CAP,
        agent: str | None = None,
        name: str = "state",
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store, self.path, self.audience, self.cap, self.agent, self.name = store, path, audience, cap, agent, name
        gated = audience is None and "permit" in policy.relations and "forbid" in policy.relations
        # the engine's limits, without the gate's decision deadline: `ordinance state` has none either
        gate = Gate(policy, store, limits=Limits()) if gated else None
        self.projector = Projector(policy, gate=gate) if gate is not None else Projector(policy, store)
        self.projector.layers.visible(audience)  # refuses an audience the policy does not declare
        self.clock = clock
        self.written: Projection | None = None
        self.due: float | None = None  # when the clock makes the file stale; None: not before a new event
        self.writes = 0
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def render(self) -> bool:
        """Render at the newest revision and the clock's `now`; write the
        file if a line or the revision changed. True if it was written."""
        sources = self.projector.sources(self.audience)
        now = int(self.clock())  # after reading the revision: every event in it was written by now
        state = self.projector.render(
            self.name, now, audience=self.audience, cap=self.cap, agent=self.agent, revision=sources.revision
        )
        moves = self.projector.next_change(self.audience, now)
        self.due = now + REFRESH if moves is None else moves
        old = self.written
        if old is not None and old.revision == state.revision and _body(old) == _body(state):
            return False
        write_atomically(self.path, state.text)
        self.written, self.writes = state, self.writes + 1
        return True

    def stale(self) -> bool:
        """Whether a new event or the clock has made the file stale."""
        if self.written is None or self.store.revision() != self.written.revision:
            return True
        return self.due is not None and self.clock() >= self.due

    def start(self) -> None:
        """Write the file now (errors raise), then follow in a daemon thread."""
        self.render()
        self._thread = threading.Thread(target=self._follow, name="ordinance-state-file", daemon=True)
        self._thread.start()

    def _follow(self) -> None:
        failing = False
        while not self._done.wait(POLL):
            try:
                if self.stale():
                    self.render()
                failing = False
            except Exception as exc:  # report once per run of failures, keep serving, retry
                if not failing:
                    print(
                        f"ordinance serve: the state file {self.path} is not current: "
                        f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
                        file=sys.stderr,
                    )
                failing = True

    def stop(self) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.store.close()


def _body(state: Projection) -> str:
    """The text below the heading (which names `now`)."""
    return state.text.partition("\n")[2]

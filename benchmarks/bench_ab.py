"""Gate decisions of two trees in one process, interleaved: a before/after
figure that a loaded machine does not swamp (both trees see the same load).

    python benchmarks/bench_ab.py OTHER_TREE [--facts 20000] [--passes 5] [--jumps]

OTHER_TREE is a checkout (e.g. `git archive main | tar -x -C /tmp/main`)
whose `ordinance` package is copied to a temporary `ordinance_before`
(its imports are relative); this tree's `ordinance` is "after". Both gates
read one SQLite store (bench_gate's world) and decide bench_gate's requests
with the clock advancing 1-5 s per decision, taking turns at deciding first;
the first pass is a warm-up. `--jumps` decides at random jumps of the
clock instead (+-1 day around bench_gate's NOW, as bench_gate's jump row:
decided on demand, gate/jump.py), the same jumps for both. Prints p50 / p99 of each and the p50 ratio, and
how many decisions agree, reasons and flags included (they must all).
"""

from __future__ import annotations

import argparse
import importlib
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import bench_gate as b  # noqa: E402  (the `ordinance` on the path: "after")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("other")
    ap.add_argument("--facts", type=int, default=20_000)
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--jumps", action="store_true", help="random jumps of the clock (+-1 day), not advancing")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(Path(args.other) / "ordinance", Path(tmp) / "ordinance_before")
        sys.path.insert(0, tmp)
        old = {m: importlib.import_module(f"ordinance_before.{m}") for m in ("gate", "rules", "facts")}
        rnd = random.Random(7)
        for name, text in [("stdlib", '.include "continuity"\n'), ("authority", b.AUTHORITY)]:
            pa, pb = old["rules"].compile_text(text), b.compile_text(text)
            rows = b.world(args.facts, random.Random(7), members="member" in pb.relations)
            reqs = b.requests(args.facts, 2000, random.Random(8))
            db = str(Path(tmp) / f"{name}.db")
            store = b.open_store(db, b.schema_of(pb))
            store.append([b.Event(b.kind_of(r), r, a, "bench", "bench") for r, a in rows])
            ga = old["gate"].Gate(pa, old["facts"].open_store(db, old["facts"].schema_of(pa)), settle=True)
            gb = b.Gate(pb, store, settle=True)
            olds = [old["gate"].Request(**{k: getattr(r, k) for k in r.__dataclass_fields__}) for r in reqs]
            ga.decide(olds[0], b.NOW)
            gb.decide(reqs[0], b.NOW)
            t, ta, tb, agree = b.NOW, [], [], 0
            for k in range(args.passes):
                for i, r in enumerate(reqs):
                    t = b.NOW + rnd.randint(-b.DAY, b.DAY) if args.jumps else t + rnd.randint(1, 5)
                    turns = ((ga, olds[i], ta), (gb, r, tb))
                    allowed = []
                    for g, q, ts in turns if (i + k) % 2 else reversed(turns):
                        t0 = time.perf_counter_ns()
                        d = g.decide(q, t)
                        allowed.append((d.allowed, [(r.code, r.detail, r.kind) for r in (*d.reasons, *d.flags)]))
                        ts.append(time.perf_counter_ns() - t0)
                    agree += allowed[0] == allowed[1]
            ta, tb = sorted(ta[len(reqs) :]), sorted(tb[len(reqs) :])
            m = len(ta)
            a50, b50 = ta[m // 2] / 1e3, tb[m // 2] / 1e3
            print(
                f"{name:10s} before p50 {a50:6.1f} us p99 {ta[int(m * 0.99)] / 1e3:7.1f} us  "
                f"after p50 {b50:6.1f} us p99 {tb[int(m * 0.99)] / 1e3:7.1f} us  "
                f"ratio p50 {b50 / a50:.3f}  agree {agree}/{args.passes * len(reqs)}"
            )


if __name__ == "__main__":
    main()

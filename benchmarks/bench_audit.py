"""`ordinance audit` speed: past tool calls replayed through a policy.

    python benchmarks/bench_audit.py [--calls 100000] [--sessions 50]

Writes --calls synthetic Claude Code tool calls (Bash with compound
commands, Write inside and outside the project, Read, WebFetch; each with
its result) across --sessions transcript files, over a store with a grant
and an owner stop written mid-way, then times the audit path end to end
(reading and joining the transcripts, mapping each call to its request,
deciding it on the gate's warm overlay path, the summary): calls/s, against
the target of 100,000 calls in <= 60 s. For comparison, on a sample: the
same calls through `Gate.check` one at a time (each decided and logged, on
a copy of the store), and a fresh `ordinance check` process per call, as
ratios to the audit's time per call.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ordinance.audit import Summary, Timeline, audit, read_calls, subjects_of_calls
from ordinance.cli.audit import claude_code_request
from ordinance.cli.init import CLAUDE_CODE_POLICY
from ordinance.facts import Event, import_jsonl, open_store, schema_of
from ordinance.gate import Gate
from ordinance.rules import compile_text

PROJECT = "/home/me/p"
TARGET_S = 60.0
TARGET_CALLS = 100_000
START = 1_780_000_000  # 2026-05-28


def _call(rng: random.Random, n: int) -> dict[str, Any]:
    kind = rng.randrange(6)
    if kind == 0:
        return {
            "name": "Bash",
            "input": {"command": f"cd sub{n % 7} && git push {'-f ' if n % 5 == 0 else ''}origin main"},
        }
    if kind == 1:
        return {"name": "Bash", "input": {"command": f"ls -la src/{n % 13} | grep -v x && echo done"}}
    if kind == 2:
        return {"name": "Write", "input": {"file_path": f"{PROJECT}/src/f{n}.py", "content": "x = 1\n"}}
    if kind == 3:
        return {"name": "Write", "input": {"file_path": f"/tmp/out{n}.txt", "content": "y"}}
    if kind == 4:
        return {"name": "Read", "input": {"file_path": f"{PROJECT}/README.md"}}
    return {"name": "WebFetch", "input": {"url": f"https://example.com/{n}", "prompt": "summarize"}}


def write_transcripts(root: Path, calls: int, sessions: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    files = [open(root / f"s{k}.jsonl", "w") for k in range(sessions)]
    try:
        for n in range(calls):
            k = n % sessions
            ts = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(START + n))
            c = _call(rng, n)
            use = {"type": "tool_use", "id": f"toolu_{n}", **c}
            files[k].write(
                json.dumps(
                    {
                        "type": "assistant",
                        "sessionId": f"s{k}",
                        "cwd": PROJECT,
                        "timestamp": ts,
                        "message": {"role": "assistant", "content": [use]},
                    }
                )
                + "\n"
            )
            res = {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": "ok", "is_error": n % 17 == 0}
            files[k].write(
                json.dumps({"type": "user", "timestamp": ts, "message": {"role": "user", "content": [res]}}) + "\n"
            )
    finally:
        for f in files:
            f.close()


def make_store(path: Path, policy: Any, calls: int) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(START - 60))
    mid = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(START + calls // 2))
    events = [
        Event("assert", "grant", ("claude-code", PROJECT, 1), "init", "jw", seq=1, time=stamp),
        Event("assert", "stop", ("everything", START + calls // 2), "cli", "jw", seq=2, time=mid),
    ]
    with open_store(str(path), schema_of(policy)) as store:
        import_jsonl(store, io.StringIO("".join(json.dumps(e.to_json()) + "\n" for e in events)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=TARGET_CALLS)
    ap.add_argument("--sessions", type=int, default=50)
    ap.add_argument("--sample", type=int, default=500, help="calls checked one at a time by Gate.check")
    ap.add_argument("--processes", type=int, default=3, help="calls checked by a fresh `ordinance check` each")
    args = ap.parse_args()
    policy = compile_text(CLAUDE_CODE_POLICY)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "t").mkdir()
        write_transcripts(root / "t", args.calls, args.sessions)
        make_store(root / "o.db", policy, args.calls)
        started = time.perf_counter()
        read = read_calls([root / "t"])
        read_s = time.perf_counter() - started
        summary = Summary()
        with open_store(str(root / "o.db"), schema_of(policy)) as store:
            gate = Gate(policy, store, eager=False)
            to_request = claude_code_request(gate.request_relations, "claude-code", PROJECT, 1)
            problems: list[str] = []
            subjects = list(subjects_of_calls(read.calls, to_request, problems))
            for row in audit(gate, subjects, timeline=Timeline(store)):
                summary.add(row)
            revision = store.revision()
        total_s = time.perf_counter() - started
        assert summary.calls == args.calls and not problems and revision == 2, "the audit must write nothing"
        per_call = total_s / summary.calls
        print(
            f"audit: {summary.calls} calls in {total_s:.2f} s ({summary.calls / total_s:,.0f} calls/s; "
            f"reading {read_s:.2f} s); answers {dict(summary.answers)}"
        )
        print(f"  projected to {TARGET_CALLS:,} calls: {per_call * TARGET_CALLS:.1f} s (target <= {TARGET_S:.0f} s)")

        shutil.copy(root / "o.db", root / "c.db")
        sample = subjects[: args.sample]
        with open_store(str(root / "c.db"), schema_of(policy)) as store:
            gate = Gate(policy, store, eager=False)
            started = time.perf_counter()
            for s in sample:
                gate.check(s.request, s.now)
            check_s = (time.perf_counter() - started) / max(1, len(sample))
        print(
            f"Gate.check one at a time (decided and logged): {check_s * 1e6:,.0f} us/call, "
            f"{check_s / per_call:.1f}x the audit's {per_call * 1e6:,.0f} us/call"
        )

        (root / "policy.rules").write_text(CLAUDE_CODE_POLICY)
        spent = []
        for s in sample[: args.processes]:
            facts = [f'request("{s.request.id}", "{s.request.kind}", "{s.request.target}", "claude-code", 1).']
            started = time.perf_counter()
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "ordinance.cli",
                    "check",
                    *facts,
                    "--policy",
                    str(root / "policy.rules"),
                    "--db",
                    str(root / "c.db"),
                ],
                capture_output=True,
            )
            spent.append(time.perf_counter() - started)
            assert done.returncode in (0, 1), done.stderr
        if spent:
            each = sum(spent) / len(spent)
            print(f"`ordinance check` in a fresh process: {each * 1e3:,.0f} ms/call, {each / per_call:,.0f}x the audit")


if __name__ == "__main__":
    main()

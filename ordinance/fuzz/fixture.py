"""Counterexamples as scenario fixtures (the TOML format of ordinance/testing/scenarios/).

A saved history is a scenario (see ordinance/scenario.py): `[policy]`
includes the policy file by a path relative to the fixture; one `[[step]]`
per fact, labelled `e1`, `e2`, ... after its event number (a first empty
step `start` is revision 0); one `[[check]]` per request, at the label of
the last fact before it, with the decision the gate made; one
`[[project]]` per point where invariants were checked (before time moved
on, and at the end). `run_scenario` replays it and reports the broken
invariant; `load_history` turns it back into a history for the fuzzer.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

from ..diagnostics import OrdinanceError
from ..gate import Decision, Request
from ..values import to_value
from ..values import FOREVER, format_duration, format_instant
from .history import Advance, Ask, Fact, History, Entry
from .runner import Breach, Harness
from .strategies import BASE

__all__ = ["to_toml", "save", "load_history"]


def _value(value: Any, type_: str | None) -> str:
    if isinstance(value, int) and type_ == "time":
        return '"forever"' if value >= FOREVER else format_instant(value)
    if isinstance(value, int) and type_ == "duration":
        return f'"{format_duration(value)}"'
    return json.dumps(value, ensure_ascii=False)


def _array(values: list[Any]) -> str:
    return "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in values) + "]"


def _request(request: Request) -> list[str]:
    lines = []
    for key, value in request.to_json().items():
        if value is None or value == [] or value is False:
            continue
        if key == "needs":
            lines.append(f"needs = [{', '.join(_array(n) for n in value)}]")
        elif isinstance(value, list):
            lines.append(f"{key} = {_array(value)}")
        else:
            lines.append(f"{key} = {json.dumps(value, ensure_ascii=False)}")
    return lines


def to_toml(
    harness: Harness,
    history: History,
    decisions: list[Decision],
    breach: Breach,
    policy: str,
    *,
    seed: int | None = None,
) -> str:
    """The fixture text; `policy` is the include path as the fixture sees it."""
    types = harness.types
    name = breach.target.name
    out = [
        f"# ordinance fuzz: a history that breaks invariant {json.dumps(name)}",
        f"name = {json.dumps('fuzz: ' + name)}",
        'story = """',
        *history.render(types).replace('"""', "'''").splitlines(),
        '"""',
        "",
        "[fuzz]",
        f"invariant = {json.dumps(name)}",
        f"base = {format_instant(history.base)}",
    ]
    if seed is not None:
        out.append(f"seed = {seed}")
    out += [
        "",
        "[policy]",
        f"include = [{json.dumps(policy)}]",
        'rules = ""',
        "",
        "[[step]]",
        'label = "start"',
        "facts = []",
    ]
    label, now, dirty, asked = "start", history.base, True, iter(decisions)

    def project(what: str) -> None:
        out.extend(["", "[[project]]", f"name = {json.dumps(what)}", f'at = "{label}"', f"now = {format_instant(now)}"])

    for n, step in enumerate(history.steps, 1):
        if isinstance(step, Fact):
            declared = types.get(step.relation) or (None,) * len(step.args)
            row = ", ".join([json.dumps(step.relation)] + [_value(v, t) for v, t in zip(step.args, declared)])
            label, dirty = f"e{n}", True
            out += ["", "[[step]]", f'label = "{label}"', f"facts = [[{row}]]"]
        elif isinstance(step, Advance):
            if dirty:
                project(f"invariants before event {n}")
            now, dirty = now + step.seconds, True
        else:
            decision = next(asked, None)
            if decision is None:
                break
            out += [
                "",
                "[[check]]",
                f'name = "event {n}"',
                f'at = "{label}"',
                f"now = {format_instant(now)}",
                f"allowed = {'true' if decision.allowed else 'false'}",
                f"codes = {_array(list(decision.codes))}",
                "[check.request]",
                *_request(step.request),
            ]
    if dirty:
        project("invariants at the end")
    return "\n".join(out) + "\n"


def save(
    harness: Harness,
    history: History,
    breach: Breach,
    path: str | os.PathLike[str],
    policy_file: str,
    *,
    seed: int | None = None,
) -> None:
    """Write the fixture for `history` to `path` (the policy included relative to it)."""
    from .runner import run_history

    _, decisions = run_history(harness, history, targets=())
    target = Path(path)
    rel = os.path.relpath(os.path.abspath(policy_file), os.path.abspath(target.parent or "."))
    target.write_text(to_toml(harness, history, decisions, breach, rel, seed=seed), encoding="utf-8")


def _time(value: Any) -> int:
    return int(to_value(value, "time"))


def load_history(harness: Harness, path: str | os.PathLike[str]) -> History:
    """The history a fixture describes, with values typed by `harness`."""
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as err:
        raise OrdinanceError(f"`{path}` is not TOML: {err}", code="bad_fixture") from None
    checkpoints: dict[str, list[tuple[int, Request | None]]] = {}
    for c in data.get("check", []):
        checkpoints.setdefault(c.get("at", "start"), []).append((_time(c["now"]), Request.from_json(c["request"])))
    for p in data.get("project", []):
        checkpoints.setdefault(p.get("at", "start"), []).append((_time(p["now"]), None))
    for items in checkpoints.values():
        items.sort(key=lambda item: item[0])
    times = [t for items in checkpoints.values() for t, _ in items]
    base = _time(data.get("fuzz", {}).get("base", min(times, default=BASE)))
    steps: list[Entry] = []
    now = base

    def visit(label: str) -> None:
        nonlocal now
        for at, request in checkpoints.get(label, []):
            if at > now:
                steps.append(Advance(at - now))
                now = at
            if request is not None:
                steps.append(Ask(request))

    visit("start")
    for s in data.get("step", []):
        for row in s.get("facts", []):
            relation, args = row[0], row[1:]
            rel = harness.program.relations.get(relation)
            if rel is None or rel.arity != len(args):
                raise OrdinanceError(f"`{path}`: fact `{relation}` does not fit the policy", code="bad_fixture")
            types = rel.types or ("symbol",) * rel.arity
            steps.append(Fact(relation, tuple(to_value(v, t) for v, t in zip(args, types))))
        if s.get("label") not in (None, "start"):
            visit(s["label"])
    return History(base, tuple(steps))

"""Privacy layers: every fact carries one; an audience's projection is the
projection of the log it may see, and nothing private reaches it."""

from __future__ import annotations

import io
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from ordinance.cli import cli
from ordinance.diagnostics import ProjectionError
from ordinance.facts import Event, export_jsonl, import_jsonl, kind_of, open_store, schema_of
from ordinance.project import Layers, Projector, records, rehydrate, render_state
from ordinance.testing.scenario import compile_policy
from ordinance.values import FOREVER, parse_instant

POLICY = compile_policy('.include "continuity"\n')
NOW = parse_instant("2026-08-14T23:45:00Z")
LAYERS = ["public", "federation", "sovereign", "architect"]
T0 = parse_instant("2026-08-14T22:00:00Z")
P = {"p": ("symbol",)}  # the schema of the store tests' one relation


def test_the_policy_sets_layers_audiences_and_the_default() -> None:
    layers = Layers.of(POLICY)
    assert layers.names() == LAYERS and layers.default == "public"
    assert layers.visible("public") == {"public"}
    assert layers.visible("sovereign") == {"public", "federation", "sovereign"}
    assert layers.visible(None) is None
    own = Layers.of(
        compile_policy(
            '.include "continuity"\nlayer("team", 1). default_layer("team").\n'
            'sees("mind-a", "mind-a"). layer("mind-a", 5).\n'
        )
    )
    assert own.default == "team" and "team" in own.visible("architect")
    with pytest.raises(ProjectionError) as err:
        own.visible("nobody")
    assert err.value.code == "unknown_audience"
    with pytest.raises(ProjectionError):
        Layers.of(compile_policy('.include "continuity"\ndefault_layer("a"). default_layer("b").\n'))


def test_a_stored_fact_cannot_widen_what_an_audience_sees(tmp_path: Path) -> None:
    from ordinance.diagnostics import StoreError

    with open_store(str(tmp_path / "s.db"), schema_of(POLICY)) as store:
        with pytest.raises(StoreError):  # `sees` is derived: the store never holds it
            store.append([Event("assert", "sees", ("public", "architect"), layer="public")])
        try:  # and a stored `layer` fact, if the store takes one, is never read
            store.append([Event("assert", "layer", ("public", 9), layer="public")])
        except StoreError:
            pass
        store.append([Event("assert", "open_item", ("x", "secret-plan"), layer="architect")])
        assert Layers.of(POLICY).visible("public") == {"public"}
        assert "secret-plan" not in render_state(store, POLICY, NOW, "public").text
        assert "secret-plan" in render_state(store, POLICY, NOW, "architect").text


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_layer_is_stored_exported_and_imported(backend: str, tmp_path: Path, request: Any) -> None:
    url = str(tmp_path / "s.db") if backend == "sqlite" else request.getfixturevalue("pg_url")
    with open_store(url, P) as store:
        store.append([Event("assert", "p", ("a",), layer="sovereign"), Event("assert", "p", ("b",))])
        events = store.events()
        assert [e.layer for e in events] == ["sovereign", "public"]
        out = io.StringIO()
        export_jsonl(store, out)
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    assert [x["layer"] for x in lines] == ["sovereign", "public"]
    with open_store(str(tmp_path / "copy.db"), P) as copy:
        import_jsonl(copy, io.StringIO(out.getvalue()))
        assert copy.events() == events
    old = {k: v for k, v in lines[0].items() if k != "layer"}  # an export from before layers
    with open_store(str(tmp_path / "old.db"), P) as copy:
        import_jsonl(copy, io.StringIO(json.dumps(old) + "\n"))
        assert copy.events()[0].layer == "public"


def test_an_existing_store_gains_the_layer_column(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.executescript("""CREATE TABLE events (seq INTEGER PRIMARY KEY, kind TEXT NOT NULL, relation TEXT NOT NULL,
        args TEXT NOT NULL, source TEXT NOT NULL, author TEXT NOT NULL, time TEXT NOT NULL, resource TEXT,
        epoch INTEGER, payload TEXT);
        INSERT INTO events VALUES (1, 'assert', 'p', '["a"]', 's', 'a', '2026-01-01T00:00:00.000000Z',
        NULL, NULL, NULL);""")
    db.commit()
    db.close()
    with open_store(str(path), P) as store:
        assert store.events()[0].layer == "public"
        store.append([Event("assert", "p", ("b",), layer="architect")])
        assert [e.layer for e in store.events()] == ["public", "architect"]
    with sqlite3.connect(path) as db:
        assert [r[1] for r in db.execute("PRAGMA table_info(events)")][-1] == "layer"


def test_an_empty_layer_is_refused(tmp_path: Path) -> None:
    from ordinance.diagnostics import StoreError

    with open_store(str(tmp_path / "s.db"), P) as store:
        with pytest.raises(StoreError) as err:
            store.append([Event("assert", "p", ("a",), layer="")])
        assert err.value.code == "bad_layer" and store.revision() == 0


# ---------------------------------------------------------------- the property

WORDS = [f"k{n:02d}" for n in range(12)]  # no word is a substring of another
word = st.sampled_from(WORDS)
when = st.integers(min_value=0, max_value=100).map(lambda m: T0 + 60 * m)
FACTS = st.one_of(
    st.tuples(st.just("open_item"), st.tuples(word, word)),
    st.tuples(st.just("resolved"), st.tuples(word, when)),
    st.tuples(st.just("told"), st.tuples(word, word, word)),
    st.tuples(st.just("claim"), st.tuples(word, word, st.just("state"), word)),
    st.tuples(st.just("claim_source"), st.tuples(word, word, st.sampled_from(["observed", "reported", "speculation"]))),
    st.tuples(st.just("claim_valid"), st.tuples(word, when, st.just(FOREVER))),
    st.tuples(st.just("correction"), st.tuples(word, word)),
    st.tuples(st.just("settled"), st.tuples(word, word)),
    st.tuples(st.just("lease"), st.tuples(word, word, st.integers(1, 2), when)),
    st.tuples(st.just("delegated"), st.tuples(word, word)),
    st.tuples(st.just("armed"), st.tuples(word, word, when)),
    st.tuples(st.just("receipt"), st.tuples(word, st.just("outcome"), word, when)),
    st.tuples(st.just("tracks"), st.tuples(word, word)),
)
HISTORY = st.lists(st.tuples(FACTS, st.sampled_from(LAYERS)), min_size=1, max_size=30)


def _load(url: str, history: list[tuple[tuple[str, tuple[Any, ...]], str]]) -> Any:
    """A store holding `history`, every event written at the same wall time."""
    lines = [
        json.dumps(
            Event(
                kind_of(rel), rel, args, "gen", "gen", seq=n, time="2026-08-14T20:00:00.000000Z", layer=layer
            ).to_json()
        )
        for n, ((rel, args), layer) in enumerate(history, 1)
    ]
    store = open_store(url, schema_of(POLICY))
    import_jsonl(store, io.StringIO("\n".join(lines) + "\n"))
    return store


def _content(projection: Any, store: Any) -> list[Any]:
    """A projection's lines with each event named by its content, not its seq."""
    events = {e.seq: (e.relation, e.args) for e in store.events()}
    return [
        (ln.section, ln.key, ln.text, ln.notes, ln.stamp, sorted(events[s] for s in ln.events))
        for ln in projection.lines
    ]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=HISTORY)
def test_the_public_projection_is_the_projection_of_the_public_log(history: Any, tmp_path_factory: Any) -> None:
    tmp = tmp_path_factory.mktemp("layers")
    full = _load(str(tmp / "full.db"), history)
    public = _load(str(tmp / "public.db"), [(f, layer) for f, layer in history if layer == "public"])
    try:
        seen = render_state(full, POLICY, NOW, "public", cap=None)
        alone = render_state(public, POLICY, NOW, None, cap=None)
        assert _content(seen, full) == _content(alone, public)
        head = re.compile(r" · revision \d+ · ")
        strip = lambda text: head.sub(" · ", text.replace("audience public", "audience all"))  # noqa: E731
        assert [re.sub(r"\(r[\d r]+\)$", "", x) for x in strip(seen.text).splitlines()] == [
            re.sub(r"\(r[\d r]+\)$", "", x) for x in strip(alone.text).splitlines()
        ]
        hidden = {w for (_, args), layer in history if layer != "public" for w in args if isinstance(w, str)}
        shown = {w for (_, args), layer in history if layer == "public" for w in args if isinstance(w, str)}
        # nor in any other public output: the bundle (state, open decisions, log) and the records
        bundle = rehydrate(full, POLICY, NOW, "public", bound=1 << 20, cap=1 << 20).text
        recorded = records(Projector(POLICY, full), "state", NOW, audience="public")
        for w in (hidden - shown) & set(WORDS):
            assert w not in seen.text and w not in bundle and w not in recorded, w
        for seq in {s for ln in seen.lines for s in ln.events}:  # and every cited event is public
            assert full.events(seq - 1, seq)[0].layer == "public"
    finally:
        full.close()
        public.close()


# ---------------------------------------------------------------- the commands


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("ORDINANCE_DB", raising=False)
    monkeypatch.delenv("ORDINANCE_POLICY", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "policy.rules").write_text('.include "continuity"\n')
    return tmp_path


def run(*args: str, input: str | None = None) -> Any:
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def test_assert_layer_and_audience_on_query_why_and_state(project: Path) -> None:
    claim = [
        'claim("c1", "db", "role", "primary").',
        'claim_source("c1", "ops", "observed").',
        'claim_valid("c1", 2026-08-14T12:00:00Z, forever).',
    ]
    assert run("assert", *claim, "--layer", "sovereign").exit_code == 0
    assert run("assert", 'open_item("rc", "review").').exit_code == 0
    with open_store(str(project / "ordinance.db")) as store:
        assert [e.layer for e in store.events()] == ["sovereign"] * 3 + ["public"]
    now = ["--now", "2026-08-14T23:00:00Z"]
    assert run("query", "current(C)", *now).output.count("c1") == 1
    public = run("query", "current(C)", *now, "--audience", "public")
    assert public.exit_code == 1 and "c1" not in public.output
    assert run("query", "current(C)", *now, "--audience", "sovereign").exit_code == 0
    assert run("why", 'current("c1")', *now, "--audience", "federation").exit_code == 1
    shown = run("why", 'current("c1")', *now, "--audience", "architect")
    assert shown.exit_code == 0 and "r3 assert by" in shown.output
    state = run("state", *now, "--audience", "public")
    assert "- rc: review" in state.output and "audience public" in state.output
    bad = CliRunner().invoke(cli, ["assert", 'open_item("x", "y").', "--layer", "secret"])
    assert bad.exit_code == 2 and "error[unknown_layer]" in bad.stderr
    bad = CliRunner().invoke(cli, ["state", *now, "--audience", "nobody"])
    assert bad.exit_code == 2 and "error[unknown_audience]" in bad.stderr


def test_load_takes_a_layer_per_line(project: Path) -> None:
    lines = (
        '{"relation": "open_item", "args": ["a", "x"], "layer": "architect"}\n'
        '{"relation": "open_item", "args": ["b", "y"]}\n'
    )
    assert run("load", "-", input=lines).exit_code == 0
    with open_store(str(project / "ordinance.db")) as store:
        assert [e.layer for e in store.events()] == ["architect", "public"]
    bad = CliRunner().invoke(cli, ["load", "-"], input='{"relation": "open_item", "args": ["c", "z"], "layer": "?"}\n')
    assert bad.exit_code == 2 and "layer `?` is not declared" in bad.stderr


def test_the_gate_writes_decisions_and_receipts_in_the_policys_default_layer(tmp_path: Path) -> None:
    from ordinance.gate import Gate, Request
    from ordinance.serve import Principal, Service

    policy = compile_policy('.include "continuity"\ndefault_layer("sovereign").\n')
    with open_store(str(tmp_path / "s.db"), schema_of(policy)) as store:
        store.assert_facts(
            [("grant", ("bob", "job", 1)), ("open_item", ("ship", "ship v2")), ("tracks", ("ship", "b1"))],
            layer="public",
        )
        gate = Gate(policy, store)
        before = store.revision()
        result = gate.guard(Request("b1", "deploy", "job", "bob", 1, scope="job"), lambda: "ok", NOW)
        assert result.completed, result
        gate.log([(Request("b2", "deploy", "job", "bob", 1, scope="job"), NOW)])
        Service(policy, store).check(
            Principal("bob", clock=True),
            {"request": {"id": "b3", "kind": "deploy", "target": "job", "epoch": 1, "scope": "job"}, "now": NOW},
        )
        written = store.events(before)
        assert {e.kind for e in written} == {"decision", "receipt", "assert"}  # action_scope is an assert
        assert {e.layer for e in written} == {"sovereign"}
        # so the receipt's "done" reaches the full view and the sovereign audience, not the public
        full = render_state(store, policy, NOW).text
        assert "- ship: ship v2 · done, unverified" in full
        assert "done" in render_state(store, policy, NOW, "sovereign").text
        public = render_state(store, policy, NOW, "public").text
        assert "- ship: ship v2 [" in public and "done" not in public and "bob" not in public

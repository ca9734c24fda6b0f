"""Run limits hold inside a round: exploding rounds end in `limit_exceeded`
within the limits, never MemoryError and never an unbounded run (issues 12
and 14). The limits here are small so that each test is quick."""

from __future__ import annotations

import pytest

from ordinance.diagnostics import LimitExceeded
from ordinance.engine import Limits, evaluate
from ordinance.engine.codegen import CHUNK
from ordinance.rules import compile_text


def exceeded(text: str, facts: dict | None = None, **limits: float) -> str:
    with pytest.raises(LimitExceeded) as info:
        evaluate(compile_text(text), facts, limits=Limits(**limits))  # type: ignore[arg-type]
    assert info.value.code == "limit_exceeded"
    return str(info.value)


def domain(n: int) -> dict[str, list[tuple[int]]]:
    return {"a": [(i,) for i in range(n)]}


def test_squaring_recursion_stops_at_64_bits() -> None:
    message = exceeded("p(2).\np(X * X) :- p(X).")
    assert "a number outside 64 bits" in message and "p(X * X) :- p(X)." in message


def test_a_5000_by_5000_cross_product_stops_inside_its_round() -> None:
    message = exceeded(
        ".decl a(x: number)\n.decl b(x: number)\np(X, Y) :- a(X), b(Y).",
        {"a": [(i,) for i in range(5000)], "b": [(i,) for i in range(5000)]},
        max_tuples=50_000,
    )
    assert "more than 50000 derived tuples" in message and "`p`" in message


def test_a_round_of_10_to_the_8_tuples_stops_inside_its_round() -> None:
    message = exceeded(".decl a(x: number)\np(X, Y, Z) :- a(X), a(Y), a(Z).", domain(465), max_tuples=200_000)
    assert "more than 200000 derived tuples" in message


def test_the_tuple_limit_inside_a_round_counts_only_new_tuples() -> None:
    # every round re-derives what the last one knew: candidates pass the limit, new tuples do not
    program = compile_text(".decl a(x: number)\np(X) :- a(X).\np(X) :- p(X), a(Y).")
    model = evaluate(program, domain(300), limits=Limits(max_tuples=400))
    assert len(set(model.tuples("p"))) == 300


def test_duplicate_matches_stop_at_the_match_limit() -> None:
    message = exceeded(".decl a(x: number)\nq(X) :- a(X), a(Y), a(Z), Y != Z.", domain(800), max_matches=10 * CHUNK)
    assert f"more than {10 * CHUNK} matches" in message


def test_atoms_of_only_wildcards_are_tests_not_matches() -> None:
    # 1000^3 duplicate matches if enumerated; one test each instead
    program = compile_text(".decl a(x: number)\n.decl b(x: number)\nq() :- a(_), b(_), a(_).\nr(X) :- a(X), b(_).")
    facts = {"a": [(i,) for i in range(1000)], "b": [(i,) for i in range(1000)]}
    model = evaluate(program, facts, limits=Limits(max_matches=5000))
    assert set(model.tuples("q")) == {()}
    assert len(set(model.tuples("r"))) == 1000


def test_aggregate_bodies_are_bounded_too() -> None:
    message = exceeded(
        ".decl a(x: number)\nn(N) :- N = count : { a(X), a(Y), a(Z) }.", domain(300), max_matches=20 * CHUNK
    )
    assert "matches" in message


def test_the_deadline_holds_inside_a_round() -> None:
    message = exceeded(".decl a(x: number)\np(X, Y, Z) :- a(X), a(Y), a(Z).", domain(300), deadline=0.0)
    assert "deadline of 0 seconds passed" in message


def test_limits_between_rounds_still_hold() -> None:
    assert "iterations" in exceeded("n(0).\nn(X) :- n(Y), X = Y + 1.", max_iterations=50)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("p(1).\np(X + X) :- p(X).", "p(X + X) :- p(X)."),
        ("p(-9223372036854775807).\np(X - 5) :- p(X).", "p(X - 5) :- p(X)."),
        ("p(9223372036854775807 + 1).", "in a fact"),
    ],
)
def test_sums_and_differences_stop_at_64_bits_like_products(text: str, where: str) -> None:
    message = exceeded(text)
    assert "a number outside 64 bits" in message and where in message


def test_unsigned_sums_wrap_around_and_floats_grow() -> None:
    model = evaluate(
        compile_text(
            ".decl u(x: unsigned)\n.decl f(x: float)\n"
            "u(X) :- X = 18446744073709551615u + 2u.\nf(X) :- X = 9.0e18 + 9.0e18."
        )
    )
    assert set(model.tuples("u")) == {(1,)} and set(model.tuples("f")) == {(1.8e19,)}


def test_a_doubling_symbol_stops_at_the_symbol_limit() -> None:
    """`s(cat(X, X)) :- s(X).` doubles one symbol a round: few tuples, but
    gigabytes by round 32; the symbol limit stops it, naming the limit."""
    doubling = '.decl s(x: symbol)\ns("ab").\ns(cat(X, X)) :- s(X).'
    message = exceeded(doubling)
    assert "a symbol longer than 1,000,000 characters" in message and "s(cat(X, X)) :- s(X)." in message
    assert "longer than 1,000 characters" in exceeded(doubling, max_symbol=1000)


def test_the_symbol_limit_is_a_run_limit() -> None:
    model = evaluate(compile_text('.decl s(x: symbol)\ns(cat("ab", "cd")).\nt(cat(X, X)) :- s(X).'))
    assert model.tuples("t") == {("abcdabcd",)}
    with pytest.raises(LimitExceeded):
        evaluate(compile_text('.decl s(x: symbol)\ns("abc").\nt(cat(X, X)) :- s(X).'), limits=Limits(max_symbol=5))
    big = "x" * 2_000_000
    model = evaluate(
        compile_text(".decl s(x: symbol)\nt(cat(X, X)) :- s(X)."), {"s": [(big,)]}, limits=Limits(max_symbol=None)
    )
    assert len(next(iter(model.tuples("t")))[0]) == 4_000_000


def test_a_request_derives_at_most_request_tuples_the_store_more(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request's own evaluation (its overlay) is bounded by REQUEST_TUPLES,
    so no request makes (and then frees) millions of tuples while other
    threads wait for the interpreter; the store's evaluation keeps the
    engine's limit (here the warm model derives more than a request may)."""
    import ordinance.gate.core as core
    from ordinance.facts import open_store, schema_of
    from ordinance.gate import Gate, Request

    monkeypatch.setattr(core, "REQUEST_TUPLES", 100)
    policy = compile_text(
        '.include "continuity"\n'
        ".decl size(n: number)\n.decl request_size(a: symbol, n: number)\n"
        ".decl many(x: number)\nmany(X) :- size(N), X = range(0, N).\n"
        ".decl mine(a: symbol, x: number)\nmine(A, X) :- request_size(A, N), X = range(0, N).\n"
        'forbid(A, "many", "x") :- mine(A, X), X < 0.\n'
    )
    with open_store(store_url, schema_of(policy)) as store:
        store.assert_facts([("size", (500,)), ("grant", ("alice", "w", 1))])
        gate = Gate(policy, store)
        small = gate.decide(Request("a1", "write", "w", "alice", 1, attributes=(("request_size", (50,)),)), 0)
        assert small.allowed and len(gate.model(small.revision, 0).tuples("many")) == 500
        big = gate.decide(Request("a2", "write", "w", "alice", 1, attributes=(("request_size", (500,)),)), 0)
        assert not big.allowed and big.reasons[0].code == "limit_exceeded"
        assert "more than 100 derived tuples" in big.reasons[0].detail
        with pytest.raises(LimitExceeded):  # a query's overlay (the server's /query, /why) too
            gate.overlay(Request("a3", "write", "w", "alice", 1, attributes=(("request_size", (500,)),)), 0)

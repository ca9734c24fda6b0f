"""`inline` relations (issue 24): replaced where they are used, so the
relation they stand for is never computed (Soufflé's `inline_nats`)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from naive import naive_evaluate
from ordinance.diagnostics import OrdinanceError
from ordinance.engine import evaluate, why
from ordinance.explain import to_text
from ordinance.rules import compile_text, format_program, parse
from ordinance.rules.printer import format_rule

NATS = """
.decl nat(x: number)
nat(0).
nat(x + 1) :- x < {n}, nat(x).
.decl nat_pair(x: number, y: number) inline
nat_pair(x, y) :- nat(x), nat(y).
.decl query(x: number)
query(x) :- nat_pair(x, x), x < 2.
"""


def test_an_inline_relation_is_replaced_where_it_is_used() -> None:
    program = compile_text(NATS.format(n=20))
    model = evaluate(program)
    assert set(model.tuples("query")) == {(0,), (1,)} == naive_evaluate(program)["query"]
    assert set(model.tuples("nat_pair")) == set()  # never computed
    assert "nat(0)  fact" in to_text(why(model, "query", (1,)))
    assert "inline" in format_program(parse(NATS.format(n=20)))


def test_souffles_inline_nats_does_not_build_the_cross_product() -> None:
    # nat_pair over 10001 numbers is 10^8 tuples: without inlining the run
    # exceeds the tuple limit; the subprocess's timeout is generous
    code = (
        "from ordinance.engine import evaluate\nfrom ordinance.rules import compile_text\n"
        f"print(sorted(evaluate(compile_text({NATS.format(n=10000)!r})).tuples('query')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[(0,), (1,)]"


def test_an_inline_relation_with_several_rules_constants_and_a_negation() -> None:
    text = (
        ".decl e(a: number, b: number)\ne(1, 2). e(2, 3). e(3, 3).\n"
        ".decl link(a: number, b: number) inline\nlink(X, Y) :- e(X, Y), X != Y.\nlink(X, X) :- e(_, X).\n"
        "two(X) :- link(X, 3).\nboth(X) :- link(X, Y), link(Y, _), !link(X, X).\n"
    )
    program = compile_text(text)
    model = evaluate(program)
    reference = naive_evaluate(program)
    assert set(model.tuples("two")) == reference["two"] == {(2,), (3,)}
    assert set(model.tuples("both")) == reference["both"]
    assert set(model.tuples("link")) == reference["link"] != set()  # negated: kept


def test_a_recursive_inline_relation_is_refused() -> None:
    with pytest.raises(OrdinanceError) as info:
        compile_text(".decl p(x: number) inline\np(1).\np(X + 1) :- p(X), X < 3.\nq(X) :- p(X).")
    assert info.value.code == "unsupported"
    assert "`p` is `inline` and depends on itself" in str(info.value)


def test_an_inlined_head_variable_takes_the_atoms_variable() -> None:
    # the join then binds through the body's own atoms (an index probe),
    # not an equality tested after a scan; a head variable repeated in the
    # definition still equates the atom's arguments
    text = """
.decl edge(x: symbol, y: symbol)
edge("a", "b"). edge("b", "b"). edge("c", "d").
.decl to(x: symbol, y: symbol) inline
to(X, Y) :- edge(X, Y).
.decl loop(x: symbol, y: symbol) inline
loop(X, X) :- edge(X, X).
.decl out(x: symbol, y: symbol)
out(P, Q) :- to(P, Q), P != "c".
.decl self(x: symbol, y: symbol)
self(P, Q) :- loop(P, Q).
"""
    program = compile_text(text)
    [out] = [r for r in program.rules if r.head.relation == "out"]
    assert format_rule(out) == 'out(P, Q) :- edge(P, Q), P != "c".'
    model = evaluate(program)
    assert set(model.tuples("out")) == {("a", "b"), ("b", "b")} == naive_evaluate(program)["out"]
    assert set(model.tuples("self")) == {("b", "b")} == naive_evaluate(program)["self"]


def test_an_inlined_program_hashes_the_same_in_every_process() -> None:
    # the fresh names inlining makes must not follow a set's order (string
    # hashing differs per process): a logged decision's policy hash would
    # then differ from the replaying process's
    code = "from ordinance.rules import compile_text\nprint(compile_text('.include \"continuity\"\\n').source_hash)"
    hashes = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(hashes) == 1 and len(hashes.pop().strip()) == 64

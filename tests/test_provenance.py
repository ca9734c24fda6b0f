"""why / why-not and their renderings."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator

import networkx as nx

from ordinance.engine import ProofNode, evaluate, extend, overlay, why, why_not
from ordinance.explain import to_dot, to_json, to_text
from ordinance.rules import compile_text as program

TC = """
path(X, Y) :- edge(X, Y).
path(X, Z) :- path(X, Y), edge(Y, Z).
"""


def tc(edges):
    return evaluate(program(TC, extensional={"edge": 2}), {"edge": edges})


def leaves(node: ProofNode) -> list[ProofNode]:
    return [node] if not node.children else [x for c in node.children for x in leaves(c)]


def depth(node: ProofNode) -> int:
    """Levels of the tree (walked with a stack: proofs can be deep)."""
    most, stack = 0, [(node, 1)]
    while stack:
        n, d = stack.pop()
        most = max(most, d)
        stack.extend((c, d + 1) for c in n.children)
    return most


@contextlib.contextmanager
def stack_of(room: int) -> Iterator[None]:
    """Python's recursion limit set `room` frames above the caller's, for the block."""
    before = sys.getrecursionlimit()
    frames, f = 0, sys._getframe()
    while f is not None:
        frames, f = frames + 1, f.f_back
    sys.setrecursionlimit(frames + room)
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


def test_why_rebuilds_a_proof_from_facts():
    m = tc([(1, 2), (2, 3), (3, 4)])
    proof = why(m, "path", (1, 4))
    assert proof is not None and proof.kind == "rule" and proof.rule == 1
    assert proof.rule_text == "path(X, Z) :- path(X, Y), edge(Y, Z)."
    assert dict(proof.bindings) == {"X": 1, "Y": 3, "Z": 4}
    facts = [(n.relation, n.tuple) for n in leaves(proof)]
    assert facts == [("edge", (1, 2)), ("edge", (2, 3)), ("edge", (3, 4))]

    # every premise was known at a smaller height
    def check(n: ProofNode) -> None:
        for c in n.children:
            if c.kind == "rule":
                assert c.height < n.height
            check(c)

    check(proof)


def test_why_picks_a_minimal_height_proof():
    # 1 -> 4 directly and through a long detour: the proof is the direct edge
    m = tc([(1, 2), (2, 3), (3, 4), (1, 4)])
    proof = why(m, "path", (1, 4))
    assert proof is not None and proof.rule == 0 and depth(proof) == 2


def test_why_of_something_not_in_the_model_is_none():
    assert why(tc([(1, 2)]), "path", (2, 1)) is None


def test_why_shows_absent_holds_and_aggregate_leaves():
    text = """
    ok(X) :- person(X), !banned(X), age(X, A), A >= 18.
    popular(X, N) :- person(X), N = count : { likes(_, X) }, N > 1.
    """
    facts = {
        "person": [("ann",), ("bob",)],
        "banned": [("bob",)],
        "age": [("ann", 30), ("bob", 40)],
        "likes": [("bob", "ann"), ("cy", "ann")],
    }
    m = evaluate(program(text, extensional={"person": 1, "banned": 1, "age": 2, "likes": 2}), facts)
    proof = why(m, "ok", ("ann",))
    assert proof is not None
    kinds = [(c.kind, c.text or c.relation) for c in proof.children]
    assert kinds == [("fact", "person"), ("absent", '!banned("ann")'), ("fact", "age"), ("holds", "30 >= 18")]
    pop = why(m, "popular", ("ann", 2))
    assert pop is not None
    agg = [c for c in pop.children if c.kind == "aggregate"]
    assert len(agg) == 1 and agg[0].text == 'count : { likes(_, "ann") } = 2'


def test_why_not_names_the_first_failing_literal_and_what_would_make_it_hold():
    m = tc([(1, 2), (2, 3)])
    answer = why_not(m, "path", (1, 9))
    assert not answer.holds and len(answer.failures) == 2
    direct, step = answer.failures
    assert direct.rule == 0 and direct.kind == "missing" and direct.text == "edge(1, 9)"
    assert direct.needed == (("edge", (1, 9)),)
    # best partial binding: path(1, Y) holds for Y = 2 or 3, then edge(Y, 9) is missing
    assert step.rule == 1 and step.kind == "missing" and step.text in ("edge(2, 9)", "edge(3, 9)")


def test_why_not_recurses_into_derived_relations_to_the_depth_bound():
    text = """
    allowed(A) :- request(A, W), trusted(W).
    trusted(W) :- vouched(W, V), trusted(V).
    trusted(W) :- root(W).
    """
    m = evaluate(program(text, extensional={"request": 2, "vouched": 2, "root": 1}), {"request": [("a1", "w")]})
    answer = why_not(m, "allowed", ("a1",), depth=3)
    (f,) = answer.failures
    assert f.text == 'trusted("w")' and f.kind == "missing"
    (child,) = f.children
    assert child.relation == "trusted" and child.tuple == ("w",)
    assert {g.text for g in child.failures} == {'vouched("w", V)', 'root("w")'}
    assert why_not(m, "allowed", ("a1",), depth=1).failures[0].children == ()


def test_why_not_reports_blocking_facts_and_false_comparisons():
    text = "ok(X) :- person(X), !banned(X), age(X, A), A >= 18."
    facts = {"person": [("bob",), ("cy",)], "banned": [("bob",)], "age": [("bob", 40), ("cy", 12)]}
    m = evaluate(program(text, extensional={"person": 1, "banned": 1, "age": 2}), facts)
    (bob,) = why_not(m, "ok", ("bob",)).failures
    assert bob.kind == "present" and bob.needed == (("banned", ("bob",)),)
    (cy,) = why_not(m, "ok", ("cy",)).failures
    assert cy.kind == "false" and cy.text == "12 >= 18"
    assert why_not(m, "person", ("cy",)).holds
    nobody = why_not(m, "person", ("zed",))
    assert not nobody.holds and nobody.failures == ()


def test_renderers():
    m = tc([(1, 2), (2, 3)])
    proof = why(m, "path", (1, 3))
    assert proof is not None
    data = to_json(proof)
    json.dumps(data)
    assert data["kind"] == "rule" and data["tuple"] == [1, 3] and len(data["children"]) == 2
    text = to_text(proof, annotate=lambda rel, t: "source: test" if t == (2, 3) else None)
    lines = text.splitlines()
    assert lines[0].startswith("path(1, 3)  by rule 1")
    assert "  edge(2, 3)  fact  (source: test)" in lines
    assert any(line.startswith("    edge(1, 2)  fact") for line in lines)
    dot = to_dot(proof)
    assert dot.startswith("digraph proof {") and dot.count("->") == 3
    nodes = [line for line in dot.splitlines() if "[label=" in line]
    assert len(nodes) == 4
    wn = why_not(m, "path", (3, 1))
    assert "does not hold" in to_text(wn)
    assert to_json(wn)["failures"][0]["needed"] == [{"relation": "edge", "tuple": [3, 1]}]
    assert to_dot(wn).startswith("digraph")
    # the DOT text is what networkx would hold: one node per proof node
    g = nx.DiGraph(
        [(line.split("->")[0].strip(), line.split("->")[1].strip(" ;")) for line in dot.splitlines() if "->" in line]
    )
    assert nx.is_arborescence(g)


def _graph(seed: int, n: int = 12, m: int = 40) -> list[tuple[str, str]]:
    import random

    rnd = random.Random(seed)
    return sorted({(f"n{rnd.randrange(n)}", f"n{rnd.randrange(n)}") for _ in range(m)})


def _proofs(model) -> dict:
    return {t: to_json(why(model, "path", t)) for t in sorted(model.tuples("path"))}


def _why_nots(model) -> dict:
    return {t: to_json(why_not(model, "path", t)) for t in [("n0", "zz"), ("zz", "n1"), ("n3", "n0")]}


def test_proofs_do_not_depend_on_the_order_facts_arrived_in():
    import random

    for seed in range(4):
        edges = _graph(seed)
        shuffled = list(edges)
        random.Random(seed).shuffle(shuffled)
        first, second = tc(edges), tc(list(reversed(edges)))
        third = tc(shuffled[:5])  # the rest arrives later, in two batches
        extend(third, {"edge": shuffled[5:20]})
        extend(third, {"edge": shuffled[20:]})
        assert _proofs(first) == _proofs(second) == _proofs(third)
        assert _why_nots(first) == _why_nots(second) == _why_nots(third)


def test_proofs_after_extend_and_in_overlays_equal_fresh_ones():
    for seed in range(4):
        edges = _graph(seed + 10)
        fresh = tc(edges)
        grown = tc(edges[::3])
        extend(grown, {"edge": [e for i, e in enumerate(edges) if i % 3]})
        # heights included: an extended model renumbers before proving
        assert _proofs(grown) == _proofs(fresh)
        scratch = overlay(tc(edges[1::2]), {"edge": edges[::2]})
        assert _proofs(scratch) == _proofs(fresh)
    # the shortcut case: a new fact gives an old tuple a shorter proof
    m = tc([(1, 2), (2, 3), (3, 4)])
    assert depth(why(m, "path", (1, 4))) == 4
    extend(m, {"edge": [(1, 4)]})
    assert to_json(why(m, "path", (1, 4))) == to_json(why(tc([(1, 2), (2, 3), (3, 4), (1, 4)]), "path", (1, 4)))


def test_a_proof_deeper_than_the_stack_is_built_and_rendered_in_full():
    from ordinance.explain import MAX_INDENT
    from ordinance.explain.proof import MAX_JSON_DEPTH
    from ordinance.explain import explain_text
    from ordinance.gate import Decision, Reason, Request

    # deeper than the frames left on the stack: nothing builds or renders it by recursing a level a
    # frame. The stack is cut to `room` frames above this one (a frame a level would need `n`)
    # rather than the proof grown past Python's default limit of 1000: building `why` takes time
    # quadratic in the depth (1200 took 43 s in a loaded suite, 400 takes a ninth of it)
    n, room = 400, 300
    assert n > room and n > MAX_JSON_DEPTH
    prog = program("p(Y) :- p(X), step(X, Y).", extensional={"p": 1, "step": 2})
    m = evaluate(prog, {"p": [(0,)], "step": [(i, i + 1) for i in range(n)]})
    with stack_of(room):
        proof = why(m, "p", (n,))
        assert proof is not None and depth(proof) == n + 1
        lines = to_text(proof, program=prog).splitlines()
        data = to_json(proof, program=prog)
    assert len(lines) == 2 * n + 1  # every rule node and fact leaf, none dropped
    assert any(line.endswith(f"[depth {n}] p(0)  fact") for line in lines)
    assert max(len(line) - len(line.lstrip()) for line in lines) == 2 * MAX_INDENT
    text = json.dumps(data, indent=2)  # nesting is bounded, so this does not recurse too deep
    assert text.count('"kind": "elided"') == 1 and "ask `why` of this fact" in text
    node = data
    for _ in range(MAX_JSON_DEPTH):
        node = node["children"][0]
    assert node["kind"] == "elided" and node["tuple"] == [n - MAX_JSON_DEPTH]
    # a decision citing it carries the whole proof in its text
    d = Decision(Request("a", "k", "t", "x", 1), False, (Reason("deep", "t", prover=lambda: proof),), 0, "h", 0)
    from ordinance.explain.decision import UNBLOCK_SHOWN

    unblock = 1 + UNBLOCK_SHOWN + 1  # "to unblock, one of:", the first changes, "... N more"
    with stack_of(room):
        assert len(explain_text(d, program=prog).splitlines()) == 3 + 2 * n + 1 + unblock


def test_a_head_expression_over_body_variables_has_a_proof() -> None:
    # `D + 1` is known only once the body binds `D`: it is checked then, not refused at unification
    model = evaluate(
        program(
            ".decl e(a: number, b: number)\n.decl d(n: number, x: number)\n"
            "e(1, 2). e(2, 3). d(1, 0).\nd(B, D + 1) :- d(A, D), e(A, B)."
        )
    )
    proof = why(model, "d", (3, 2))
    assert proof is not None and dict(proof.bindings) == {"B": 3, "A": 2, "D": 1}
    assert why(model, "d", (3, 5)) is None
    assert not why_not(model, "d", (3, 5)).holds


def test_why_proves_a_fact_whose_head_is_an_expression():
    # the head `len(L, N + 1)` is matched once the body has bound N (it used to find no proof)
    p = program(
        ".decl e(x: number)\n.decl len(a: number, n: number)\nlen(0, 0).\nlen(L, N + 1) :- e(L), len(L, N), N < 3.",
        extensional={"e": 1},
    )
    m = evaluate(p, {"e": [(0,)]})
    proof = why(m, "len", (0, 2))
    assert proof is not None and proof.rule == 1 and proof.bindings == (("L", 0), ("N", 1))


def test_why_not_shows_the_expression_of_a_failing_equation_not_its_value() -> None:
    # issue 24: `fails at D = 2` read as though the rule said `D = 2`
    model = evaluate(program("a(1, 3).\nok(X, D) :- a(X, Y), D = Y - X.\nok2(X) :- a(X, Y), D = 7, D = Y - X."))
    assert "fails at 5 = 3 - 1: is false" in to_text(why_not(model, "ok", (1, 5)))
    assert "fails at 7 = 3 - 1: is false" in to_text(why_not(model, "ok2", (1,)))
    assert "D = 2" not in to_text(why_not(model, "ok", (1, 5)))


def test_why_not_shows_a_failing_aggregate_as_written_not_its_value() -> None:
    # issue 24: `fails at 7 = 3` for `N = count : {...}` read as though the
    # rule compared N with 3; the aggregate is shown with its outer values
    model = evaluate(
        program(
            "e(1, 2). e(1, 3). e(1, 4).\n"
            "quiet(X, N) :- e(X, _), N = count : { e(X, _) }.\n"
            "few(X) :- e(X, _), count : { e(X, _) } < 2.\n"
            "low(X, M) :- e(X, _), M = min Y : { e(X, Y) }."
        )
    )
    assert "fails at 7 = count : { e(1, _) }: is false" in to_text(why_not(model, "quiet", (1, 7)))
    assert "fails at count : { e(1, _) } < 2: is false" in to_text(why_not(model, "few", (1,)))
    assert "fails at 9 = min Y : { e(1, Y) }: is false" in to_text(why_not(model, "low", (1, 9)))

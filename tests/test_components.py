"""Components (`.comp`, `.init`, type parameters, inheritance, `.override`),
expanded as Soufflé does. The programs and answers are the examples of
Soufflé's language reference (souffle-lang.github.io/components)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ordinance.diagnostics import CheckError, ParseError
from ordinance.engine import evaluate, why
from ordinance.explain import to_text
from ordinance.rules import CheckedProgram, ast, compile_text, format_program, load, parse


def tuples_of(model: Any) -> dict[str, set[tuple[Any, ...]]]:
    return {name: set(model.tuples(name)) for name in model.relations}


def answers(text: str) -> dict[str, set[tuple[Any, ...]]]:
    return tuples_of(evaluate(compile_text(text, "c.rules")))


def codes(text: str) -> list[str]:
    with pytest.raises((CheckError, ParseError)) as e:
        compile_text(text, "c.rules")
    return [d.code for d in e.value.diagnostics]


MY_COMPONENT = """
.comp MyComponent {
    .type myType = number
    .decl TheAnswer(x:myType)    // component relation
    TheAnswer(42).               // component fact
}
"""


# Soufflé's example of `.override`
OVERRIDE = """
.comp Base {
    .decl R(x:number) overridable
    R(1).
    R(x+1) :- R(x), x < 5.
    .output R
}
.comp Sub : Base {
    .override R
    R(2).
    R(x+1) :- R(x), x < 4.
}
.init mySub = Sub
"""


# ---------------------------------------------------------------- accepted


def test_each_instance_has_its_own_qualified_relations() -> None:
    got = answers(
        MY_COMPONENT
        + """
.init myInstance1 = MyComponent
.init myInstance2 = MyComponent
myInstance2.TheAnswer(33).
.decl Test(x:number)
Test(x) :- myInstance1.TheAnswer(x).
Test(x) :- myInstance2.TheAnswer(x).
.output Test
"""
    )
    assert got["Test"] == {(42,), (33,)}
    assert got["myInstance1.TheAnswer"] == {(42,)}
    assert got["myInstance2.TheAnswer"] == {(42,), (33,)}


def test_an_instance_declares_its_types_and_relations_under_its_name() -> None:
    program = compile_text(MY_COMPONENT + ".init myInstance1 = MyComponent\n", "c.rules")
    rel = program.relations["myInstance1.TheAnswer"]
    assert rel.decl is not None and rel.decl.types == ("myInstance1.myType",)
    assert rel.types == ("number",)
    assert "TheAnswer" not in program.relations  # a component alone declares nothing


def test_a_relation_the_component_does_not_declare_is_resolved_where_it_is_instantiated() -> None:
    got = answers("""
.decl Out(x:number)
.comp A {
   .decl R(x:number)
   .comp Count {
       R(1).                  // fact accessing R outside of Count
       R(x+1):- R(x), x<10.   // rule accessing R outside of Count
   }
   .init myCount = Count      // instantiate Count
   Out(x) :- R(x).            // rule accessing Out outside of A
}
.init myA = A
.output Out
""")
    assert got["Out"] == {(x,) for x in range(1, 11)}
    assert got["myA.R"] == got["Out"]
    assert not any(name.startswith("myA.myCount") for name in got)


def test_a_component_sees_its_own_type_parameters_only() -> None:
    # Soufflé's binding: `Inner` does not see `Outer`'s `T`, so `T` is the program's type
    got = compile_text(
        """
.type T = symbol
.comp Outer<T> {
  .comp Inner { .decl r(x: T) }
  .init i = Inner
  .decl s(x: T)
}
.init o = Outer<number>
""",
        "c.rules",
    )
    assert got.relations["o.i.r"].types == ("symbol",)
    assert got.relations["o.s"].types == ("number",)
    # nor can it name a component through it
    assert codes(".comp One { }\n.comp Outer<S> { .comp In : S { } .init i = In }\n.init o = Outer<One>") == [
        "unknown_component"
    ]


def test_the_parameter_of_a_base_passes_through_nested_declarations() -> None:
    # Soufflé's tests/semantic/comp_params: `_Top<A>` reaches `.init X = Q` through `_Foo<Z> : _Bar<Z>`
    got = answers("""
.comp A { .decl x(s: symbol) x("A"). }
.comp B { .decl x(s: symbol) x("B"). }
.comp _Top<Z> {
  .comp _Foo<Z> : _Bar<Z> { }
  .comp _Bar<Q> {
    .init X = Q
    .output X.x()
  }
  .init Foo = _Foo<Z>
}
.init TopA = _Top<A>
.init TopB = _Top<B>
""")
    assert got["TopA.Foo.X.x"] == {("A",)} and got["TopB.Foo.X.x"] == {("B",)}


def test_nested_instances_are_named_by_every_enclosing_instance() -> None:
    got = answers("""
.comp Outer {
  .comp Inner { .decl r(x: number) r(1). }
  .init i = Inner
  .decl s(x: number)
  s(X + 1) :- i.r(X).
}
.init o = Outer
.decl t(x: number)
t(X) :- o.s(X), o.i.r(Y), Y < X.
""")
    assert got["o.i.r"] == {(1,)} and got["o.s"] == {(2,)} and got["t"] == {(2,)}


def test_type_parameters_become_the_types_of_declarations() -> None:
    source = """
.comp ParamComponent<myType> {
    .decl TheAnswer(x:myType)    // component relation
    TheAnswer(42).               // component fact
    .output TheAnswer            // component output directive
}
.init numberInstance = ParamComponent<number>
.init floatInstance = ParamComponent<float>
"""
    program = compile_text(source, "c.rules")
    assert program.relations["numberInstance.TheAnswer"].types == ("number",)
    assert program.relations["floatInstance.TheAnswer"].types == ("float",)
    assert [d.relation for d in program.io] == ["numberInstance.TheAnswer", "floatInstance.TheAnswer"]
    got = tuples_of(evaluate(program))
    assert got["numberInstance.TheAnswer"] == {(42,)}
    [(value,)] = got["floatInstance.TheAnswer"]
    assert value == 42.0 and isinstance(value, float)


def test_a_type_parameter_names_the_component_to_instantiate() -> None:
    case = """
.decl R(x:number)
.comp Case<Selector> {
   .comp One {
     R(1).
   }
   .comp Two {
     R(2).
   }
   .init selection = Selector
}
.init myCase = Case<{}>
.output R
"""
    assert answers(case.replace("{}", "One"))["R"] == {(1,)}
    assert answers(case.replace("{}", "Two"))["R"] == {(2,)}


def test_a_sub_component_inherits_its_base_components_items() -> None:
    program = compile_text(
        """
.comp Base {
    .type myNumber = number
    .decl TheAnswer(x:myNumber)
    TheAnswer(42).
}
.comp Sub : Base {
    .decl WhatIsTheAnswer(n:myNumber)
    WhatIsTheAnswer(n) :- TheAnswer(n).
    .output WhatIsTheAnswer
}
.init mySub = Sub
""",
        "c.rules",
    )
    decl = program.relations["mySub.WhatIsTheAnswer"].decl
    assert decl is not None and decl.types == ("mySub.myNumber",)
    assert tuples_of(evaluate(program))["mySub.WhatIsTheAnswer"] == {(42,)}


def test_several_bases_and_type_arguments_passed_to_a_base() -> None:
    got = answers("""
.comp Graph<N> {
  .decl edge(a: N, b: N)
  .decl reach(a: N, b: N)
  reach(X, Y) :- edge(X, Y).
  reach(X, Z) :- reach(X, Y), edge(Y, Z).
}
.comp Named { .decl label(s: symbol) label("g"). }
.comp SymbolGraph<T> : Graph<T>, Named {
  edge("a", "b"). edge("b", "c").
}
.init g = SymbolGraph<symbol>
""")
    assert got["g.reach"] == {("a", "b"), ("b", "c"), ("a", "c")}
    assert got["g.label"] == {("g",)}
    # Soufflé's grammar also separates bases with `:`
    assert parse(".comp S : A : B<number> { }").items == parse(".comp S : A, B<number> { }").items


def test_override_drops_the_base_components_rules_and_facts() -> None:
    got = answers(OVERRIDE + ".init myBase = Base\n")
    assert got["mySub.R"] == {(2,), (3,), (4,)}
    assert got["myBase.R"] == {(1,), (2,), (3,), (4,), (5,)}


def test_override_reaches_through_every_level_of_bases() -> None:
    got = answers("""
.comp A { .decl R(x: number) overridable  R(1). }
.comp B : A { R(2). }
.comp C : B { .override R  R(3). }
.init c = C
.init b = B
""")
    assert got["c.R"] == {(3,)}
    assert got["b.R"] == {(1,), (2,)}


def test_a_subsumption_inside_a_component_applies_to_each_instance_alone() -> None:
    got = answers("""
.comp Best {
    .decl cost(n: number)
    cost(N) <= cost(M) :- M < N.
}
.init a = Best
.init b = Best
a.cost(3). a.cost(5). b.cost(7). b.cost(9).
""")
    assert got["a.cost"] == {(3,)}
    assert got["b.cost"] == {(7,)}


def test_an_override_drops_the_base_components_subsumption_too() -> None:
    got = answers("""
.comp Base {
    .decl cost(n: number) overridable
    cost(N) <= cost(M) :- M < N.
    cost(3). cost(5).
}
.comp All : Base { .override cost  cost(4). cost(6). }
.init all = All
""")
    assert got["all.cost"] == {(4,), (6,)}


def test_records_and_constructors_in_an_instance_read_its_own_relations() -> None:
    got = answers("""
.type P = [x: number, y: number]
.type S = Dot {p: P} | Empty {}
.comp Geo {
    .decl start(n: number)
    .decl made(p: P)
    .decl shape(s: S)
    start(1). start(2).
    made([N, C]) :- start(N), C = count : { start(_) }.
    shape($Dot([N, M])) :- made([N, M]).
}
.init g = Geo
.init h = Geo
h.start(3).
""")
    assert got["g.made"] == {((1, 2),), ((2, 2),)}
    assert got["h.made"] == {((1, 3),), ((2, 3),), ((3, 3),)}
    assert len(got["h.shape"]) == 3


def test_clauses_inside_a_component_are_expanded_like_any_other() -> None:
    got = answers("""
.comp C {
  .decl n(x: number) .decl small(x: number) .decl odd(x: number)
  .decl same(a: number, b: number) eqrel
  n(1). n(2). n(3).
  small(X), odd(X) :- n(X), (X < 2 ; X = 3).
  same(1, 2).
}
.init c = C
""")
    assert got["c.small"] == got["c.odd"] == {(1,), (3,)}
    assert got["c.same"] == {(1, 1), (1, 2), (2, 1), (2, 2)}


def test_components_from_an_included_file(tmp_path: Path) -> None:
    (tmp_path / "lib.rules").write_text(".comp Counter<T> { .decl seen(x: T) }\n")
    (tmp_path / "main.rules").write_text('.include "lib"\n.init words = Counter<symbol>\nwords.seen("a").\n')
    program = load(tmp_path / "main.rules")
    assert tuples_of(evaluate(program))["words.seen"] == {("a",)}


def test_an_uninstantiated_component_with_open_parameters_is_fine() -> None:
    program = compile_text(".comp Case<S> { .init x = S }\n.comp G<T> : T { }\n.decl r(x: number)\n", "c.rules")
    assert set(program.relations) == {"r"}


# ---------------------------------------------------------------- rejected


def test_unknown_component() -> None:
    assert codes(".init g = Graph") == ["unknown_component"]
    assert codes(".comp Sub : Base { }\n.init s = Sub") == ["unknown_component"]
    # a nested component is visible only inside its component
    assert codes(".comp A { .comp In { } }\n.init x = In") == ["unknown_component"]
    # a type argument that names no component
    assert codes(".comp Case<S> { .init x = S }\n.init c = Case<Nope>") == ["unknown_component"]


def test_wrong_number_of_type_arguments() -> None:
    assert codes(".comp G<T> { .decl e(a: T) }\n.init g = G") == ["type_argument_count"]
    assert codes(".comp G<T> { .decl e(a: T) }\n.init g = G<number, symbol>") == ["type_argument_count"]
    assert codes(".comp G<T> { }\n.comp H : G { }") == ["type_argument_count"]  # checked without an .init


def test_override_of_a_relation_not_overridable() -> None:
    base = ".comp Base { .decl r(x: number) r(1). }\n"
    assert codes(base + ".comp Sub : Base { .override r r(2). }\n.init s = Sub") == ["bad_override"]
    assert codes(base + ".comp Sub : Base { .override q }\n.init s = Sub") == ["bad_override"]
    assert codes(base + ".comp Sub : Base { .override r }") == ["bad_override"]  # checked without an .init


def test_cycles_in_inheritance_and_instances() -> None:
    assert codes(".comp A : B { }\n.comp B : A { }\n.init a = A") == ["component_cycle"]
    assert codes(".comp A : A { }") == ["component_cycle"]
    assert codes(".comp C { .init c = C }\n.init c = C") == ["component_cycle"]


def test_duplicate_instance_and_component_names() -> None:
    assert codes(".comp C { }\n.init x = C\n.init x = C") == ["duplicate_instance"]
    assert codes(".comp C { }\n.comp A { .init x = C .init x = C }\n.init a = A") == ["duplicate_instance"]
    assert codes(".comp C { }\n.comp C { }") == ["duplicate_component"]
    # as in Soufflé, an instance may not take the name of a component, relation or type beside it
    assert codes(".comp C { }\n.init C = C") == ["duplicate_instance"]
    assert codes(".comp C { }\n.decl x(a: number)\n.init x = C") == ["duplicate_instance"]
    assert codes(".comp C { }\n.comp A { .type x = number .init x = C }\n.init a = A") == ["duplicate_instance"]


def test_an_error_in_a_component_is_reported_once_however_many_instances() -> None:
    text = ".comp C { .decl r(x: number) }\n.comp D : C { .override r }\n.init a = D\n.init b = D"
    assert codes(text) == ["bad_override"]


def test_only_relations_and_types_take_qualified_names() -> None:
    assert codes("p(X) :- q(X.y).") == ["syntax"]
    assert codes(".comp C { }\n.init a.b = C") == ["syntax"]
    assert codes(".comp A.B { }") == ["syntax"]
    assert codes(".decl r(a.b: number)") == ["syntax"]


def test_the_instance_of_a_program_is_checked_like_any_program() -> None:
    # the type parameter makes `r` a symbol relation: `r(1)` is a type error
    assert codes(".comp C<T> { .decl r(x: T) r(1). }\n.init c = C<symbol>") == ["type_mismatch"]
    # a sub-component may not declare again what its base declares
    assert codes(".comp A { .decl r(x: number) }\n.comp B : A { .decl r(x: number) }\n.init b = B") == [
        "duplicate_decl"
    ]


# ---------------------------------------------------------------- spans, proofs, printing


def test_diagnostics_point_inside_the_component() -> None:
    text = ".comp C<T> {\n  .decl r(x: T)\n  r(1).\n}\n.init c = C<symbol>\n"
    with pytest.raises(CheckError) as e:
        compile_text(text, "c.rules")
    [d] = e.value.diagnostics
    assert (d.span.file, d.span.line, d.span.column) == ("c.rules", 3, 5)


def test_why_cites_the_components_rule_by_file_and_line() -> None:
    text = """.comp Reach {
  .decl edge(a: number, b: number)
  .decl path(a: number, b: number)
  path(X, Y) :- edge(X, Y).
  path(X, Z) :- path(X, Y), edge(Y, Z).
}
.init g = Reach
g.edge(1, 2). g.edge(2, 3).
"""
    program: CheckedProgram = compile_text(text, "reach.rules")
    proof = why(evaluate(program), "g.path", (1, 3))
    assert proof is not None and proof.rule is not None
    assert program.cite(proof.rule) == "reach.rules:5"
    shown = to_text(proof, program=program)
    assert "reach.rules:5" in shown and "reach.rules:4" in shown
    assert "g.path(X, Z) :- g.path(X, Y), g.edge(Y, Z)." in shown


def test_components_print_back_and_the_expansion_prints_as_plain_datalog() -> None:
    text = """.comp G<T> : Base<T>, Other {
  .decl e(a: T, b: T) overridable
  .override r
  .init inner = Inner<T>
  .comp Inner<U> {
    e(1, 2).
  }
  .output e
}
.init g = G<number>
"""
    program = parse(text)
    assert format_program(program) == text
    assert parse(format_program(program)) == program
    # the expansion is plain Soufflé: qualified names print and parse back
    expanded = compile_text(MY_COMPONENT + ".init i = MyComponent\n", "c.rules")
    decl = expanded.relations["i.TheAnswer"].decl
    assert decl is not None
    plain = ast.Program((decl, *expanded.rules))
    assert format_program(plain) == ".decl i.TheAnswer(x: i.myType)\ni.TheAnswer(42).\n"
    assert parse(format_program(plain)) == plain


def test_an_override_under_an_open_or_unknown_base_is_not_reported_twice() -> None:
    # the base is a type parameter: nothing to check until an .init binds it
    compile_text(".comp A<T> : T { .override r }\n", "c.rules")
    assert codes(".comp A : Nope { .override r }\n.init a = A") == ["unknown_component"]


def test_instances_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from ordinance.rules import components

    # each level doubles the instances below it: 2^40 empty instances
    levels = "".join(f".comp L{i + 1} {{ .init a = L{i} .init b = L{i} }}\n" for i in range(40))
    monkeypatch.setattr(components, "MAX_INSTANCE_ITEMS", 10_000)
    assert codes(".comp L0 { }\n" + levels + ".init top = L40") == ["too_large"]
    chain = "".join(f".comp C{i + 1} : C{i} {{ }}\n" for i in range(components.MAX_NESTING + 5))
    assert "too_deep" in codes(".comp C0 { }\n" + chain)


def test_an_expression_too_deep_inside_a_component_is_refused_when_parsed() -> None:
    deep = " + ".join(["1"] * 3000)
    assert codes(f".comp C {{ .comp D {{ p(X) :- X = {deep}. }} }}") == ["too_deep"]


def test_lint_expanded_prints_the_expansion_souffle_documents(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ordinance.cli.lint import command

    policy = tmp_path / "sub.rules"
    policy.write_text(OVERRIDE)
    result = CliRunner().invoke(command, ["--expanded", str(policy)])
    assert result.exit_code == 0
    assert result.stdout == (
        ".decl mySub.R(x: number) overridable\n.output mySub.R\nmySub.R(2).\nmySub.R(x + 1) :- mySub.R(x), x < 4.\n"
    )
    broken = tmp_path / "broken.rules"
    broken.write_text(".init s = Sub\n")
    result = CliRunner().invoke(command, ["--expanded", str(broken)])
    assert result.exit_code == 1 and "error[unknown_component]" in result.stdout and ".decl" not in result.stdout

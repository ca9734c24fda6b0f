"""Adapter for the `datalog-conformance` corpus (its `DatalogEvaluator` protocol).

    YamlTestRunner(Evaluator()).run_test_case(case)

Each rule string is parsed on its own (the corpus leaves some final periods
off) and the items are checked together, with the facts' relations as
extensional; a relation used in a body but neither given facts nor derived
is an empty extensional relation (the corpus drops Souffle's `.decl`s). Errors keep the front end's and engine's codes
(`arity_mismatch`, `cyclic_negation`, `unbound_variable`, ...) and classes
(`SafetyViolationError`).

Negation dialects: the corpus holds both Souffle-style cases, where a
variable seen only under negation is unsafe (`ok(X) :- person(X),
!banned(X, Y).` must raise `SafetyViolationError`), and Nemo-style ones, where
such a variable is existential like `_` (`p(X) :- main(X, Y, Z), !s3(X, 5, P).`).
The adapter checks strictly first; when the only failures are such variables
and every relation negated with one is defined (has facts or rules), it
re-checks in the Nemo dialect (`existential_negation=True`); otherwise the
strict error stands.
"""

from __future__ import annotations

from typing import Any

from datalog_conformance import Model, Program

from ordinance.diagnostics import Diagnostic, EvaluationError, SafetyViolationError
from ordinance.engine import evaluate
from ordinance.rules import check, parse
from ordinance.rules.ast import Aggregate, Atom, BinOp, Comparison, Negation, Rule, Var
from ordinance.rules.ast import Program as Ast
from ordinance.rules.checked import CheckedProgram

__all__ = ["Evaluator"]


# per engine, the last program evaluated (its rules, its facts) and its model:
# the cases harvested from one Soufflé program (hmmer's 2, lubm's 20) share its
# rules and facts and each asserts another relation, so the model is made once
_LAST: dict[str, tuple[list[str], Any, Model]] = {}


class Evaluator:
    """`engine`: `python` (the tuple-at-a-time engine) or a SQL dialect of
    `ordinance.engine.sql` (`duckdb`)."""

    def __init__(self, engine: str = "python"):
        self.engine = engine

    def evaluate(self, program: Program) -> Model:
        kept = _LAST.get(self.engine)
        if kept is not None and kept[0] == program.rules and kept[1] == program.facts:
            return kept[2]  # the corpus's cases of one Soufflé program each assert one of its relations
        model = self._evaluate(program)
        _LAST[self.engine] = (list(program.rules), program.facts, model)
        return model

    def _evaluate(self, program: Program) -> Model:
        facts = {name: [tuple(row) for row in rows] for name, rows in program.facts.items()}
        items = tuple(item for text in program.rules for item in parse(_terminated(text)).items)
        extensional = _arities(facts)
        defined = set(extensional) | {i.head.relation for i in items if isinstance(i, Rule)}
        checked = _check(Ast(items), extensional | _undefined(items, defined), defined)
        if self.engine != "python":
            from ordinance.engine.sql import evaluate_sql

            with evaluate_sql(checked, facts, engine=self.engine) as sql:
                return Model(facts={name: sql.tuples(name) for name in sql.relations})
        model = evaluate(checked, facts)
        return Model(facts={name: set(model.tuples(name)) for name in model.relations})


def _terminated(text: str) -> str:
    text = text.strip()
    return text if text.endswith(".") else text + "."


def _arities(facts: dict[str, list[tuple[Any, ...]]]) -> dict[str, int]:
    arities: dict[str, int] = {}
    for name, rows in facts.items():
        sizes = {len(r) for r in rows}
        if len(sizes) > 1:
            raise EvaluationError(
                [
                    Diagnostic(
                        "arity_mismatch", f"facts of `{name}` have {' and '.join(map(str, sorted(sizes)))} arguments"
                    )
                ]
            )
        if sizes:
            arities[name] = sizes.pop()
    return arities


def _undefined(items: tuple[Any, ...], defined: set[str]) -> dict[str, int]:
    """Relations used in bodies but never given nor derived: empty, as in Souffle."""
    found: dict[str, int] = {}
    for rule in items:
        for lit in rule.body if isinstance(rule, Rule) else ():
            atom = lit.atom if isinstance(lit, Negation) else lit
            if isinstance(atom, Atom) and atom.relation not in defined:
                found.setdefault(atom.relation, atom.arity)
    return found


def _check(program: Ast, extensional: dict[str, int], defined: set[str]) -> CheckedProgram:
    try:
        return check(program, extensional=extensional)
    except SafetyViolationError as strict:
        negated = _existentially_negated(program.rules)
        if not negated or not negated <= defined:
            raise
        try:
            return check(program, extensional=extensional, existential_negation=True)
        except SafetyViolationError:
            raise strict from None


def _existentially_negated(rules: tuple[Rule, ...]) -> set[str]:
    """Relations negated with a variable that occurs nowhere else in its rule."""
    found = set()
    for rule in rules:
        for i, lit in enumerate(rule.body):
            if not isinstance(lit, Negation):
                continue
            mine = _vars(lit.atom)
            elsewhere = _vars(rule.head).union(*(_vars(x) for j, x in enumerate(rule.body) if j != i))
            if mine - elsewhere:
                found.add(lit.atom.relation)
    return found


def _vars(node: Any) -> set[str]:
    if isinstance(node, Var):
        return {node.name}
    if isinstance(node, BinOp):
        return _vars(node.left) | _vars(node.right)
    if isinstance(node, Aggregate):
        out = _vars(node.target) if node.target is not None else set()
        return out.union(*(_vars(lit) for lit in node.body))
    if isinstance(node, Atom):
        return set().union(*(_vars(a) for a in node.args))
    if isinstance(node, Negation):
        return _vars(node.atom)
    if isinstance(node, Comparison):
        return _vars(node.left) | _vars(node.right)
    return set()

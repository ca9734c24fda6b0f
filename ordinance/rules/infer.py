"""Type inference for printing: which variables of a rule hold instants or
durations, from the declared types of the atom positions that bind them and
the comparisons and arithmetic they flow through. `CheckedProgram` computes
it once per rule (`variable_types`); every renderer reads it from there.
"""

from __future__ import annotations

from typing import Callable, Mapping

from . import ast

__all__ = ["TIMED", "arith_type", "term_type", "infer_types"]

TIMED = ("time", "duration")
Types = Callable[[str], "tuple[str, ...] | None"]


def arith_type(op: str, left: str | None, right: str | None) -> str | None:
    """The type of `left op right` where it is a time or a duration."""
    pair = (left, right)
    if op == "+" and pair in (("time", "duration"), ("duration", "time")):
        return "time"
    if op == "-" and pair == ("time", "time"):
        return "duration"
    if op in "+-" and left in TIMED and right == "duration":
        return left
    if op == "*" and "duration" in pair and "time" not in pair:
        return "duration"
    if op == "/" and left == "duration" and right != "duration":
        return "duration"
    return None


def term_type(term: ast.Term, env: Mapping[str, str]) -> str | None:
    """The type of a term under the variable types `env` (None: unknown)."""
    if isinstance(term, ast.Const):
        return term.type
    if isinstance(term, ast.Var):
        return env.get(term.name)
    if isinstance(term, ast.Now):
        return "time"
    if isinstance(term, ast.BinOp):
        return arith_type(term.op, term_type(term.left, env), term_type(term.right, env))
    if isinstance(term, ast.Aggregate):
        target = None if term.target is None else term_type(term.target, env)
        if term.func in ("min", "max") or (term.func == "sum" and target == "duration"):
            return target
        return "number"
    return None


def infer_types(head: ast.Atom | None, body: tuple[ast.Literal, ...], types: Types) -> dict[str, str]:
    """The type of each variable of `head :- body` that the declarations fix."""
    env: dict[str, str] = {}
    comparisons: list[ast.Comparison] = []

    def atom(a: ast.Atom) -> None:
        declared = types(a.relation) or ()
        for i, arg in enumerate(a.args):
            if isinstance(arg, ast.Var) and i < len(declared) and env.get(arg.name, "number") == "number":
                env[arg.name] = declared[i]

    def walk(lits: tuple[ast.Literal, ...]) -> None:
        for lit in lits:
            if isinstance(lit, ast.Atom):
                atom(lit)
            elif isinstance(lit, ast.Negation):
                atom(lit.atom)
            elif isinstance(lit, ast.Comparison):
                comparisons.append(lit)
                for side in (lit.left, lit.right):
                    if isinstance(side, ast.Aggregate):
                        walk(side.body)

    if head is not None:
        atom(head)
    walk(body)
    for _ in range(len(comparisons) + 1):  # a variable's type can flow through comparisons
        changed = False
        for c in comparisons:
            for mine, other in ((c.left, c.right), (c.right, c.left)):
                t = term_type(other, env)
                if isinstance(mine, ast.Var) and t in TIMED and mine.name not in env:
                    env[mine.name] = t
                    changed = True
        if not changed:
            break
    return env

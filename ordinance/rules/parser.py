"""Text to AST: the lark LALR parser, a transformer to spans, error recovery.

`parse` reports every syntax error it can find: after an error it resumes
at the next line that starts in column 1 (a clause boundary in any sensibly
laid-out file), so one typo does not hide the next.

Fast path: a line that is one ground fact starting in column 1, such as
`claim("c1", 42, 15m).`, is read by a regular expression (lark costs several
seconds per megabyte). The text between such lines goes to lark, which must
read it as whole items; when it cannot, lark re-reads from there to the end,
so results and diagnostics are exactly those of lark alone.
"""

from __future__ import annotations

import functools
import gc
import re
import threading
from importlib.resources import files
from typing import Any, Iterable

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from ..diagnostics import Diagnostic, ParseError, Span
from ..values import FOREVER, parse_duration, parse_instant
from . import ast
from .functors import FUNCTORS, PREDICATES
from .preprocess import preprocess

__all__ = ["parse", "MAX_ERRORS", "MAX_NESTING", "MAX_TERM_DEPTH"]

MAX_ERRORS = 50  # syntax diagnostics reported before giving up
MAX_NESTING = 256  # bracket depth
MAX_TERM_DEPTH = 100  # depth of an expression tree (also bounds recursion)
MAX_INT = 2**63 - 1

_OPPOSITE = {"=": "!=", "!=": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
_RESYNC = re.compile(r"\n(?=[^\s}])")
_STRING = r'"(?:[^"\\\n]|\\.)*"'
_INSTANT = r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z"
_CONST = rf"(?:{_STRING}|{_INSTANT}|-?[ \t]*[0-9]+[smhdw]?|forever)"
# a fast-path fact, or a blank or comment-only line (no `name` group)
_LINE = re.compile(
    rf"^(?:(?P<name>[A-Za-z_][A-Za-z0-9_]*)[ \t]*\([ \t]*(?P<args>{_CONST}(?:[ \t]*,[ \t]*{_CONST})*)?"
    r"[ \t]*(?P<close>\))[ \t]*(?P<dot>\.))?[ \t\r]*(?://[^\n]*)?$",
    re.M,
)
_ARG = re.compile(rf"(-[ \t]*)?(?:({_STRING})|({_INSTANT})|([0-9]+)([smhdw])?|forever)")
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)", re.S)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}
_FRIENDLY = {
    "NAME": "identifier",
    "STRING": "string",
    "INT": "integer",
    "INSTANT": "instant",
    "DURATION": "duration",
    "COMPOP": "comparison operator",
    "AGGFUNC": "aggregate",
    "IODIRECTIVE": "`.input`, `.output` or `.printsize`",
    "HEX": "integer",
    "UNSIGNED": "unsigned integer",
    "FLOAT": "float",
    "PREFIXOP": "`bnot` or `lnot`",
    "SHIFTOP": "shift operator",
    "NIL": "`nil`",
    "BRANCH": "constructor",
    "$END": "end of input",
}
_TERM_START = {
    "`$now`",
    "`$`",
    "`(`",
    "`_`",
    "`forever`",
    "`-`",
    "aggregate",
    "duration",
    "identifier",
    "instant",
    "integer",
    "string",
    "unsigned integer",
    "float",
    "`bnot` or `lnot`",
    "functor",
    "`nil`",
    "constructor",
    "`[`",
}
_OPERATORS = {
    "`+`",
    "`-`",
    "`*`",
    "`/`",
    "`%`",
    "`^`",
    "comparison operator",
    "shift operator",
    "band",
    "bor",
    "bxor",
    "land",
    "lor",
    "lxor",
}


class _State(threading.local):
    file: str | None = None
    line_offset: int = 0
    diagnostics: list[Diagnostic]
    # the last integer literal of 2^63 and its out-of-range error, which a `-` before it takes back
    least_edge: tuple[int, Diagnostic] | None = None

    def __init__(self) -> None:
        self.diagnostics = []


_state = _State()


class _Body:
    """A body while parsing: the literals and the region they cover."""

    __slots__ = ("literals", "span")

    def __init__(self, literals: tuple[ast.Literal, ...], span: Span):
        self.literals = literals
        self.span = span


class _Choice:
    """A `choice-domain` qualifier while parsing: its keys."""

    __slots__ = ("keys", "span")

    def __init__(self, keys: tuple[ast.ChoiceKey, ...], span: Span):
        self.keys = keys
        self.span = span


def _tok_span(tok: Token) -> Span:
    off = _state.line_offset
    return Span(
        (tok.line or 0) + off,
        tok.column or 0,
        (tok.end_line or 0) + off,
        tok.end_column or 0,
        _state.file,
    )


def _start_end(child: Any) -> Span | None:
    if isinstance(child, Token):
        return _tok_span(child)
    span = getattr(child, "span", None)
    return span if isinstance(span, Span) else None


def _cover(children: list[Any]) -> Span:
    """From the start of the first child to the end of the last."""
    first = next((s for s in map(_start_end, children) if s is not None), None)
    if first is None:
        return Span(file=_state.file)
    last = next(s for s in map(_start_end, reversed(children)) if s is not None)
    return Span(first.line, first.column, last.end_line, last.end_column, _state.file)


def _error(code: str, message: str, span: Span) -> None:
    _state.diagnostics.append(Diagnostic(code, message, span))


def _nodes(children: Iterable[Any]) -> list[Any]:
    """Children without punctuation tokens and placeholders."""
    return [c for c in children if c is not None and not isinstance(c, Token)]


def _escaped(s: str) -> str | None:
    """What an escape (the text after the backslash) stands for; None if unknown."""
    return chr(int(s[1:], 16)) if len(s) == 5 else _ESCAPES.get(s)


def _unescape(tok: Token) -> str:
    def one(m: re.Match[str]) -> str:
        s = m.group(1)
        value = _escaped(s)
        if value is None:
            _error("syntax", f"unknown escape `\\{_show(s)}` in string", _tok_span(tok))
            return s
        return value

    return _ESCAPE.sub(one, tok.value[1:-1])


def _show(text: str, limit: int = 24) -> str:
    """A token for a one-line message: escaped, shortened."""
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def _relation(lit: Any) -> ast.Atom:
    """An atom where only a relation may stand (heads, test data)."""
    if isinstance(lit, ast.Predicate):
        _error("syntax", f"`{lit.name}` is a built-in constraint, not a relation", lit.span)
        return ast.Atom(lit.name, lit.args, lit.span)
    return lit  # type: ignore[no-any-return]


def _simple_name(name: str, what: str, span: Span) -> None:
    """Only relations and types take qualified names (`inst.rel`)."""
    if "." in name:
        _error("syntax", f"`{_show(name)}` is a qualified name, which {what} cannot have", span)


def _int(tok: Token, sign: int = 1, limit: int = MAX_INT) -> int:
    text = tok.value.removesuffix("u")
    hexadecimal = text.startswith("0x")
    digits = text[2:] if hexadecimal else text  # `007` is decimal 7, as in Soufflé
    digits = digits.lstrip("0") or "0"
    if len(digits) > 20 or int(digits, 16 if hexadecimal else 10) > limit:
        _error("syntax", f"integer `{_show(tok.value)}` is out of range", _tok_span(tok))
        return 0
    return sign * int(digits, 16 if hexadecimal else 10)


class _ToAst(Transformer):  # type: ignore[type-arg]
    """Inline LALR callbacks; children include every token (keep_all_tokens)."""

    # ------------------------------------------------------------ items

    def start(self, c: list[Any]) -> list[ast.Item]:
        items: list[ast.Item] = []
        for node in _nodes(c):
            items.extend(node if isinstance(node, tuple) else (node,))
        return items

    def io(self, c: list[Any]) -> tuple[ast.IODirective, ...]:
        kind = c[0].value[1:]
        return tuple(ast.IODirective(kind, name, params, span) for name, params, span in _nodes(c[1:]))

    def io_rel(self, c: list[Any]) -> tuple[str, tuple[tuple[str, str], ...], Span]:
        return c[0].value, tuple(_nodes(c[1:])), _cover(c)

    def io_param(self, c: list[Any]) -> tuple[str, str]:
        key, value = c[0].value, c[2]
        return key, _unescape(value) if value.type == "STRING" else value.value

    items = start

    def decl(self, c: list[Any]) -> ast.Decl | tuple[ast.Decl, ...]:
        """`.decl a(x: number)`; `.decl a, b(x: number)` (Soufflé's) declares
        each name alike, and prints back as one `.decl` per name."""
        qualifiers = tuple(t.value for t in c if isinstance(t, Token) and t.type == "QUALIFIER")
        choice = tuple(k for x in c if isinstance(x, _Choice) for k in x.keys)
        params = tuple(x for x in _nodes(c[2:]) if isinstance(x, ast.Param))
        names = [t for t in c if isinstance(t, Token) and t.type == "NAME"]
        if len(names) == 1:
            return ast.Decl(names[0].value, params, _cover(c), qualifiers, choice)
        return tuple(ast.Decl(n.value, params, _cover(c), qualifiers, choice) for n in names)

    def choice_domain(self, c: list[Any]) -> "_Choice":
        return _Choice(tuple(k for x in c if isinstance(x, _Choice) for k in x.keys), _cover(c))

    def choice_key(self, c: list[Any]) -> "_Choice":
        names = tuple(t.value for t in c if isinstance(t, Token) and t.type == "NAME")
        return _Choice((ast.ChoiceKey(names, _cover(c)),), _cover(c))

    def subsumption(self, c: list[Any]) -> ast.Subsumption:
        return ast.Subsumption(_relation(c[0]), _relation(c[2]), c[4].literals, _cover(c))

    def param(self, c: list[Any]) -> ast.Param:
        name, _, type_ = c
        _simple_name(name.value, "an attribute", _tok_span(name))
        return ast.Param(name.value, type_.value, _cover(c))

    def subtype(self, c: list[Any]) -> ast.TypeDecl:
        return ast.TypeDecl(c[1].value, c[3].value, (), _cover(c))

    def union_type(self, c: list[Any]) -> ast.TypeDecl:
        members = tuple(t.value for t in c[3:] if isinstance(t, Token) and t.type == "NAME")
        return ast.TypeDecl(c[1].value, None, members, _cover(c))

    def include(self, c: list[Any]) -> ast.Include:
        return ast.Include(_unescape(c[1]), _cover(c))

    def invariant(self, c: list[Any]) -> ast.Invariant:
        return ast.Invariant(_unescape(c[1]), c[3].literals, _cover(c))

    def hint(self, c: list[Any]) -> ast.Hint:
        pools = [x for x in c[2:] if isinstance(x, tuple)]
        return ast.Hint(c[1].value, tuple(pools), _cover(c))

    def pragma(self, c: list[Any]) -> ast.Pragma:
        strings = [_unescape(t) for t in c if isinstance(t, Token) and t.type == "STRING"]
        return ast.Pragma(strings[0], strings[1] if len(strings) > 1 else "", _cover(c))

    def pool_any(self, c: list[Any]) -> tuple[ast.Const, ...]:
        return ()

    def pool_values(self, c: list[Any]) -> tuple[ast.Const, ...]:
        return tuple(_nodes(c))

    def fact(self, c: list[Any]) -> ast.Rule:
        return ast.Rule(_relation(c[0]), (), _cover(c))

    def rule(self, c: list[Any]) -> ast.Rule:
        heads: list[ast.Atom] = c[0]
        return ast.Rule(heads[0], c[2].literals, _cover([heads[0], *c[1:]]), tuple(heads[1:]))

    def heads(self, c: list[Any]) -> list[ast.Atom]:
        return [_relation(a) for a in _nodes(c)]

    def test_block(self, c: list[Any]) -> ast.TestBlock:
        keyword, name = c[0], c[1]
        if keyword.value != "test":
            _error(
                "syntax",
                f"unexpected `{_show(keyword.value)}`, expected `test` before a test name",
                _tok_span(keyword),
            )
        facts: list[ast.Rule] = []
        expects: list[ast.Expect] = []
        now: int | None = None
        for item in _nodes(c[2:]):
            if isinstance(item, ast.Rule):
                facts.append(item)
            elif isinstance(item, ast.Expect):
                expects.append(item)
            else:
                value, span = item
                if now is not None:
                    _error("syntax", "a test sets `now` more than once", span)
                now = value
        return ast.TestBlock(_unescape(name), tuple(facts), tuple(expects), now, _cover(c))

    def test_fact(self, c: list[Any]) -> ast.Rule:
        return ast.Rule(_relation(c[0]), (), _cover(c))

    def _keyword(self, tok: Token, word: str, what: str) -> None:
        if tok.value != word:
            _error(
                "syntax",
                f"unexpected `{_show(tok.value)}`, expected `{word}` before {what}",
                _tok_span(tok),
            )

    def test_expect(self, c: list[Any]) -> ast.Expect:
        self._keyword(c[0], "expect", "an expected atom")
        negated, atom = c[1]
        return ast.Expect(atom, negated, _cover(c))

    def test_now(self, c: list[Any]) -> tuple[int, Span]:
        self._keyword(c[0], "now", "an instant")
        return self.instant([c[1]]).value, _cover(c)  # type: ignore[return-value]

    def expect_pos(self, c: list[Any]) -> tuple[bool, ast.Atom]:
        return False, _relation(c[0])

    def expect_neg(self, c: list[Any]) -> tuple[bool, ast.Atom]:
        return True, _relation(c[1])

    # ------------------------------------------------------------ components

    def component(self, c: list[Any]) -> ast.Component:
        head: ast.ComponentType = c[1]
        bases = tuple(x for x in c[2:] if isinstance(x, ast.ComponentType))
        items: list[Any] = []
        for node in _nodes(c[2:]):
            if not isinstance(node, ast.ComponentType):
                items.extend(node if isinstance(node, tuple) else (node,))
        _simple_name(head.name, "a component", head.span)
        for param in head.args:
            _simple_name(param, "a type parameter", head.span)
        return ast.Component(head.name, head.args, bases, tuple(items), _cover(c))

    def comp_type(self, c: list[Any]) -> ast.ComponentType:
        names = [t.value for t in c if isinstance(t, Token) and t.type == "NAME"]
        return ast.ComponentType(names[0], tuple(names[1:]), _cover(c))

    def init(self, c: list[Any]) -> ast.Init:
        _simple_name(c[1].value, "an instance", _tok_span(c[1]))
        return ast.Init(c[1].value, c[3], _cover(c))

    def override(self, c: list[Any]) -> ast.Override:
        return ast.Override(c[1].value, _cover(c))

    # ------------------------------------------------------------ literals

    def body(self, c: list[Any]) -> _Body:
        branches = [b.literals for b in _nodes(c)]
        if len(branches) == 1:
            return _Body(branches[0], _cover(c))
        return _Body((ast.Disjunction(tuple(branches), _cover(c)),), _cover(c))  # type: ignore[arg-type]

    def conjunction(self, c: list[Any]) -> _Body:
        literals: list[ast.Literal] = []
        for lit in _nodes(c):
            literals.extend(lit.literals if isinstance(lit, _Body) else (lit,))
        return _Body(tuple(literals), _cover(c))

    def group(self, c: list[Any]) -> Any:
        """`( body )`: a disjunction, or its literals spliced into the conjunction."""
        inner: _Body = c[1]
        if len(inner.literals) == 1:
            lit = inner.literals[0]
            if isinstance(lit, ast.Comparison):  # `(X < 3)` spans its parentheses
                return ast.Comparison(lit.op, lit.left, lit.right, _cover(c))
            return lit
        return _Body(inner.literals, _cover(c))

    def negated_group(self, c: list[Any]) -> ast.Literal | ast.NegatedGroup:
        """`!( body )`: one atom or constraint is its plain negation, one
        comparison the opposite comparison; anything else a group."""
        inner: _Body = c[2]
        span = _cover(c)
        if len(inner.literals) == 1:
            lit = inner.literals[0]
            if isinstance(lit, ast.Atom):
                return ast.Negation(lit, span)
            if isinstance(lit, ast.Predicate):
                return ast.Predicate(lit.name, lit.args, not lit.negated, span)
            if isinstance(lit, ast.Comparison):
                return ast.Comparison(_OPPOSITE[lit.op], lit.left, lit.right, span)
        return ast.NegatedGroup(inner.literals, span)

    def double_negation(self, c: list[Any]) -> Any:
        """`!!L` is `L` (Soufflé's `!!!( ... )` is `!( ... )`)."""
        return c[2]

    def negation(self, c: list[Any]) -> ast.Negation | ast.Predicate:
        inner = c[1]
        if isinstance(inner, ast.Predicate):
            return ast.Predicate(inner.name, inner.args, not inner.negated, _cover(c))
        return ast.Negation(inner, _cover(c))

    def atom(self, c: list[Any]) -> ast.Atom | ast.Predicate:
        name, args = c[0].value, tuple(_nodes(c[1:]))
        if name in PREDICATES:
            builtin = PREDICATES[name]
            if not builtin.arity_ok(len(args)):
                _error("arity_mismatch", f"`{name}` takes {len(builtin.params)} arguments, got {len(args)}", _cover(c))
            return ast.Predicate(name, args, False, _cover(c))
        return ast.Atom(name, args, _cover(c))

    def comparison(self, c: list[Any]) -> ast.Comparison:
        return ast.Comparison(c[1].value, c[0], c[2], _cover(c))

    # ------------------------------------------------------------ terms

    def _binop(self, c: list[Any]) -> ast.BinOp:
        return ast.BinOp(c[1].value, c[0], c[2], _cover(c))

    add = sub = mul = div = mod = binop = pow = _binop

    def prefix(self, c: list[Any]) -> ast.Call:
        return ast.Call(c[0].value, (c[1],), _cover(c))

    def neg(self, c: list[Any]) -> ast.Term:
        operand = c[1]
        edge = _state.least_edge
        if isinstance(operand, ast.Const) and operand.type == "number" and operand.value == MAX_INT + 1 and edge:
            found, diagnostic = edge
            if found < len(_state.diagnostics) and _state.diagnostics[found] is diagnostic:
                del _state.diagnostics[found]  # `-9223372036854775808` is the least 64-bit number
                _state.least_edge = None
        if isinstance(operand, ast.Const) and operand.type in ("number", "duration", "float"):
            return ast.Const(-operand.value, operand.type, _cover(c))  # type: ignore[operator]
        span = _cover(c)
        return ast.BinOp("-", ast.Const(0, "number", _tok_span(c[0])), operand, span)

    def primary(self, c: list[Any]) -> ast.Term:  # "(" sum ")"
        return c[1]  # type: ignore[no-any-return]

    def call(self, c: list[Any]) -> ast.Call:
        name, args = c[0], tuple(_nodes(c[1:]))
        builtin = FUNCTORS.get(name.value)
        if builtin is None:
            known = ", ".join(f"`{n}`" for n in sorted(FUNCTORS))
            _error(
                "unknown_functor", f"unknown functor `{_show(name.value)}`, expected one of {known}", _tok_span(name)
            )
        elif not builtin.arity_ok(len(args)):
            n = len(builtin.params)
            want = (f"{n} to {builtin.most}" if builtin.most else f"at least {n}") if builtin.variadic else str(n)
            _error("arity_mismatch", f"`{name.value}` takes {want} arguments, got {len(args)}", _cover(c))
        return ast.Call(name.value, args, _cover(c))

    def autoinc(self, c: list[Any]) -> ast.Call:  # `$`, Soufflé's old spelling of `autoinc()`
        return ast.Call("autoinc", (), _cover(c))

    def var(self, c: list[Any]) -> ast.Var:
        _simple_name(c[0].value, "a variable", _tok_span(c[0]))
        return ast.Var(c[0].value, _tok_span(c[0]))

    def wildcard(self, c: list[Any]) -> ast.Wildcard:
        return ast.Wildcard(_tok_span(c[0]))

    def now(self, c: list[Any]) -> ast.Now:
        return ast.Now(_tok_span(c[0]))

    def aggregate(self, c: list[Any]) -> ast.Aggregate:
        func, target = c[0].value, c[1]
        body = c[4].literals
        return self._aggregate(func, target, body, c)

    def aggregate_atom(self, c: list[Any]) -> ast.Aggregate:
        return self._aggregate(c[0].value, c[1], (c[3],), c)

    def _aggregate(self, func: str, target: Any, body: tuple[ast.Literal, ...], c: list[Any]) -> ast.Aggregate:
        span = _cover(c)
        if func == "count" and target is not None:
            _error("syntax", "`count` takes no target expression", target.span)
            target = None
        elif func != "count" and target is None:
            _error("syntax", f"`{func}` needs a target, as in `{func} X : {{ ... }}`", span)
        return ast.Aggregate(func, target, body, span)

    # ------------------------------------------------------------ constants

    def string(self, c: list[Any]) -> ast.Const:
        return ast.Const(_unescape(c[0]), "symbol", _tok_span(c[0]))

    def integer(self, c: list[Any]) -> ast.Const:
        found = len(_state.diagnostics)
        value = _int(c[0], limit=MAX_INT + 1)
        if value == MAX_INT + 1:  # out of range unless negated: `neg` takes the error back
            _error("syntax", f"integer `{_show(c[0].value)}` is out of range", _tok_span(c[0]))
            _state.least_edge = (found, _state.diagnostics[found])
        return ast.Const(value, "number", _tok_span(c[0]))

    def neg_int(self, c: list[Any]) -> ast.Const:
        return ast.Const(_int(c[1], -1, limit=MAX_INT + 1), "number", _cover(c))  # -2^63 is a number

    def unsigned(self, c: list[Any]) -> ast.Const:
        return ast.Const(_int(c[0], limit=2**64 - 1), "unsigned", _tok_span(c[0]))

    def float(self, c: list[Any]) -> ast.Const:
        value = float(c[0].value)
        if value in (float("inf"), float("-inf")):
            _error("syntax", f"float `{_show(c[0].value)}` is out of range", _tok_span(c[0]))
            value = 0.0
        return ast.Const(value, "float", _tok_span(c[0]))

    def neg_float(self, c: list[Any]) -> ast.Const:
        const = self.float([c[1]])
        return ast.Const(-const.value, "float", _cover(c))  # type: ignore[operator]

    def instant(self, c: list[Any]) -> ast.Const:
        try:
            value = parse_instant(c[0].value)
        except ValueError:
            _error("syntax", f"invalid instant `{c[0].value}`", _tok_span(c[0]))
            value = 0
        return ast.Const(value, "time", _tok_span(c[0]))

    def duration(self, c: list[Any]) -> ast.Const:
        tok = c[0]
        if len(tok.value) > 19:
            _error("syntax", f"duration `{_show(tok.value)}` is out of range", _tok_span(tok))
            return ast.Const(0, "duration", _tok_span(tok))
        return ast.Const(parse_duration(tok.value), "duration", _tok_span(tok))

    def neg_duration(self, c: list[Any]) -> ast.Const:
        const = self.duration([c[1]])
        return ast.Const(-const.value, "duration", _cover(c))  # type: ignore[operator]

    def forever(self, c: list[Any]) -> ast.Const:
        return ast.Const(FOREVER, "time", _tok_span(c[0]))

    # ------------------------------------------------------------ records and ADTs

    def record(self, c: list[Any]) -> ast.Record:
        return ast.Record(tuple(_nodes(c)), _cover(c))

    def nil(self, c: list[Any]) -> ast.Record:
        return ast.Record((), _tok_span(c[0]))

    def branch(self, c: list[Any]) -> ast.Branch:
        return ast.Branch(c[0].value[1:], tuple(_nodes(c[1:])), _cover(c))

    def record_type(self, c: list[Any]) -> ast.RecordType:
        return ast.RecordType(c[1].value, tuple(_nodes(c[3:])), _cover(c))

    def adt_type(self, c: list[Any]) -> ast.AdtType:
        return ast.AdtType(c[1].value, tuple(_nodes(c[3:])), _cover(c))

    def adt_branch(self, c: list[Any]) -> ast.BranchDecl:
        return ast.BranchDecl(c[0].value, tuple(_nodes(c[1:])), _cover(c))


@functools.cache
def _parser() -> Lark:
    grammar = (files(__package__) / "grammar.lark").read_text(encoding="utf-8")
    return Lark(
        grammar,
        parser="lalr",
        lexer="contextual",
        start=["start", "items"],
        keep_all_tokens=True,
        transformer=_ToAst(),
    )


# ---------------------------------------------------------------- errors


def _describe_expected(names: Iterable[str]) -> str:
    lark = _parser()
    shown: set[str] = set()
    for name in names:
        if name in _FRIENDLY:
            shown.add(_FRIENDLY[name])
            continue
        try:
            pattern = lark.get_terminal(name).pattern
        except KeyError:
            shown.add(name.lower())
            continue
        shown.add(f"`{pattern.value}`" if pattern.type == "str" else name.lower())
    if "`$now`" in shown:  # the start of any term: say so once
        shown = (shown - _TERM_START) | {"expression"}
    items = sorted(shown, key=lambda s: (s in _OPERATORS, s))
    if len(items) > 2 and not all(s in _OPERATORS for s in items):
        items = [s for s in items if s not in _OPERATORS]
    if len(items) > 5:
        items = items[:4] + ["..."]
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " or " + items[-1]


def _end_span(text: str) -> Span:
    line = text.count("\n") + 1 + _state.line_offset
    column = len(text) - (text.rfind("\n") + 1) + 1
    return Span(line, column, line, column + 1, _state.file)


def _lark_diagnostic(e: UnexpectedInput, fragment: str) -> Diagnostic:
    at = _error_offset(e, fragment)
    if isinstance(e, UnexpectedCharacters):
        line = e.line + _state.line_offset
        span = Span(line, e.column, line, e.column + 1, _state.file)
        if fragment.startswith('"', at):
            return Diagnostic("syntax", "unterminated string", span)
        if fragment.startswith("/*", at):
            return Diagnostic("syntax", "unterminated comment", span)
        return Diagnostic("syntax", f"unexpected character `{_show(e.char)}`", span)
    assert isinstance(e, UnexpectedToken)
    tok = e.token
    acceptable = _acceptable(e)
    expected = _describe_expected(acceptable)
    if tok.type == "$END":
        return Diagnostic("syntax", f"unexpected end of input, expected {expected}", _end_span(fragment))
    span = _tok_span(tok)
    if fragment.startswith("/*", at):  # `/` lexed as division: the comment never ends
        return Diagnostic("syntax", "unterminated comment", span)
    if str(tok.value) == "=" and fragment[at - 1 : at] == "=":  # `T == "prod"`
        wide = Span(span.line, span.column - 1, span.end_line, span.end_column, span.file)
        return Diagnostic("syntax", "unexpected `==`", wide, help="equality is a single `=`: `X = Y`")
    before = _previous_end(e)
    last = _previous_token(e)
    if tok.type == "LPAR" and last is not None and last.type == "NAME":
        known = ", ".join(f"`{n}`" for n in sorted(FUNCTORS))
        return Diagnostic(
            "unknown_functor", f"unknown functor `{_show(last.value)}`, expected one of {known}", _tok_span(last)
        )
    if "DOT" in acceptable and before is not None and before.end_line < span.line:
        line, column = before.end_line, before.end_column
        missing = Span(line, column, line, column + 1, _state.file)
        return Diagnostic("syntax", "missing `.` at the end of the clause", missing)
    return Diagnostic("syntax", f"unexpected `{_show(str(tok.value))}`, expected {expected}", span)


def _acceptable(e: UnexpectedToken) -> set[str]:
    """The terminals that could really follow (LALR's table over-approximates)."""
    try:
        accepts = e.interactive_parser.accepts()
    except Exception:  # the simulation is a nicety; fall back to the table
        return set(e.expected)
    return set(accepts) or set(e.expected)


def _previous_end(e: UnexpectedToken) -> Span | None:
    """The span of what the parser read last before the bad token."""
    try:
        stack = e.interactive_parser.parser_state.value_stack
    except AttributeError:
        return None
    return _start_end(stack[-1]) if stack else None


def _previous_token(e: UnexpectedToken) -> Token | None:
    try:
        stack = e.interactive_parser.parser_state.value_stack
    except AttributeError:
        return None
    return stack[-1] if stack and isinstance(stack[-1], Token) else None


def _error_offset(e: UnexpectedInput, fragment: str) -> int:
    pos = getattr(e, "pos_in_stream", None)
    if isinstance(e, UnexpectedToken) and e.token.type == "$END":
        return len(fragment)
    return pos if isinstance(pos, int) else len(fragment)


# ---------------------------------------------------------------- depth


_BRACKETS = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*[\s\S]*?\*/|[(){}]')


def _nesting(text: str, file: str | None) -> Diagnostic | None:
    """A `too_deep` diagnostic where brackets nest deeper than MAX_NESTING."""
    if text.count("(") + text.count("{") <= MAX_NESTING:
        return None
    depth = 0
    for m in _BRACKETS.finditer(text):
        ch = m.group()
        if ch in "({":
            depth += 1
            if depth > MAX_NESTING:
                line = text.count("\n", 0, m.start()) + 1
                column = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
                return Diagnostic(
                    "too_deep",
                    f"brackets nest deeper than {MAX_NESTING} levels",
                    Span(line, column, line, column + 1, file),
                )
        elif ch in ")}":
            depth = max(0, depth - 1)
    return None


def _deep_terms(items: list[ast.Item]) -> list[Diagnostic]:
    """`too_deep` for expression trees deeper than MAX_TERM_DEPTH (no recursion)."""
    found: list[Diagnostic] = []
    for item in items:
        stack: list[tuple[Any, int]] = [(item, 0)]
        while stack:
            node, depth = stack.pop()
            if depth > MAX_TERM_DEPTH:
                message = f"expression nests deeper than {MAX_TERM_DEPTH} levels"
                found.append(Diagnostic("too_deep", message, item.span))
                break
            if isinstance(node, tuple):
                stack.extend((x, depth) for x in node)
            elif isinstance(
                node,
                (
                    ast.BinOp,
                    *ast.COMPOUND,
                    ast.Aggregate,
                    ast.Negation,
                    ast.Comparison,
                    ast.Predicate,
                    ast.Disjunction,
                    ast.NegatedGroup,
                ),
            ):
                stack.extend((getattr(node, f), depth + 1) for f in node.__slots__ if f != "span")
            elif isinstance(node, (ast.Rule, ast.Atom, ast.Invariant, ast.TestBlock, ast.Expect, ast.Component)):
                stack.extend((getattr(node, f), depth) for f in node.__slots__ if f != "span")
    return found[:MAX_ERRORS]


# ---------------------------------------------------------------- fast path


def _decoded(body: str) -> str | None:
    """A string literal's value; None if it has an unknown escape."""
    if "\\" not in body:
        return body
    pieces = _ESCAPE.split(body)  # text, escape, text, ...
    for i in range(1, len(pieces), 2):
        value = _escaped(pieces[i])
        if value is None:
            return None
        pieces[i] = value
    return "".join(pieces)


def _fast_fact(text: str, m: re.Match[str], line: int) -> ast.Rule | None:
    """The fact on a line `_LINE` matched, as lark would build it; None when
    lark must read it (it has something to report)."""
    if m.group("name") in PREDICATES:
        return None  # lark reports a constraint where a fact should be
    base, file = m.start() - 1, _state.file  # column = offset - base
    args: list[ast.Term] = []
    a, b = m.span("args")
    for t in _ARG.finditer(text, a, max(a, b)):
        minus, string, instant, digits, unit = t.groups()
        span = Span(line, t.start() - base, line, t.end() - base, file)
        if string is not None:
            value = _decoded(string[1:-1])
            if value is None:
                return None
            args.append(ast.Const(value, "symbol", span))
        elif instant is not None:
            try:
                args.append(ast.Const(parse_instant(instant), "time", span))
            except ValueError:
                return None
        elif digits is not None:
            if len(digits) + bool(unit) > 19 or (not unit and int(digits) > MAX_INT):
                return None
            number = parse_duration(digits + unit) if unit else int(digits)
            args.append(ast.Const(-number if minus else number, "duration" if unit else "number", span))
        else:
            args.append(ast.Const(FOREVER, "time", span))
    name = m.start("name") - base
    atom = ast.Atom(m.group("name"), tuple(args), Span(line, name, line, m.end("close") - base, file))
    return ast.Rule(atom, (), Span(line, name, line, m.end("dot") - base, file))


class _Stop(Exception):
    """The first syntax error lark met reading `fragment`, which starts at
    offset `pos`, after `line_offset` lines, of the whole text."""

    def __init__(self, error: UnexpectedInput, fragment: str, pos: int, line_offset: int):
        super().__init__(error)
        self.error, self.fragment, self.pos, self.line_offset = error, fragment, pos, line_offset


def _lark(fragment: str, start: str, line_offset: int) -> list[ast.Item]:
    """Lark's items; its other diagnostics are left in `_state.diagnostics`."""
    _state.line_offset, _state.diagnostics = line_offset, []
    return _parser().parse(fragment, start=start)  # type: ignore[return-value]


def _finish(text: str, pos: int, line_offset: int, slow: list[ast.Item], found: list[Diagnostic]) -> None:
    """Read text[pos:] with lark alone; raise _Stop at a syntax error."""
    fragment = text[pos:]
    try:
        slow.extend(_lark(fragment, "start", line_offset))
    except UnexpectedInput as e:
        raise _Stop(e, fragment, pos, line_offset) from None
    finally:
        found.extend(_state.diagnostics)


def _read(text: str, pos: int, line_offset: int, found: list[Diagnostic]) -> tuple[list[ast.Item], list[ast.Item]]:
    """Items of text[pos:] (pos starts a line) and those of them lark built."""
    items: list[ast.Item] = []
    slow: list[ast.Item] = []
    here, here_line = pos, line_offset  # an offset and the newlines before it
    gap, gap_line = pos, line_offset  # where the input not read yet starts
    for m in _LINE.finditer(text, pos):
        start = m.start()
        here_line += text.count("\n", here, start)
        here = start
        if m.group("name") is None:  # blank or comment: part of any pending gap
            if gap == start:
                gap, gap_line = m.end() + 1, here_line + 1
            continue
        fact = _fast_fact(text, m, here_line + 1)
        if fact is None:
            continue
        if gap < start:
            try:
                between = _lark(text[gap:start], "items", gap_line)
            except UnexpectedInput as e:
                if isinstance(e, UnexpectedToken) and e.token.type == "$END":
                    continue  # a clause goes on: this line is part of it
                break  # lark reads from the gap to the end
            found.extend(_state.diagnostics)
            items.extend(between)
            slow.extend(between)
        items.append(fact)
        gap, gap_line = m.end() + 1, here_line + 1
    if gap < len(text):
        before = len(slow)
        _finish(text, gap, gap_line, slow, found)
        items.extend(slow[before:])
    return items, slow


# ---------------------------------------------------------------- entry


def parse(text: str, file: str | None = None) -> ast.Program:
    """Parse a program; raise ParseError with every syntax error found."""
    return _parsed(preprocess(text, file), file)  # Soufflé's `#include`, `#define` and `#ifdef` lines


@functools.lru_cache(maxsize=64)
def _parsed(text: str, file: str | None) -> ast.Program:
    """`text` (preprocessed) parsed, once per process: the AST is immutable,
    and a policy's includes (the stdlib) are read by every program using
    them. A failure is raised each time, never kept."""
    deep = _nesting(text, file)
    if deep is not None:
        raise ParseError([deep])
    diagnostics: list[Diagnostic] = []
    pos, line_offset = 0, 0
    _state.file = file
    collecting = gc.isenabled()
    gc.disable()  # the AST holds no cycles; collections cost up to half the time
    try:
        while True:
            try:
                items, slow = _read(text, pos, line_offset, diagnostics)
                break
            except _Stop as stop:
                _state.line_offset = stop.line_offset
                diagnostics.append(_lark_diagnostic(stop.error, stop.fragment))
                at = stop.pos + _error_offset(stop.error, stop.fragment)
                if pos < at < len(text) and text[at - 1] == "\n" and not text[at].isspace():
                    resume = at  # the bad token starts a line: likely the next clause
                else:
                    m = _RESYNC.search(text, at)
                    if m is None:
                        break
                    resume = m.end()
                if len(diagnostics) >= MAX_ERRORS:
                    break
                line_offset = stop.line_offset + text.count("\n", stop.pos, resume)
                pos = resume
    finally:
        _state.diagnostics = []
        if collecting:
            gc.enable()
    if diagnostics:
        raise ParseError(diagnostics[:MAX_ERRORS])
    deep_terms = _deep_terms(slow)
    if deep_terms:
        raise ParseError(deep_terms)
    return ast.Program(tuple(items), file=file)

"""The C preprocessor's directives Soufflé's programs use, before parsing.

Soufflé runs its programs through the C preprocessor, so its programs write
`#include "edb.dl"`, include guards (`#ifndef X` / `#define X` / `#endif`)
and constants (`#define TRUE 1`). This pass reads those lines and leaves
every line where it was (a directive becomes an empty line, an include the
rule language's `.include`), so diagnostics keep their line numbers:

- `#include "file"` (or `<file>`): `.include "file"`, resolved, checked and
  included once as `.include` is (rules/loader.py);
- `#define NAME text`, `#undef NAME`: an object-like macro, replaced in the
  lines after it (outside strings and comments) until undefined;
- `#ifdef NAME`, `#ifndef NAME`, `#if EXPR`, `#elif EXPR`, `#else`,
  `#endif`, where EXPR is an integer, a macro name (its integer value, 0
  for an unknown name), `defined(NAME)`, and `!`, `&&`, `||`, `==`, `!=`
  and parentheses over those.

Where it differs from the C preprocessor, it says so with `preprocessor`:
function-like macros and other directives (`#pragma`, `#line`, `#error`)
are refused, and a macro applies in the file that defines it (an included
file's macros do not reach the includer, whose include guards still work:
each file is included once).
"""

from __future__ import annotations

import re

from ..diagnostics import Diagnostic, ParseError, Span

__all__ = ["preprocess"]

_DIRECTIVE = re.compile(r"[ \t]*#[ \t]*([A-Za-z_]\w*)?[ \t]*(.*?)[ \t]*\r?$")
_ANY = re.compile(r"^[ \t]*#", re.M)
_NAME = re.compile(r"[A-Za-z_]\w*")
# what a line holds, left to right: a string, a comment, a name, anything else
_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"?|//.*|/\*|[A-Za-z_]\w*|[^"/A-Za-z_]+|/')
_EXPR = re.compile(r"\s*(\d+|[A-Za-z_]\w*|&&|\|\||==|!=|[()!])")
_LEVELS = (("||",), ("&&",), ("==", "!="))  # `#if`'s binary operators, loosest first
_LINE = 1 << 20  # a line's expansion is at most this many characters (macros doubling each other)


def preprocess(text: str, file: str | None = None) -> str:
    """`text` with its directives carried out (see the module); ParseError
    (`preprocessor`) for one this pass does not carry out."""
    if _ANY.search(text) is None:
        return text
    macros: dict[str, str] = {}
    taking: list[tuple[bool, bool, int]] = []  # per open #if: (this branch taken, one was, its line)
    out: list[str] = []
    comment = False  # inside a /* comment continued from an earlier line
    lines = text.split("\n")
    n = 0
    while n < len(lines):
        line = lines[n]
        n += 1
        active = all(branch for branch, _, _ in taking)
        m = None if comment else _DIRECTIVE.fullmatch(line)
        if m is None:
            if not active:
                out.append("")
                continue
            try:
                expanded, comment = _expand(line, macros, comment)
            except _TooLong:
                raise _error(f"the macros of line {n} expand past {_LINE} characters", Span(n, 1, n, 2, file)) from None
            out.append(expanded)
            continue
        name, rest = m.group(1) or "", m.group(2)
        first = n  # the directive's own line, before any continuation lines
        while rest.endswith("\\") and n < len(lines):  # a directive continued on the next line
            rest = rest[:-1] + " " + lines[n].strip()
            out.append("")
            n += 1
        rest = _uncommented(rest)
        span = Span(first, line.index("#") + 1, first, len(line) + 1, file)
        if name in ("if", "ifdef", "ifndef"):
            test = _test(name, rest, macros, span) if active else False
            taking.append((test, test, first))
        elif name in ("elif", "else"):
            if not taking:
                raise _error(f"`#{name}` without `#if`", span)
            _, was, at = taking.pop()
            test = (not was) and (name == "else" or _test("if", rest, macros, span))
            taking.append((test, was or test, at))
        elif name == "endif":
            if not taking:
                raise _error("`#endif` without `#if`", span)
            taking.pop()
        elif not active:
            pass
        elif name == "include":
            target = re.fullmatch(r'"([^"]*)"|<([^>]*)>', rest)
            if target is None:
                raise _error('`#include` names a file as `"file"`', span)
            out.append(f'.include "{target.group(1) or target.group(2)}"')
            continue
        elif name == "define":
            key = _NAME.match(rest)
            if key is None:
                raise _error("`#define` names a macro", span)
            if rest[key.end() : key.end() + 1] == "(":
                raise _error(f"function-like macro `{key.group()}` is not supported (an object-like one is)", span)
            macros[key.group()] = rest[key.end() :].strip()
        elif name == "undef":
            macros.pop(rest, None)
        elif name:
            raise _error(f"directive `#{name}` is not supported", span)
        out.append("")
    if taking:
        at = taking[-1][2]
        raise _error("`#if` without `#endif`", Span(at, 1, at, 2, file))
    return "\n".join(out)


def _uncommented(rest: str) -> str:
    """A directive's text without its comments (outside strings)."""
    kept: list[str] = []
    for m in _TOKEN.finditer(rest):
        token = m.group()
        if token.startswith("//"):
            break
        if token == "/*":
            end = rest.find("*/", m.end())
            return ("".join(kept) + " " + (_uncommented(rest[end + 2 :]) if end >= 0 else "")).strip()
        kept.append(token)
    return "".join(kept).strip()


def _error(message: str, span: Span) -> ParseError:
    return ParseError([Diagnostic("preprocessor", message, span)])


def _expand(line: str, macros: dict[str, str], comment: bool, hidden: frozenset[str] = frozenset()) -> tuple[str, bool]:
    """`line` with each macro name outside strings and comments replaced
    (a macro is not replaced inside its own text), and whether a /* comment
    is still open at its end. `_TooLong` past `_LINE` characters."""
    parts: list[str] = []
    size = 0
    pos = 0
    if comment:
        end = line.find("*/")
        if end < 0:
            return line, True
        parts.append(line[: end + 2])
        pos = end + 2
    for m in _TOKEN.finditer(line, pos):
        token = m.group()
        if token == "/*":
            end = line.find("*/", m.end())
            if end < 0:
                parts.append(line[m.start() :])
                return "".join(parts), True
            parts.append(line[m.start() : end + 2])
            tail, comment = _expand(line[end + 2 :], macros, False, hidden)
            return "".join(parts) + tail, comment
        if token in macros and token not in hidden:
            token = _expand(macros[token], macros, False, hidden | {token})[0]
        size += len(token)
        if size > _LINE:
            raise _TooLong
        parts.append(token)
    return "".join(parts), False


class _TooLong(Exception):
    """A line's macros expand past `_LINE` characters."""


def _test(kind: str, rest: str, macros: dict[str, str], span: Span) -> bool:
    if kind != "if":
        key = rest.strip()
        if _NAME.fullmatch(key) is None:
            raise _error(f"`#{kind}` names a macro", span)
        return (key in macros) == (kind == "ifdef")
    tokens = _EXPR.findall(rest)
    if "".join(tokens) != re.sub(r"\s+", "", rest) or not tokens:
        raise _error(f"cannot read `#if {rest}` (integers, macro names, defined, !, &&, ||, ==, != only)", span)
    at = 0

    def value(text: str) -> int:
        seen: set[str] = set()
        while text in macros and text not in seen:
            seen.add(text)
            text = macros[text].strip()
        return int(text) if text.isdigit() else 0

    def atom() -> int:
        nonlocal at
        token = tokens[at] if at < len(tokens) else ""
        at += 1
        if token == "!":
            return int(not atom())
        if token == "(":
            v = binary()
            if at >= len(tokens) or tokens[at] != ")":
                raise _error(f"cannot read `#if {rest}`: a `(` is not closed", span)
            at += 1
            return v
        if token == "defined":
            opened = at < len(tokens) and tokens[at] == "("
            at += opened
            key = tokens[at] if at < len(tokens) else ""
            at += 1
            if opened:
                if at >= len(tokens) or tokens[at] != ")":
                    raise _error(f"cannot read `#if {rest}`: a `(` is not closed", span)
                at += 1
            return int(key in macros)
        if token.isdigit():
            return int(token)
        if _NAME.fullmatch(token):
            return value(token)
        raise _error(f"cannot read `#if {rest}`", span)

    def binary(level: int = 0) -> int:
        """The operators of `_LEVELS[level]` and tighter, left to right."""
        nonlocal at
        if level == len(_LEVELS):
            return atom()
        v = binary(level + 1)
        while at < len(tokens) and tokens[at] in _LEVELS[level]:
            op = tokens[at]
            at += 1
            w = binary(level + 1)
            v = int(v or w) if op == "||" else int(v and w) if op == "&&" else int((v == w) == (op == "=="))
        return v

    result = binary()
    if at != len(tokens):
        raise _error(f"cannot read `#if {rest}`", span)
    return bool(result)

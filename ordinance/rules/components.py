"""Components, expanded as Soufflé does: into plain declarations and rules.

`.comp` declares a template; `.init inst = Name<number>` copies its items,
naming each relation and type it declares `inst.rel` (`inst.T`); a name the
component does not declare is left alone, to be resolved where the instance
lives (an enclosing instance, or the program). A component's items are those
of its base components (type arguments bound, each base's own bases first),
then its nested instances, then its own; `.override rel` drops the bases'
rules and facts for `rel`, which a base must declare `overridable`. Type
parameters stand for types in declarations and for component names in
`.init` and in the list of bases; each component sees its own parameters
only (a nested component does not see its enclosing component's).

Every expanded item keeps the span it has inside the component, so later
diagnostics and proofs cite the component's text. Components never
instantiated are still checked (unknown components, type argument counts,
overrides, cycles), with their type parameters left open.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, Sequence, TypeVar, Union

from ..diagnostics import Diagnostic, Related, Span
from . import ast

__all__ = ["expand_components", "MAX_INSTANCE_ITEMS", "MAX_NESTING"]

MAX_INSTANCE_ITEMS = 1_000_000  # items all instances may expand into
MAX_NESTING = 64  # instances inside instances, bases of bases

# what an instance expands into
Content = Union[ast.Decl, ast.TypeDecl, ast.IODirective, ast.Rule, ast.Subsumption]
# formal type parameter -> actual name; None while checking an uninstantiated component
Binding = Mapping[str, "str | None"]
_C = TypeVar("_C", bound=Content)


@dataclass
class _Scope:
    """The components visible at one level of nesting, and the enclosing level."""

    components: dict[str, ast.Component]
    parent: "_Scope | None" = None

    def lookup(self, name: str) -> tuple[ast.Component, "_Scope"] | None:
        """The component `name` and the scope it is declared in."""
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.components:
                return scope.components[name], scope
            scope = scope.parent
        return None


class _TooLarge(Exception):
    pass


@dataclass
class _Expander:
    found: list[Diagnostic]
    reported: set[tuple[str, str, Span]] = field(default_factory=set)
    reached: set[int] = field(default_factory=set)  # ids of components instantiated
    size: int = 0

    def _error(self, code: str, message: str, span: Span, related: tuple[Related, ...] = ()) -> None:
        key = (code, message, span)
        if key not in self.reported:  # an error in a component instantiated twice is one error
            self.reported.add(key)
            self.found.append(Diagnostic(code, message, span, related=related))

    # ------------------------------------------------------------ lookup

    def scope(self, items: Iterable[object], parent: _Scope | None) -> _Scope:
        """The components declared among `items`, seen from inside `parent`."""
        components: dict[str, ast.Component] = {}
        for item in items:
            if isinstance(item, ast.Component):
                first = components.setdefault(item.name, item)
                if first is not item:
                    self._error(
                        "duplicate_component",
                        f"component `{item.name}` is declared twice",
                        item.span,
                        (Related("first declared here", first.span),),
                    )
        return _Scope(components, parent)

    def resolve(
        self, ref: ast.ComponentType, scope: _Scope, binding: Binding
    ) -> tuple[ast.Component, _Scope, dict[str, str | None]] | None:
        """The component `ref` names, its scope, and the binding of its type
        parameters; None (reported) when there is none."""
        name = binding.get(ref.name, ref.name)
        if name is None:  # an open type parameter: nothing to check yet
            return None
        found = scope.lookup(name)
        if found is None:
            shown = name if name == ref.name else f"{name}` (the argument of `{ref.name}`"
            self._error("unknown_component", f"unknown component `{shown}`", ref.span)
            return None
        comp, home = found
        if len(ref.args) != len(comp.params):
            want = len(comp.params)
            message = f"component `{comp.name}` takes {want} type argument{'s' * (want != 1)}, got {len(ref.args)}"
            self._error("type_argument_count", message, ref.span, (Related("declared here", comp.span),))
            return None
        # as in Soufflé, a component sees its own parameters only, not those
        # of the component its `.init` is in
        return comp, home, {p: binding.get(a, a) for p, a in zip(comp.params, ref.args)}

    # ------------------------------------------------------------ expansion

    def instantiate(
        self, init: ast.Init, scope: _Scope, binding: Binding, stack: tuple[ast.Component, ...]
    ) -> list[Content]:
        resolved = self.resolve(init.component, scope, binding)
        if resolved is None:
            return []
        comp, home, inner = resolved
        content = self.collect(comp, home, inner, frozenset(), stack, init.span)
        self.size += len(content) + 1  # an empty instance costs time too
        if self.size > MAX_INSTANCE_ITEMS:
            raise _TooLarge(init.span)
        return _prefixed(init.name, content)

    def collect(
        self,
        comp: ast.Component,
        home: _Scope,
        binding: Binding,
        overridden: frozenset[str],
        stack: tuple[ast.Component, ...],
        at: Span,
        inherits: bool = False,
    ) -> list[Content]:
        """The items of `comp` before its instance's prefix: its bases', its
        nested instances', its own; rules for `overridden` relations dropped."""
        if any(c is comp for c in stack):
            cycle = " -> ".join(f"`{c.name}`" for c in stack[[id(c) for c in stack].index(id(comp)) :])
            how = "inherits from" if inherits else "contains an instance of"
            self._error("component_cycle", f"component `{comp.name}` {how} itself ({cycle} -> `{comp.name}`)", at)
            return []
        if len(stack) >= MAX_NESTING:
            self._error("too_deep", f"components nest or inherit deeper than {MAX_NESTING} levels", at)
            return []
        if all(v is not None for v in binding.values()):
            self.reached.add(id(comp))
        stack = (*stack, comp)
        body = self.scope(comp.items, home)
        overrides = {o.relation: o for o in comp.items if isinstance(o, ast.Override)}
        out: list[Content] = []
        complete = True  # every base is known: an override can be checked
        for ref in comp.bases:
            resolved = self.resolve(ref, body, binding)
            if resolved is None:
                complete = False
                continue
            base, base_home, base_binding = resolved
            out.extend(
                self.collect(base, base_home, base_binding, overridden | overrides.keys(), stack, ref.span, True)
            )
        inherited = {d.name: d for d in out if isinstance(d, ast.Decl)}
        for name, o in overrides.items():
            decl = inherited.get(name)
            if decl is None and not complete:
                continue
            if decl is None:
                self._error("bad_override", f"no base component of `{comp.name}` declares `{name}`", o.span)
            elif "overridable" not in decl.qualifiers:
                self._error(
                    "bad_override",
                    f"`{name}` is not `overridable`, so `{comp.name}` cannot override it",
                    o.span,
                    (Related("declared here", decl.span),),
                )
        names: dict[str, ast.Item] = {}
        for item in comp.items:
            if isinstance(item, ast.Init):
                self.check_unique(item, names, comp.items)
                out.extend(self.instantiate(item, body, binding, stack))
        for item in comp.items:
            if isinstance(item, (ast.Decl, ast.TypeDecl)):
                out.append(_bound(item, binding))
            elif isinstance(item, ast.Rule):
                rule = _without(item, overridden)
                if rule is not None:
                    out.append(rule)
            elif isinstance(item, ast.Subsumption):
                if item.relation not in overridden:
                    out.append(item)
            elif not isinstance(item, (ast.Component, ast.Init, ast.Override)):
                out.append(item)  # an I/O directive
        return out

    def check_unique(self, init: ast.Init, seen: dict[str, ast.Item], scope: Sequence[object]) -> None:
        """An instance's name is unique among the instances, components,
        relations and types declared beside it (Soufflé's name clash)."""
        if not seen:
            for item in scope:
                if isinstance(item, (ast.Component, ast.Decl, ast.TypeDecl)):
                    seen.setdefault(item.name, item)
        first = seen.setdefault(init.name, init)
        if first is not init:
            what = {ast.Component: "a component", ast.Decl: "a relation", ast.TypeDecl: "a type"}.get(type(first))
            message = (
                f"instance `{init.name}` is declared twice"
                if what is None
                else f"instance `{init.name}` has the name of {what}"
            )
            self._error("duplicate_instance", message, init.span, (Related("first declared here", first.span),))

    def check_unreached(self, components: Iterable[ast.Component], scope: _Scope, open_params: frozenset[str]) -> None:
        """Check the components no instance reached, type parameters open."""
        for comp in components:
            params = open_params | set(comp.params)
            if id(comp) not in self.reached:
                self.collect(comp, scope, dict.fromkeys(params), frozenset(), (), comp.span)
            body = self.scope(comp.items, scope)
            self.check_unreached(body.components.values(), body, params)


def _bound(item: _C, binding: Binding) -> _C:
    """A declaration with type parameters replaced by their arguments."""

    def bind(t: str) -> str:
        actual = binding.get(t)
        return t if actual is None else actual

    return _retyped(item, bind)


def _retyped(item: _C, f: Callable[[str], str]) -> _C:
    """A declaration with each type it refers to mapped by `f` (its own name
    is left as it is); any other item unchanged (record and ADT types are
    declared once for the whole program, as their branches are, so an
    instance does not prefix them)."""

    def params(ps: tuple[ast.Param, ...]) -> tuple[ast.Param, ...]:
        return tuple(replace(p, type=f(p.type)) for p in ps)

    if isinstance(item, ast.Decl):
        return replace(item, params=params(item.params))
    if isinstance(item, ast.TypeDecl):
        supertype = None if item.supertype is None else f(item.supertype)
        return replace(item, supertype=supertype, union=tuple(map(f, item.union)))
    return item


def _without(rule: ast.Rule, overridden: frozenset[str]) -> ast.Rule | None:
    """`rule` without its heads of overridden relations (None: no head left)."""
    heads = [h for h in (rule.head, *rule.more_heads) if h.relation not in overridden]
    if not heads:
        return None
    return replace(rule, head=heads[0], more_heads=tuple(heads[1:]))


# ---------------------------------------------------------------- renaming


class _Renamer:
    def __init__(self, relations: Mapping[str, str], types: Mapping[str, str]):
        self.relations, self.types = relations, types

    def rel(self, name: str) -> str:
        return self.relations.get(name, name)

    def type(self, name: str) -> str:
        return self.types.get(name, name)

    def atom(self, a: ast.Atom) -> ast.Atom:
        return replace(a, relation=self.rel(a.relation), args=tuple(map(self.term, a.args)))

    def term(self, t: ast.Term) -> ast.Term:
        if isinstance(t, ast.Aggregate):
            target = None if t.target is None else self.term(t.target)
            return replace(t, target=target, body=self.body(t.body))
        return ast.map_children(t, self.term)

    def literal(self, lit: Any) -> Any:
        if isinstance(lit, ast.Atom):
            return self.atom(lit)
        if isinstance(lit, ast.Negation):
            return replace(lit, atom=self.atom(lit.atom))
        if isinstance(lit, ast.Comparison):
            return replace(lit, left=self.term(lit.left), right=self.term(lit.right))
        if isinstance(lit, ast.Predicate):
            return replace(lit, args=tuple(map(self.term, lit.args)))
        if isinstance(lit, ast.NegatedGroup):
            return replace(lit, body=self.body(lit.body))
        return replace(lit, branches=tuple(self.body(b) for b in lit.branches))

    def body(self, body: tuple[ast.Literal, ...]) -> tuple[ast.Literal, ...]:
        return tuple(self.literal(lit) for lit in body)  # type: ignore[misc]

    def item(self, item: Content) -> Content:
        if isinstance(item, ast.Rule):
            return replace(
                item,
                head=self.atom(item.head),
                body=self.body(item.body),
                more_heads=tuple(map(self.atom, item.more_heads)),
            )
        if isinstance(item, ast.Subsumption):
            return replace(
                item,
                dominated=self.atom(item.dominated),
                dominating=self.atom(item.dominating),
                body=self.body(item.body),
            )
        if isinstance(item, ast.Decl):
            return replace(_retyped(item, self.type), name=self.rel(item.name))
        if isinstance(item, ast.TypeDecl):
            return replace(_retyped(item, self.type), name=self.type(item.name))
        if isinstance(item, ast.IODirective):
            return replace(item, relation=self.rel(item.relation))
        return item


def _prefixed(instance: str, content: Sequence[Content]) -> list[Content]:
    """The instance's items: what its component declares is named `instance.name`."""
    relations = {d.name: f"{instance}.{d.name}" for d in content if isinstance(d, ast.Decl)}
    types = {t.name: f"{instance}.{t.name}" for t in content if isinstance(t, ast.TypeDecl)}
    renamer = _Renamer(relations, types)
    return [renamer.item(item) for item in content]


# ---------------------------------------------------------------- entry


def expand_components(items: Sequence[ast.Item], found: list[Diagnostic]) -> list[ast.Item]:
    """The program's items with each `.init` replaced by its instance's items
    and `.comp` declarations removed; problems are appended to `found`."""
    if not any(isinstance(i, (ast.Component, ast.Init)) for i in items):
        return list(items)
    expander = _Expander(found)
    top = expander.scope(items, None)
    out: list[ast.Item] = []
    names: dict[str, ast.Item] = {}
    try:
        for item in items:
            if isinstance(item, ast.Init):
                expander.check_unique(item, names, items)
                out.extend(expander.instantiate(item, top, {}, ()))
            elif not isinstance(item, ast.Component):
                out.append(item)
        expander.check_unreached(top.components.values(), top, frozenset())
    except _TooLarge as e:
        span = e.args[0]
        found.append(Diagnostic("too_large", f"instances expand into more than {MAX_INSTANCE_ITEMS:,} items", span))
        return []
    return out

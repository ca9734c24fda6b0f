"""Diagnostics are data: a code, a one-line message, a source span, and as
fields (never glued into the message, as Cedar has them) a `help`
suggestion ("did you mean `lease`"), `related` spans ("first declared here")
and `notes`.

Every phase of the pipeline reports what is wrong as `Diagnostic` values. A
phase that cannot continue raises the exception of its phase (a subclass of
`OrdinanceError`) carrying *all* the diagnostics it found, never just the
first. The library never exits the process; the CLI chooses exit codes.

Messages follow Cedar's style: lowercase, no trailing period, one line, user
names in backticks.

`CODES` is the one registry of error codes (snake_case, like every
identifier the program defines), each with the phase that reports it and
what it means; the README's table and the golden tests read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable

__all__ = [
    "Span",
    "NO_SPAN",
    "Related",
    "Diagnostic",
    "CODES",
    "diagnostic_of",
    "error_pair",
    "arguments",
    "arity_message",
    "OrdinanceError",
    "ParseError",
    "CheckError",
    "SafetyViolationError",
    "EvaluationError",
    "LimitExceeded",
    "InputError",
    "StoreError",
    "StaleEpochError",
    "GateError",
    "ProjectionError",
]


@dataclass(frozen=True, slots=True)
class Span:
    """A region of source text; lines and columns are 1-based, end exclusive."""

    line: int = 0
    column: int = 0
    end_line: int = 0
    end_column: int = 0
    file: str | None = None

    def __str__(self) -> str:
        return f"{self.file or '<input>'}:{self.line}:{self.column}"


NO_SPAN = Span()


@dataclass(frozen=True, slots=True)
class Related:
    """Another place a diagnostic points at, e.g. ("first declared here", span)."""

    message: str
    span: Span


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """`span` is NO_SPAN (line 0) when the problem is not in source text
    (a stored event, a request): then the message says where."""

    code: str
    message: str
    span: Span = field(default=NO_SPAN)
    severity: str = "error"
    help: str | None = None  # a suggestion: "did you mean `lease`"
    related: tuple[Related, ...] = ()
    notes: tuple[str, ...] = ()

    def __str__(self) -> str:
        where = f"{self.span}: " if self.span.line else ""
        return f"{where}{self.severity}[{self.code}]: {self.line()}"

    def line(self) -> str:
        """The message with its help and related places, on one line."""
        out = self.message.splitlines()[0] if self.message else ""
        for r in self.related:
            out += f"; {r.message} at {r.span}"
        if self.help:
            out += f"; help: {self.help}"
        return out

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"code": self.code, "message": self.message}
        if self.span.line:
            out["span"] = {
                "file": self.span.file,
                "line": self.span.line,
                "column": self.span.column,
                "end_line": self.span.end_line,
                "end_column": self.span.end_column,
            }
        if self.help:
            out["help"] = self.help
        if self.related:
            out["related"] = [{"message": r.message, "at": str(r.span)} for r in self.related]
        if self.notes:
            out["notes"] = list(self.notes)
        return out


def arguments(n: int) -> str:
    """`1 argument`, `3 arguments`."""
    return f"{n} argument" if n == 1 else f"{n} arguments"


def arity_message(relation: str, used: int, expected: int, how: str = "declared with") -> str:
    """The arity mismatch message, everywhere one is reported:
    relation `p` used with 2 arguments, declared with 3."""
    return f"relation `{relation}` used with {arguments(used)}, {how} {expected}"


def diagnostic_of(exc: BaseException) -> Diagnostic:
    """An exception as one diagnostic: the one mapping from an exception to
    error data, which every surface renders (a decision's errors and
    reasons, `error_pair`, the server's and MCP's `error_data`, the CLI's
    `error[CODE]` lines). An OrdinanceError's first diagnostic (with its
    span), under the error's code; anything else as its class name and
    first line (a surface that must not show what it is renders `internal`)."""
    if isinstance(exc, OrdinanceError) and exc.diagnostics:
        first = exc.diagnostics[0]
        return first if first.code == exc.code else replace(first, code=exc.code)
    code = exc.code if isinstance(exc, OrdinanceError) else type(exc).__name__
    return Diagnostic(code, (str(exc).splitlines() or [type(exc).__name__])[0])


def error_pair(exc: BaseException) -> tuple[str, str]:
    """`diagnostic_of(exc)` as (its code, its line, without the
    `error[CODE]: ` a diagnostic prints itself with: whoever shows the pair
    writes the code once)."""
    d = diagnostic_of(exc)
    return d.code, d.line()


class OrdinanceError(Exception):
    """Root of every error ordinance raises.

    `code` is the code of the first diagnostic (the conformance corpus and the
    CLI read it); `diagnostics` holds all of them.
    """

    default_code = "error"

    def __init__(self, diagnostics: Iterable[Diagnostic] | str, code: str | None = None):
        if isinstance(diagnostics, str):
            diagnostics = [Diagnostic(code or self.default_code, diagnostics)]
        self.diagnostics: tuple[Diagnostic, ...] = tuple(diagnostics)
        self.code: str = code or (self.diagnostics[0].code if self.diagnostics else self.default_code)
        super().__init__("; ".join(str(d) for d in self.diagnostics))


class ParseError(OrdinanceError):
    """The text is not in the language (phase: parser)."""

    default_code = "syntax"


class CheckError(OrdinanceError):
    """The program parsed but a static check failed (phase: analysis)."""

    default_code = "check"


class SafetyViolationError(CheckError):
    """A variable is not bound by a positive literal (phase: analysis)."""

    default_code = "safety_violations"


class EvaluationError(OrdinanceError):
    """Evaluation could not complete (phase: engine)."""

    default_code = "evaluation"


class LimitExceeded(EvaluationError):
    """A run limit (tuples, iterations, deadline) was exceeded."""

    default_code = "limit_exceeded"


class InputError(OrdinanceError):
    """A fact file could not be read, or a line of it is malformed (phase: input)."""

    default_code = "fact_file"


class StoreError(OrdinanceError):
    """The fact store refused or failed an operation (phase: store)."""

    default_code = "store"


class StaleEpochError(StoreError):
    """A write carried an epoch older than the newest one for its resource."""

    default_code = "stale_epoch"


class GateError(OrdinanceError):
    """The gate was used wrongly (a bad request); policy outcomes never raise."""

    default_code = "gate"


class ProjectionError(OrdinanceError):
    """A projection could not be rendered (unknown projection or audience, a cap too small)."""

    default_code = "projection"


# code -> (phase, meaning). Every code a diagnostic or error carries is here.
CODES: dict[str, tuple[str, str]] = {
    # the language (lint, load)
    "syntax": ("parse", "the text is not in the language"),
    "encoding": ("parse", "a file (a policy, a facts file) is not valid UTF-8"),
    "preprocessor": (
        "parse",
        "a C preprocessor directive this pass does not carry out (function-like macros, `#pragma`)",
    ),
    "too_deep": ("parse", "nesting (rules, JSON) deeper than the parser allows"),
    "too_large": ("parse", "a file or a request body larger than its size limit"),
    "include_not_found": ("load", "an `.include` names no stdlib module or file"),
    "include_cycle": ("load", "files include each other"),
    "include_outside": ("load", "an `.include` outside the policy's directory tree, not allowed explicitly"),
    "include_not_policy": ("load", "an included file that is not a policy (its contents are never shown)"),
    "unknown_component": ("load", "an `.init` or a base names a component that is not declared where it is used"),
    "type_argument_count": ("load", "a component given another number of type arguments than it has parameters"),
    "bad_override": ("load", "an `.override` of a relation no base component declares `overridable`"),
    "component_cycle": ("load", "a component inherits from itself or contains an instance of itself"),
    "duplicate_instance": ("load", "an `.init` of a name taken by an instance, component, relation or type beside it"),
    "duplicate_component": ("load", "two components of one name in the same scope"),
    "unknown_type": ("check", "a `.decl` names a type that does not exist"),
    "duplicate_decl": ("check", "a relation is declared twice"),
    "arity_mismatch": ("check", "a relation is used with another number of arguments"),
    "unknown_relation": ("check", "a relation is used but never declared, defined or given"),
    "unbound_variable": ("check", "a variable is not bound by a positive literal"),
    "nested_witness": (
        "check",
        "a `min`/`max` witness in a nested aggregate that reads a variable of the one around it",
    ),
    "safety_violations": ("check", "a rule is unsafe (its variables are not all bound)"),
    "aggregate_position": ("check", "an aggregate where it cannot be"),
    "type_mismatch": ("check", "a value of one type where the declaration says another"),
    "cyclic_negation": ("check", "a relation depends negatively on itself"),
    "unsupported": ("check", "a construct the engine does not run"),
    "unknown_functor": ("parse", "a call of a built-in functor that does not exist"),
    "invalid_regex": ("check", "a regular expression that does not compile"),
    "swapped_arguments": ("check", "a warning: a string built-in with a variable pattern and a constant subject"),
    "backtracking_regex": ("check", "a warning: a regular expression only Python's backtracking `re` can run"),
    "range_position": ("check", "`range` where it cannot give several values"),
    "cyclic_type": ("check", "a `.type` defined in terms of itself"),
    "duplicate_attribute": ("check", "a `.decl` names an attribute twice"),
    "choice_domain": ("check", "a `choice-domain` key that names no attribute, or every one"),
    "autoinc": ("check", "`autoinc()` other than as an argument of an atom of a rule that is not recursive"),
    "subsumption": ("check", "a subsumption clause `a <= b :- ...` over two relations, an `eqrel`, or `$now`"),
    "io_parameter": ("check", "an I/O directive parameter that does not exist or fit"),
    "pragma": ("check", "a warning: a `.pragma` other than `magic-transform`, which changes nothing here"),
    "unknown_branch": ("check", "a constructor `$A` of a branch that no `.type` declares"),
    "check": ("check", "a static check failed"),
    # evaluation
    "evaluation": ("engine", "evaluation could not complete"),
    "division_by_zero": ("engine", "a rule divides by zero"),
    "invalid_number": ("engine", "a conversion of text that is not a number"),
    "limit_exceeded": ("engine", "a tuple, round or time limit was reached"),
    "unsupported_on_backend": ("engine", "a construct the chosen SQL backend does not compile (engine/sql)"),
    "backend_unavailable": ("engine", "the chosen SQL backend's driver is not installed or cannot connect"),
    # the store
    "store": ("store", "the store refused or failed an operation"),
    "stale_epoch": ("store", "a write under an epoch older than the newest for its resource"),
    "revision_moved": ("store", "the facts a decision read changed before it was logged"),
    "fence_mismatch": ("store", "a fenced write names another resource than its fence"),
    "bad_fence": ("store", "a fence is not a resource and an epoch"),
    "unknown_kind": ("store", "an event kind that does not exist"),
    "kind_mismatch": ("store", "an event kind that does not carry its relation"),
    "request_fact": ("store", "a request fact written to the store"),
    "bad_payload": ("store", "an event payload of the wrong shape"),
    "bad_seq": ("store", "an imported event does not continue the log"),
    "unknown_seq": ("store", "no event has that sequence number"),
    "unknown_revision": ("store", "a revision the log has not reached"),
    "not_purgeable": ("store", "a purge names events that cannot be purged"),
    "unknown_backend": ("store", "a store URL of no known backend"),
    "exists": ("store", "the store or file already exists"),
    "bad_jsonl": ("store", "a JSON Lines file that cannot be loaded"),
    "derived_relation": ("store", "a fact of a relation the policy derives: never stored, on any write path"),
    "no_schema": ("store", "a store opened without a policy's schema takes no facts"),
    "bad_decision": ("store", "a decision event whose payload is not a decision"),
    "imported_decision": ("store", "an imported decision event, which this store did not make (kept only when asked)"),
    "no_reason": ("store", "a purge without a reason"),
    "no_such_fact": ("store", "a retraction of a fact the store does not hold"),
    "no_store": ("store", "a store that does not exist, given to a command that does not create one"),
    "store_failed": ("store", "the database failed (the message names the store)"),
    # values, checked once at the edge (store writes, requests, files)
    "nul_byte": ("value", "a string holding a NUL byte"),
    "lone_surrogate": ("value", "a string holding a lone surrogate (undecodable bytes)"),
    "integer_range": ("value", "an integer outside signed 64 bits"),
    "epoch_range": ("value", "an epoch outside 0 .. 2^63 - 1"),
    "time_range": ("value", "a time outside years 1 .. 9999 that is not `forever`"),
    "bad_layer": ("store", "an event whose privacy layer is not a non-empty string"),
    # the gate
    "gate": ("gate", "the gate was used wrongly (a bad request)"),
    "bad_field": ("gate", "a request field or attribute of the wrong type (checked before the decision is made)"),
    "unknown_argument": ("serve", "an MCP tool call with an argument the tool does not take"),
    # projections (ordinance.project)
    "projection": ("project", "a projection could not be rendered"),
    "unknown_projection": ("project", "the policy declares no such projection"),
    "unknown_section": ("project", "a line in a section its projection does not declare"),
    "bad_cap": ("project", "a byte cap too small for the projection's heading"),
    "bad_bound": ("project", "a byte bound too small for the rehydration bundle"),
    "bad_layers": ("project", "the policy's layers are inconsistent (several default layers)"),
    "unknown_layer": ("project", "a layer the policy does not declare"),
    "unknown_audience": ("project", "an audience the policy does not declare"),
    "bad_records": ("project", "a file of Markdown records that cannot be read"),
    # the server, its clients and hooks
    "bad_request": ("serve", "a request body of the wrong shape"),
    "bad_json": ("serve", "a body that is not JSON"),
    "bad_value": ("serve", "a value that does not fit its relation's declaration"),
    "unauthorized": ("serve", "no valid bearer token"),
    "forbidden": ("serve", "the principal may not do this"),
    "principal_mismatch": ("serve", "a request for another agent than the principal"),
    "reserved_attribute": ("serve", "a request attribute the service fills itself"),
    "may_not_assert": ("serve", "`may_assert` does not allow the write"),
    "audience_forbidden": ("serve", "an audience that sees more than the principal may"),
    "clock_not_granted": ("serve", "a `now` from a principal the owner did not give the clock"),
    "bound_to_writer": ("serve", "a fact in another writer's name than the principal's"),
    "ungated_intent": ("serve", "an intent receipt not written by the gate that allowed its action"),
    "no_lease": ("gate", "a release of a lease the agent does not hold"),
    "no_intent": ("serve", "an outcome receipt of an action with no intent of the writer on record"),
    "bad_tokens": ("serve", "a tokens file that cannot be read"),
    "no_tokens": ("serve", "neither a principal nor a tokens file"),
    "no_principal": ("serve", "stdio MCP needs a principal"),
    "missing_extra": ("serve", "an optional extra (`server`, `postgres`) is not installed"),
    "bad_hook_payload": ("serve", "an agent host's hook payload of the wrong shape"),
    "unreachable": ("serve", "the gate server did not answer"),
    "hook": ("serve", "the command hook failed while deciding (it denies)"),
    # the command line and its inputs
    "no_decision": ("explain", "no decision is logged at that seq"),
    "usage": ("cli", "a command was called wrongly"),
    "no_policy": ("cli", "the policy file does not exist"),
    "not_a_fact": ("cli", "an argument is not a fact"),
    "not_ground": ("cli", "a fact has a variable or an expression"),
    "bad_query": ("cli", "a query is not one atom of constants, variables and `_`"),
    "no_scenarios": ("cli", "no scenario files where the demo looks"),
    "bad_fixture": ("cli", "a fuzz fixture that cannot be replayed"),
    "io": ("cli", "a file could not be read or written"),
    "fact_file": ("input", "a fact file that cannot be read, or a malformed line of one"),
    "home_in_project": ("cli", "the owner's directory would be inside the project, within the agent's reach"),
    "bad_settings": ("cli", "a host's settings file that is not JSON (left as it is)"),
    "port_in_use": ("serve", "the port the server would listen on is taken"),
    "aborted": ("cli", "interrupted"),
    "internal": ("cli", "a bug in ordinance (please report it)"),
    "error": ("any", "an error of no more specific kind"),
}

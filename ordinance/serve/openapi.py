"""The OpenAPI document of the HTTP API, from one table of routes."""

from __future__ import annotations

from typing import Any

__all__ = ["ROUTES", "document"]

_ERROR = {"$ref": "#/components/schemas/Error"}
_OBJ = {"type": "object"}
_NOW = {"type": "string", "description": "ISO-8601 instant; default: the server's clock"}
_AUDIENCE = {
    "type": "string",
    "description": "ask as this audience (one the token's principal may see); default: the widest it may see",
}
_REQUEST = {
    "type": "object",
    "description": "a request: id, kind, target, epoch, scope, lease_epoch, uses, needs, "
    "routes, requires, irreversible, key, attributes {relation: [[args after A]]}; agent is the principal",
    "required": ["kind", "target", "epoch"],
}

HOOK = "/hooks/{host}"

# (method, path, summary, request body properties or None, authenticated)
ROUTES: tuple[tuple[str, str, str, dict[str, Any] | None, bool], ...] = (
    ("get", "/health", "Liveness, store revision and policy hash", None, False),
    ("get", "/openapi.json", "This document", None, False),
    (
        "post",
        "/check",
        "Decide a request and log the decision (as Gate.check does)",
        {"request": _REQUEST, "now": _NOW, "proofs": {"type": "boolean"}},
        True,
    ),
    (
        "post",
        "/assert",
        "Append facts if the policy's may_assert lets the principal write each relation",
        {
            "facts": {
                "type": "array",
                "items": {"type": "object", "properties": {"relation": {"type": "string"}, "args": {"type": "array"}}},
            },
            "text": {"type": "string", "description": "facts in the rule language"},
            "source": {"type": "string"},
            "layer": {"type": "string", "description": "the facts' privacy layer; default: the policy's"},
        },
        True,
    ),
    ("post", "/load", "Append JSON Lines of facts (the body), one batch, under may_assert", None, True),
    (
        "post",
        "/lease",
        "Take (decided by the policy, written with compare-and-set) or release the principal's lease of a work",
        {
            "action": {"enum": ["take", "release"]},
            "work": {"type": "string"},
            "epoch": {"type": "integer", "description": "take: the epoch of the grant it is taken under"},
            "until": {"type": "string", "description": "take: ISO-8601 instant the lease expires"},
            "scope": {"type": "string", "description": "take: narrow the authority to this scope"},
            "now": _NOW,
        },
        True,
    ),
    (
        "post",
        "/query",
        "Answers to one atom at `now` (optionally with a request's facts)",
        {"pattern": {"type": "string"}, "request": _REQUEST, "now": _NOW, "audience": _AUDIENCE},
        True,
    ),
    (
        "post",
        "/why",
        "The proof of a fact, or (given `decision`, a logged seq) of that decision, rebuilt",
        {
            "fact": {"type": "string"},
            "request": _REQUEST,
            "now": _NOW,
            "audience": _AUDIENCE,
            "decision": {"type": "integer", "description": "a decision's seq in the log (instead of `fact`)"},
        },
        True,
    ),
    (
        "post",
        "/why-not",
        "Why a fact does not hold, and what would make it",
        {"fact": {"type": "string"}, "request": _REQUEST, "now": _NOW, "audience": _AUDIENCE},
        True,
    ),
    (
        "get",
        "/log",
        "Events of the log after `since` (query: since, limit, kind, audience; an audience "
        "gets only the fact events of the layers it sees)",
        None,
        True,
    ),
    (
        "get",
        "/state",
        "The state file as an audience sees it: its lines and text (query: now, audience, cap)",
        None,
        True,
    ),
    (
        "get",
        "/rehydrate",
        "The rehydration bundle: state, open decisions, newest log lines (query: now, audience, bound, cap)",
        None,
        True,
    ),
    (
        "post",
        HOOK,
        "A host's hook (`claude-code`, `codex`, `gemini`, `cursor`, `copilot`, `pre-push`): before a tool "
        "runs it decides, after it records (always 200; failures are the host's fail-closed answer)",
        None,
        True,
    ),
)


def document(version: str) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for method, path, summary, body, auth in ROUTES:
        responses: dict[str, Any] = {"200": {"description": "ok", "content": {"application/json": {"schema": _OBJ}}}}
        if path != HOOK:  # a hook answers a failure with a 200 deny: Claude Code reads only a 2xx
            responses["4XX"] = {"description": "error[CODE] data", "content": {"application/json": {"schema": _ERROR}}}
        op: dict[str, Any] = {"summary": summary, "responses": responses}
        if auth:
            op["security"] = [{"bearer": []}]
        if path == HOOK:
            op["parameters"] = [{"name": "host", "in": "path", "required": True, "schema": {"type": "string"}}]
        if body is not None:
            op["requestBody"] = {"content": {"application/json": {"schema": {"type": "object", "properties": body}}}}
        paths.setdefault(path, {})[method] = op
    return {
        "openapi": "3.1.0",
        "info": {"title": "ordinance gate", "version": version},
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Error": {
                    "type": "object",
                    "properties": {
                        "error": {
                            "type": "object",
                            "properties": {
                                "code": {"type": "string"},
                                "message": {"type": "string"},
                                "span": {"type": ["object", "null"]},
                            },
                        }
                    },
                }
            },
        },
    }

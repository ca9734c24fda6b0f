"""The long-running gate: HTTP API, agents' hooks (ordinance.hosts), MCP, tokens -> principals.

    service = Service(ordinance.rules.load("policy.rules"), open_store("./ordinance.db"))
    app = create_app(service, Tokens.from_file("tokens.toml"))   # Starlette (the `server` extra)

`Service` and the hook logic need only the core install; `create_app`
(Starlette), `serve` (uvicorn) and the MCP server need `ordinance[server]`.
"""

from .identity import AuthError, Principal, Tokens, digest
from .service import BadRequest, Forbidden, Service, error_data

__all__ = [
    "AuthError",
    "BadRequest",
    "Forbidden",
    "Principal",
    "Service",
    "Tokens",
    "digest",
    "error_data",
]

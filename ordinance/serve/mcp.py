"""`ordinance mcp`: the gate as an MCP server, on the official `mcp` SDK.

Tools: `check` (decide and log, as the HTTP API does), `why`, `why_not`,
`query`, `assert` (under the policy's `may_assert`), `lease` (take or
release, decided by the policy), `state` (the state
file) and `rehydrate` (the bundle); the reading tools take an `audience`
the principal may see (default: its widest). Over stdio the principal is the one the server was started
for; over streamable HTTP each call's bearer token names it (the tokens
file of `ordinance serve`). A failed call is an MCP tool error whose text
is `error[CODE]: message`.
"""

from __future__ import annotations

from typing import Any, Callable

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from pydantic import AnyHttpUrl
from mcp.server.mcpserver.exceptions import ToolError

from .. import __version__
from ..diagnostics import OrdinanceError
from .identity import AuthError, Principal, Tokens
from .service import Service, error_data

__all__ = ["create_mcp", "TokenPrincipals"]

OWNER_SCOPE = "ordinance:owner"


class TokenPrincipals:
    """The SDK's TokenVerifier over a tokens file: client_id is the principal."""

    def __init__(self, tokens: Tokens) -> None:
        self.tokens = tokens

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            p = self.tokens.principal(f"Bearer {token}")
        except AuthError:
            return None
        return AccessToken(token=token, client_id=p.name, scopes=[OWNER_SCOPE] if p.owner else [])


def _from_token(tokens: Tokens) -> Principal:
    token = get_access_token()
    if token is None:
        raise AuthError("send `Authorization: Bearer TOKEN`")
    return tokens.principal(f"Bearer {token.token}")  # with its audiences


def create_mcp(
    service: Service,
    principal: Principal | None = None,
    *,
    tokens: Tokens | None = None,
    url: str = "http://127.0.0.1:8378",
) -> MCPServer:
    """The MCP server: tools acting as `principal` (stdio), or as each
    call's token's principal (streamable HTTP with `tokens`)."""
    if (principal is None) == (tokens is None):
        raise OrdinanceError("give the principal (stdio) or a tokens file (http)", code="no_tokens")
    if tokens is not None:
        server = MCPServer(
            "ordinance",
            instructions=__doc__,
            version=__version__,
            log_level="WARNING",
            token_verifier=TokenPrincipals(tokens),
            auth=AuthSettings(issuer_url=AnyHttpUrl(url), resource_server_url=AnyHttpUrl(f"{url}/mcp")),
        )
        known = tokens
        who: Callable[[], Principal] = lambda: _from_token(known)  # noqa: E731
    else:
        server = MCPServer("ordinance", instructions=__doc__, version=__version__, log_level="WARNING")
        fixed: Principal = principal  # type: ignore[assignment]  # not None: checked above
        who = lambda: fixed  # noqa: E731

    def run(work: Callable[[Principal], Any]) -> Any:
        try:
            return work(who())
        except Exception as exc:  # a tool error with the error[CODE] line, never a traceback
            err = error_data(exc)["error"]
            raise ToolError(f"error[{err['code']}]: {err['message']}") from None

    @server.tool(
        description="Decide a request at the gate and log the decision. `request`: kind, target, "
        "epoch, and optionally id, scope, lease_epoch, uses, needs, routes, requires, key, "
        "attributes; the agent is you. `now`: ISO-8601, default the server's clock."
    )
    def check(request: dict[str, Any], now: str | None = None, proofs: bool = False) -> dict[str, Any]:
        return run(lambda p: service.check(p, {"request": request, "now": now, "proofs": proofs}))

    @server.tool(
        description='The proof that a fact holds, e.g. `forbid("a1", "stale-epoch", "job")`; '
        "optionally with a request's facts in the model. Or, given `decision` (a seq from the log) "
        "instead of `fact`, the proof of that logged decision, rebuilt."
    )
    def why(
        fact: str | None = None,
        request: dict[str, Any] | None = None,
        now: str | None = None,
        audience: str | None = None,
        decision: int | None = None,
    ) -> dict[str, Any]:
        asked = {"fact": fact, "request": request, "now": now, "audience": audience, "decision": decision}
        return run(lambda p: service.why(p, asked))

    @server.tool(description="Why a fact does not hold, and what would make it hold (`_` leaves an argument open).")
    def why_not(
        fact: str, request: dict[str, Any] | None = None, now: str | None = None, audience: str | None = None
    ) -> dict[str, Any]:
        return run(lambda p: service.why_not(p, {"fact": fact, "request": request, "now": now, "audience": audience}))

    @server.tool(description="Answers to one atom, e.g. `current_grant(A, S, E)`: one binding per answer.")
    def query(
        pattern: str, request: dict[str, Any] | None = None, now: str | None = None, audience: str | None = None
    ) -> dict[str, Any]:
        return run(
            lambda p: service.query(p, {"pattern": pattern, "request": request, "now": now, "audience": audience})
        )

    @server.tool(
        name="assert",
        description="Append facts written in the rule language, e.g. "
        '`claim("c1", "db", "role", "primary").`, if the policy\'s '
        "may_assert lets you write each relation; all or nothing; "
        "`layer`: their privacy layer (default: the policy's).",
    )
    def assert_(text: str, source: str = "mcp", layer: str | None = None) -> dict[str, Any]:
        return run(lambda p: service.write(p, service.facts_of({"text": text}), source, layer=layer))

    @server.tool(
        description="Take a lease of `work` (`action` take: under your grant at `epoch`, until the ISO-8601 "
        "instant `until`; decided by the policy and written with compare-and-set) or release yours "
        "(`action` release)."
    )
    def lease(
        action: str,
        work: str,
        epoch: int | None = None,
        until: str | None = None,
        scope: str | None = None,
        now: str | None = None,
    ) -> dict[str, Any]:
        body = {"action": action, "work": work, "epoch": epoch, "until": until, "scope": scope, "now": now}
        return run(lambda p: service.lease(p, body))

    @server.tool(
        description="The standing agent's state file (Open, Delegates, Armed, Claims, Settled) as "
        "`audience` may see it (default: your widest), under a `cap` in bytes; `text` is "
        "the file."
    )
    def state(now: str | None = None, audience: str | None = None, cap: int | None = None) -> dict[str, Any]:
        return run(lambda p: service.state(p, now, audience, cap))

    @server.tool(
        description="The one bounded read after a cold turn: the state file, the open decisions and "
        "the newest log lines, in at most `bound` bytes; `text` is the bundle."
    )
    def rehydrate(
        now: str | None = None, audience: str | None = None, bound: int | None = None, cap: int | None = None
    ) -> dict[str, Any]:
        return run(lambda p: service.rehydrate(p, now, audience, bound, cap))

    _refuse_unknown_arguments(server)
    return server


def _refuse_unknown_arguments(server: MCPServer) -> None:
    """Make every tool refuse an argument it does not take (the SDK's argument
    models ignore them, so a misspelt `given` for `request` would be dropped
    silently), and say so in each tool's JSON Schema."""
    for tool in server._tool_manager.list_tools():
        model = tool.fn_metadata.arg_model
        model.model_config["extra"] = "forbid"
        model.model_rebuild(force=True)
        tool.parameters = model.model_json_schema(by_alias=True)

"""`ordinance mcp`: the gate as an MCP server, on the official `mcp` SDK.

Tools: `check` (decide and log, as the HTTP API does), `why`, `why_not`,
`query`, `assert` (under the policy's `may_assert`), `lease` (take or
release, decided by the policy), `state` (the state
file) and `rehydrate` (the bundle); the reading tools take an `audience`
the principal may see (default: its widest). Over stdio the principal is the one the server was started
for; over streamable HTTP each call's bearer token names it (the tokens
file of `ordinance serve`). A failed call is an MCP tool error whose text
is `error[CODE]: message`.

No call stalls another: each tool's work runs in a worker thread, off the
SDK's event loop, and the call waits for it at most WAIT_DEADLINES times the
gate's deadline (the evaluation itself is bounded by that deadline; the rest
is the wait for the service's lock), then answers `error[limit_exceeded]`.
An argument a tool does not take is refused (`error[unknown_argument]`) by
a middleware in front of the SDK's tool call, and each tool's JSON Schema
says `additionalProperties: false` (the SDK's argument models ignore
unknown arguments, so a misspelt `given` for `request` would be dropped
silently).
"""

from __future__ import annotations

import inspect
from typing import Any, Awaitable, Callable

import anyio
import anyio.to_thread

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from pydantic import AnyHttpUrl
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent

from .. import __version__
from ..diagnostics import OrdinanceError
from .identity import AuthError, Principal, Tokens
from .service import Service, error_data

__all__ = ["create_mcp", "TokenPrincipals"]

OWNER_SCOPE = "ordinance:owner"
WAIT_DEADLINES = 3  # a call waits this many gate deadlines for its work (the lock, then the evaluation)


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

    deadline = service.gate.limits.deadline
    wait = None if deadline is None else WAIT_DEADLINES * deadline

    def failed(exc: BaseException) -> ToolError:  # a tool error with the error[CODE] line, never a traceback
        err = error_data(exc)["error"]
        return ToolError(f"error[{err['code']}]: {err['message']}")

    async def run(work: Callable[[Principal], Any]) -> Any:
        """`work` as the caller's principal, in a worker thread (the event
        loop keeps serving other calls), waited for at most `wait` seconds."""
        try:
            p = who()  # (on the loop: the caller's token is in its context)
            with anyio.fail_after(wait):
                return await anyio.to_thread.run_sync(work, p, abandon_on_cancel=True)
        except TimeoutError:
            raise ToolError(f"error[limit_exceeded]: limit exceeded: no answer within {wait:g} seconds") from None
        except Exception as exc:
            raise failed(exc) from None

    @server.tool(
        description="Decide a request at the gate and log the decision. `request`: kind, target, "
        "epoch, and optionally id, scope, lease_epoch, uses, needs, routes, requires, key, "
        "attributes; the agent is you. `now`: ISO-8601, default the server's clock."
    )
    async def check(request: dict[str, Any], now: str | None = None, proofs: bool = False) -> dict[str, Any]:
        return await run(lambda p: service.check(p, {"request": request, "now": now, "proofs": proofs}))

    @server.tool(
        description='The proof that a fact holds, e.g. `forbid("a1", "stale-epoch", "job")`; '
        "optionally with a request's facts in the model. Or, given `decision` (a seq from the log) "
        "instead of `fact`, the proof of that logged decision, rebuilt."
    )
    async def why(
        fact: str | None = None,
        request: dict[str, Any] | None = None,
        now: str | None = None,
        audience: str | None = None,
        decision: int | None = None,
    ) -> dict[str, Any]:
        asked = {"fact": fact, "request": request, "now": now, "audience": audience, "decision": decision}
        return await run(lambda p: service.why(p, asked))

    @server.tool(description="Why a fact does not hold, and what would make it hold (`_` leaves an argument open).")
    async def why_not(
        fact: str, request: dict[str, Any] | None = None, now: str | None = None, audience: str | None = None
    ) -> dict[str, Any]:
        return await run(
            lambda p: service.why_not(p, {"fact": fact, "request": request, "now": now, "audience": audience})
        )

    @server.tool(description="Answers to one atom, e.g. `current_grant(A, S, E)`: one binding per answer.")
    async def query(
        pattern: str, request: dict[str, Any] | None = None, now: str | None = None, audience: str | None = None
    ) -> dict[str, Any]:
        return await run(
            lambda p: service.query(p, {"pattern": pattern, "request": request, "now": now, "audience": audience})
        )

    @server.tool(
        name="assert",
        description="Append facts written in the rule language, e.g. "
        '`claim("c1", "db", "role", "primary").`, if the policy\'s '
        "may_assert lets you write each relation; all or nothing; "
        "`layer`: their privacy layer (default: the policy's).",
    )
    async def assert_(text: str, source: str = "mcp", layer: str | None = None) -> dict[str, Any]:
        return await run(lambda p: service.write(p, service.facts_of({"text": text}), source, layer=layer))

    @server.tool(
        description="Take a lease of `work` (`action` take: under your grant at `epoch`, until the ISO-8601 "
        "instant `until`; decided by the policy and written with compare-and-set) or release yours "
        "(`action` release)."
    )
    async def lease(
        action: str,
        work: str,
        epoch: int | None = None,
        until: str | None = None,
        scope: str | None = None,
        now: str | None = None,
    ) -> dict[str, Any]:
        body = {"action": action, "work": work, "epoch": epoch, "until": until, "scope": scope, "now": now}
        return await run(lambda p: service.lease(p, body))

    @server.tool(
        description="The standing agent's state file (Open, Delegates, Armed, Claims, Settled) as "
        "`audience` may see it (default: your widest), under a `cap` in bytes; `text` is "
        "the file."
    )
    async def state(now: str | None = None, audience: str | None = None, cap: int | None = None) -> dict[str, Any]:
        return await run(lambda p: service.state(p, now, audience, cap))

    @server.tool(
        description="The one bounded read after a cold turn: the state file, the open decisions and "
        "the newest log lines, in at most `bound` bytes; `text` is the bundle."
    )
    async def rehydrate(
        now: str | None = None, audience: str | None = None, bound: int | None = None, cap: int | None = None
    ) -> dict[str, Any]:
        return await run(lambda p: service.rehydrate(p, now, audience, bound, cap))

    _refuse_unknown_arguments(server, [check, why, why_not, query, assert_, lease, state, rehydrate])
    return server


def _refuse_unknown_arguments(server: MCPServer, tools: list[Callable[..., Awaitable[Any]]]) -> None:
    """A middleware (the SDK's public hook in front of every message) that
    refuses a `tools/call` with an argument its tool does not take, and says
    so in each tool's JSON Schema in `tools/list`."""
    names = {"assert" if t.__name__ == "assert_" else t.__name__: t for t in tools}
    taken = {name: frozenset(inspect.signature(t).parameters) for name, t in names.items()}

    async def refuse(ctx: Any, call_next: Any) -> Any:
        params = ctx.params if isinstance(ctx.params, dict) else {}
        if ctx.method == "tools/call" and params.get("name") in taken:
            given = params.get("arguments") or {}
            extra = sorted(set(given) - taken[params["name"]]) if isinstance(given, dict) else []
            if extra:
                text = f"error[unknown_argument]: tool `{params['name']}` takes no argument `{extra[0]}`"
                return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
        result = await call_next(ctx)
        if ctx.method == "tools/list" and result is not None:
            listed = result.tools if hasattr(result, "tools") else result.get("tools", [])
            for tool in listed:
                schema = tool.input_schema if hasattr(tool, "input_schema") else tool.get("inputSchema")
                if isinstance(schema, dict) and (getattr(tool, "name", None) or tool.get("name")) in taken:
                    schema["additionalProperties"] = False
        return result

    server.middleware.append(refuse)

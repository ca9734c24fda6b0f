"""`ordinance mcp`: the gate as an MCP server (stdio or streamable HTTP)."""

from __future__ import annotations

import click

from ..diagnostics import OrdinanceError
from .common import db_option, load_policy, open_db, policy_option
from .deadline import served_limits

__all__ = ["command"]


@click.command(
    "mcp",
    short_help="Serve the gate as MCP tools: check, why, why_not, query, assert, state, rehydrate.",
    epilog="""\b
Examples:
  ordinance mcp --principal claude                 stdio, for an MCP client to launch
  ordinance mcp --http --tokens tokens.toml        streamable HTTP at http://127.0.0.1:8378/mcp
""",
)
@click.option("--principal", default=None, metavar="NAME", help="stdio: the (non-owner) principal of every call.")
@click.option(
    "--clock",
    is_flag=True,
    help="stdio: give the principal the clock (its `now` decides; a test rig or a replay). "
    "Without it, a `now` in a call is refused (`clock_not_granted`).",
)
@click.option("--http", "http", is_flag=True, help="Serve streamable HTTP instead of stdio (needs --tokens).")
@click.option(
    "--tokens",
    default=None,
    envvar="ORDINANCE_TOKENS",
    metavar="FILE",
    help="HTTP: the tokens file of principals (see `ordinance serve`).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: address to listen on.")
@click.option("--port", default=8378, show_default=True, type=int, help="HTTP: TCP port.")
@db_option
@policy_option
def command(
    principal: str | None, clock: bool, http: bool, tokens: str | None, host: str, port: int, db: str, policy: str
) -> None:
    """Serve the gate as an MCP server on the official `mcp` SDK, with the
    tools check, why, why_not, query, assert (decided by the policy's
    `may_assert`), state and rehydrate. Needs the `server` extra.
    """
    try:
        from ..serve.mcp import create_mcp
    except ModuleNotFoundError as exc:
        raise OrdinanceError(
            f"`{exc.name}` is missing: pip install 'ordinance[server]'", code="missing_extra"
        ) from None
    from ..serve import Principal, Service, Tokens

    if http and tokens is None:
        raise OrdinanceError("`--http` needs --tokens FILE", code="no_tokens")
    if not http and principal is None:
        raise OrdinanceError("stdio needs --principal NAME", code="no_principal")
    program = load_policy(policy)
    with open_db(db, program, create=True) as store:  # it takes writes, as assert and load do
        service = Service(program, store, limits=served_limits())
        if http:
            url = f"http://{host}:{port}"
            server = create_mcp(service, tokens=Tokens.from_file(str(tokens)), url=url)
            server.run("streamable-http", host=host, port=port)
        else:
            create_mcp(service, Principal(str(principal), clock=clock)).run("stdio")

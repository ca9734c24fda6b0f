"""`ordinance serve`: the long-running gate over HTTP (TCP or a unix socket)."""

from __future__ import annotations

import click

from ..diagnostics import OrdinanceError
from .common import db_option, load_policy, open_db, policy_option

__all__ = ["command"]


@click.command(
    "serve",
    short_help="Serve the gate over HTTP: check, assert, query, why, hooks.",
    epilog="""\b
Examples:
  ordinance serve --tokens tokens.toml                 http://127.0.0.1:8377
  ordinance serve --tokens tokens.toml --uds /tmp/ordinance.sock
  ordinance serve --anonymous claude-code --port 9000  every caller is `claude-code`
""",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8377, show_default=True, type=int, help="TCP port.")
@click.option("--uds", default=None, metavar="PATH", help="Listen on this unix socket instead of TCP.")
@click.option("--tokens", default=None, envvar="ORDINANCE_TOKENS", metavar="FILE",
              help="TOML file of principals and their tokens (see README).")
@click.option("--anonymous", default=None, metavar="PRINCIPAL",
              help="Without --tokens: the (non-owner) principal every caller is.")
@click.option("--project", default=None, metavar="DIR",
              help="The project directory of Claude Code hook calls (default: each call's cwd).")
@click.option("--epoch", default=1, show_default=True, type=int, help="The grant epoch of hook calls.")
@db_option
@policy_option
def command(host: str, port: int, uds: str | None, tokens: str | None, anonymous: str | None,
            project: str | None, epoch: int, db: str, policy: str) -> None:
    """Serve the gate: one warm model that follows the store, answering
    JSON over HTTP (`/check`, `/assert`, `/load`, `/query`, `/why`,
    `/why-not`, `/log`, `/state`, `/health`, `/openapi.json`) and Claude
    Code's `http` hook at `/hooks/claude-code`.

    Callers send `Authorization: Bearer TOKEN`; the token's principal is
    the agent of its requests and what `may_assert` decides writes for.
    Needs the `server` extra: pip install 'ordinance[server]'.
    """
    try:
        import uvicorn

        from ..serve.app import create_app
        from ..serve.follow import follow
    except ModuleNotFoundError as exc:
        raise OrdinanceError(f"`{exc.name}` is missing: pip install 'ordinance[server]'", code="missing_extra") from None
    from ..serve import Principal, Service, Tokens

    if tokens is None and anonymous is None:
        raise OrdinanceError("give --tokens FILE (or --anonymous PRINCIPAL for a private socket)", code="no_tokens")
    program = load_policy(policy)
    store = open_db(db, program, create=True)  # it takes writes, as assert and load do
    service = Service(program, store)
    app = create_app(service, Tokens.from_file(tokens) if tokens else None,
                     anonymous=Principal(anonymous) if anonymous else None, project=project, epoch=epoch)
    stop = follow(service, db)
    where = f"unix:{uds}" if uds else f"http://{host}:{port}"
    click.echo(f"ordinance serve: {where} (policy {program.source_hash[:12]}, revision {store.revision()})", err=True)
    try:
        if uds:
            uvicorn.run(app, uds=uds, log_level="warning", access_log=False)
        else:
            uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
    finally:
        stop()
        store.close()

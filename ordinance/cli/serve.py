"""`ordinance serve`: the long-running gate over HTTP (TCP or a unix socket)."""

from __future__ import annotations

from typing import Any

import click

from ..diagnostics import OrdinanceError
from ..project import DEFAULT_CAP
from .common import db_option, load_policy, open_db, policy_option
from .deadline import served_limits
from .workers import listen, run_workers, worker_socket

__all__ = ["command", "SERVED"]

# uvicorn's options: no access log, and no X-Forwarded-* rewriting of the caller's address (nothing
# here reads it; one middleware layer less per request)
SERVED: dict[str, Any] = {"log_level": "warning", "access_log": False, "proxy_headers": False}


def _free(host: str, port: int) -> None:
    """error[port_in_use] if another process listens on (host, port): one
    line, before anything is opened or printed (uvicorn would print a banner
    and a raw errno)."""
    import errno
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        return  # uvicorn reports an unknown host itself
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise OrdinanceError(
                    f"port {port} on {host} is in use (another `ordinance serve`?): choose another with --port",
                    code="port_in_use",
                ) from None
            raise OrdinanceError(f"cannot listen on {host}:{port}: {exc.strerror}", code="port_in_use") from None


def _banner(where: str, policy_hash: str, revision: int, workers: str = "") -> str:
    return f"ordinance serve: {where} ({workers}policy {policy_hash[:12]}, revision {revision})"


@click.command(
    "serve",
    short_help="Serve the gate over HTTP: check, assert, query, why, hooks.",
    epilog="""\b
Examples:
  ordinance serve --tokens tokens.toml --project .     http://127.0.0.1:8377
  ordinance serve --tokens tokens.toml --uds /tmp/ordinance.sock
  ordinance serve --anonymous claude-code --port 9000  every caller is `claude-code`
  ordinance serve --tokens tokens.toml --state-out prime-state.md --state-audience public
""",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8377, show_default=True, type=int, help="TCP port.")
@click.option("--uds", default=None, metavar="PATH", help="Listen on this unix socket instead of TCP.")
@click.option(
    "--tokens",
    default=None,
    envvar="ORDINANCE_TOKENS",
    metavar="FILE",
    help="TOML file of principals and their tokens (see docs/serve.md).",
)
@click.option(
    "--anonymous",
    default=None,
    metavar="PRINCIPAL",
    help="Without --tokens: the (non-owner) principal every caller is.",
)
@click.option(
    "--project",
    default=None,
    metavar="DIR",
    type=click.Path(file_okay=False, resolve_path=True),  # one real path: as `init` grants it
    help="The project directory of Claude Code hook calls: their scope, and what paths must stay "
    "inside (default: each call's cwd, so a call made from a subdirectory is asked about it).",
)
@click.option("--epoch", default=1, show_default=True, type=int, help="The grant epoch of hook calls.")
@click.option(
    "--state-out",
    default=None,
    metavar="FILE",
    help="Keep the state file (`ordinance state --out FILE`) current: rewritten atomically on "
    "every new event and when the clock crosses a change point of its lines.",
)
@click.option(
    "--state-audience",
    default=None,
    metavar="AUDIENCE",
    help="With --state-out: render it as this audience (default: every layer).",
)
@click.option(
    "--state-cap",
    type=click.IntRange(min=1),
    default=DEFAULT_CAP,
    show_default=True,
    metavar="BYTES",
    help="With --state-out: its hard byte cap.",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="Server processes sharing the socket and the store, each with its own warm model "
    "(the first keeps the state file and the snapshot).",
)
@click.option("--worker", default=None, hidden=True, metavar="INDEX:FD")  # a worker's socket (workers.py)
@db_option
@policy_option
def command(
    host: str,
    port: int,
    uds: str | None,
    tokens: str | None,
    anonymous: str | None,
    project: str | None,
    epoch: int,
    state_out: str | None,
    state_audience: str | None,
    state_cap: int,
    workers: int,
    worker: str | None,
    db: str,
    policy: str,
) -> None:
    """Serve the gate: one warm model that follows the store, answering
    JSON over HTTP (`/check`, `/assert`, `/load`, `/query`, `/why`,
    `/why-not`, `/log`, `/state`, `/health`, `/openapi.json`) and Claude
    Code's `http` hook at `/hooks/claude-code`.

    Callers send `Authorization: Bearer TOKEN`; the token's principal is
    the agent of its requests and what `may_assert` decides writes for.
    With --state-out FILE it keeps the state file current: the same bytes
    as `ordinance state --out FILE` at the revision and `now` it names.
    Needs the `server` extra: pip install 'ordinance[server]'.
    """
    try:
        import uvicorn

        from ..serve.app import create_app
        from ..serve.follow import follow, keep_snapshot
    except ModuleNotFoundError as exc:
        raise OrdinanceError(
            f"`{exc.name}` is missing: pip install 'ordinance[server]'", code="missing_extra"
        ) from None
    from ..serve import Principal, Service, Tokens

    if tokens is None and anonymous is None:
        raise OrdinanceError("give --tokens FILE (or --anonymous PRINCIPAL for a private socket)", code="no_tokens")
    if state_out is None and (state_audience is not None or state_cap != DEFAULT_CAP):
        raise click.UsageError("--state-audience and --state-cap go with --state-out FILE")
    index, sock = worker_socket(worker) if worker else (0, None)
    if not uds and sock is None:
        _free(host, port)
    program = load_policy(policy)
    store = open_db(db, program, create=True)  # it takes writes, as assert and load do
    where = f"unix:{uds}" if uds else f"http://{host}:{port}"
    if workers > 1 and sock is None:  # the parent: the socket, then the workers on it
        if tokens:
            Tokens.from_file(tokens)  # a bad tokens file is one error here, not one per worker
        if state_out is not None:  # a bad audience or cap too (the first worker then keeps the file)
            from ..serve.state_file import StateFile

            check = StateFile(program, open_db(db, program), state_out, audience=state_audience, cap=state_cap)
            try:
                check.start()
            except BaseException:
                store.close()
                raise
            finally:
                check.stop()  # (and its connection)
        banner = _banner(where, program.source_hash, store.revision(), f"{workers} workers, ")
        store.close()
        shared = listen(host, port, uds)
        click.echo(banner, err=True)
        ctx = click.get_current_context()
        code = run_workers(workers, shared, ctx.command, ctx.params)
        if code:
            ctx.exit(code)
        return
    keeper = None
    if state_out is not None:  # its own connection and model: it never waits for the service's lock
        from ..serve.state_file import StateFile

        keeper = StateFile(program, open_db(db, program), state_out, audience=state_audience, cap=state_cap)
        try:
            keeper.start()  # the first write: a bad audience or cap is an error before serving
        except BaseException:
            keeper.stop()
            store.close()
            raise
    service = Service(program, store, limits=served_limits())
    app = create_app(
        service,
        Tokens.from_file(tokens) if tokens else None,
        anonymous=Principal(anonymous) if anonymous else None,
        project=project,
        epoch=epoch,
    )
    stop = follow(service, db)
    stop_snapshots = keep_snapshot(service) if index <= 1 else lambda: None  # the next process starts warm
    if sock is None:
        click.echo(_banner(where, program.source_hash, store.revision()), err=True)
    try:
        if sock is not None:
            uvicorn.Server(uvicorn.Config(app, **SERVED)).run(sockets=[sock])
        elif uds:
            uvicorn.run(app, uds=uds, **SERVED)
        else:
            uvicorn.run(app, host=host, port=port, **SERVED)
    finally:
        stop()
        stop_snapshots()
        if keeper is not None:
            keeper.stop()
        store.close()

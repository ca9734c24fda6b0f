"""The HTTP API on Starlette: JSON in, JSON out, errors as `error[CODE]` data.

    app = create_app(Service(policy, store), tokens=Tokens.from_file("tokens.toml"))
    uvicorn.run(app, uds="/run/ordinance.sock")

Endpoints are in openapi.py's table. A bad request gets a 4xx whose body is
`{"error": {"code", "message", "span"}}`, never a traceback; the store
writes a batch whole or not at all. A host's hook endpoint,
`/hooks/HOST` (`claude-code`, `pre-push`, any module of ordinance.hosts),
always answers 200 with the host's answer (Claude Code ignores other
statuses), so its failures are the host's fail-closed answer.

No request stalls another: the caller is authenticated before its body is
read, the body is read as a stream and refused (413 `too_large`) as soon as
it passes MAX_BODY (or declares more), JSON is read by `parse_json` (bounded
nesting and integers), and every handler runs in a worker thread (the
gate's limits, with its deadline, bound each evaluation), so the event loop
only moves bytes. `/health` answers on the loop: the store's revision is
read in a thread of its own (a PostgreSQL round trip, a SQLite file another
process holds) for at most HEALTH_WAIT_S, and while that read is out, or
the service's lock is held, it answers the revision last read.

The hot routes, `POST /check` and `POST /hooks/HOST`, are called straight
from the ASGI call (`served`), without Starlette's routing, middleware or
Request; they answer as their Starlette routes would, and every other path
or method goes through Starlette (benchmarks/bench_serve_ab.py).
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version
from typing import Any, Awaitable, Callable

from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect
from starlette.requests import Request as HttpRequest
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ..diagnostics import CheckError, GateError, OrdinanceError, ParseError, StaleEpochError, StoreError
from ..explain import decision_json
from ..facts import decode_text, parse_json
from ..hosts import event_of
from ..hosts import host as host_module
from ..hosts.flow import handle as handle_hook
from .identity import AuthError, Principal, Tokens
from .openapi import ROUTES, document
from .service import BadRequest, Forbidden, Service, error_data

__all__ = ["create_app", "MAX_BODY", "WORKERS", "HEALTH_WAIT_S"]

MAX_BODY = 16 * 1024 * 1024
WORKERS = 8  # threads that run handlers; /health needs none of them
HEALTH_WAIT_S = 0.05  # how long /health waits for the store's revision before answering the last one read
HOOK_PEEK = 64 * 1024  # what is read of an unauthenticated hook call: its event name, to fail in its shape


class TooLarge(BadRequest):
    """A body over MAX_BODY, refused before it is read whole (413)."""

    default_code = "too_large"


def _status(exc: BaseException) -> int:
    if isinstance(exc, TooLarge):
        return 413
    if isinstance(exc, AuthError):
        return 401
    if isinstance(exc, Forbidden):
        return 403
    if isinstance(exc, StaleEpochError):
        return 409
    if isinstance(exc, (BadRequest, GateError, ParseError, CheckError, StoreError)):
        return 400
    if isinstance(exc, OrdinanceError):
        return 400
    return 500


def _json(data: Any, status: int = 200, background: BackgroundTask | None = None) -> Response:
    return Response(json.dumps(data, ensure_ascii=False), status, media_type="application/json", background=background)


async def _send_json(send: Send, data: Any, status: int = 200) -> None:
    """What `_json` answers, sent without a Response object (the hot routes)."""
    body = json.dumps(data, ensure_ascii=False).encode("utf-8")
    head = [(b"content-length", str(len(body)).encode("latin-1")), (b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})


def _header(scope: Scope, name: bytes) -> str | None:
    """The first value of header `name` (lowercase, as ASGI gives names), as Starlette's `headers.get`."""
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")  # type: ignore[no-any-return]
    return None


async def read_body(scope: Scope, receive: Receive, cap: int = MAX_BODY) -> bytes:
    """The body, read as a stream and refused as soon as it is known to be over `cap`."""
    declared = _header(scope, b"content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > cap):
        raise TooLarge(f"the body is larger than {cap} bytes" if declared.isdigit() else "bad `Content-Length`")
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > cap:
            raise TooLarge(f"the body is larger than {cap} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _parsed(raw: bytes) -> Any:
    return parse_json(raw, "the body") if raw else {}


class Batcher:
    """Group commit for /check: the bodies that arrive while the log is
    being written are read, decided and logged together in the next append
    (`Gate.log`), then rendered, in one worker thread hop per batch, so the
    event loop keeps taking requests. Each caller gets its own decision once
    it is durable, or its own error: a malformed body or a failed decision is
    never its neighbours'."""

    def __init__(self, service: Service, pool: ThreadPoolExecutor) -> None:
        self.service = service
        self.pool = pool
        self.pending: list[tuple[Principal, bytes, asyncio.Future[Any]]] = []
        self.running = False

    async def check(self, who: Principal, raw: bytes) -> Any:
        """The decision's JSON for `who`'s /check body `raw`."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self.pending.append((who, raw, future))
        if not self.running:
            self.running = True
            loop.create_task(self._drain())
        return await future

    def _batch(self, batch: list[tuple[Principal, bytes, Any]]) -> list[tuple[bool, Any]]:
        """(ok, decision JSON or exception) per body, in a worker thread."""
        out: list[tuple[bool, Any]] = [(False, None)] * len(batch)
        asked: list[tuple[int, Any, bool]] = []  # (index, (request, now, clock), proofs)
        for n, (who, raw, _) in enumerate(batch):
            try:
                request, now, clock, proofs = self.service.ask(who, _parsed(raw))
                asked.append((n, (request, now, clock), proofs))
            except Exception as exc:
                out[n] = (False, exc)
        decided: list[tuple[int, Any, bool]] = []
        try:
            decisions = self.service.check_many([a for _, a, _ in asked]) if asked else []
            decided = [(n, d, proofs) for (n, _, proofs), d in zip(asked, decisions)]
        except Exception as exc:
            if len(asked) == 1:
                out[asked[0][0]] = (False, exc)
            else:  # each is decided and logged alone
                for n, ask, proofs in asked:
                    try:
                        decided.append((n, self.service.check_many([ask])[0], proofs))
                    except Exception as alone:
                        out[n] = (False, alone)
        for n, decision, proofs in decided:
            try:
                out[n] = (True, decision_json(decision, program=self.service.policy, proofs=proofs))
            except Exception as exc:
                out[n] = (False, exc)
        return out

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self.pending:
                batch, self.pending = self.pending, []
                try:
                    results = await loop.run_in_executor(self.pool, self._batch, batch)
                except Exception as exc:  # (the pool is shut down)
                    results = [(False, exc)] * len(batch)
                for (*_, future), (ok, value) in zip(batch, results):
                    if future.done():  # (its caller went away)
                        continue
                    if ok:
                        future.set_result(value)
                    else:
                        future.set_exception(value)
        finally:
            self.running = False


def create_app(
    service: Service,
    tokens: Tokens | None = None,
    *,
    anonymous: Principal | None = None,
    project: str | None = None,
    epoch: int = 1,
) -> ASGIApp:
    """The ASGI app. Callers authenticate with `tokens`; without tokens,
    every caller is `anonymous` (which must then be given)."""
    if tokens is None and anonymous is None:
        raise OrdinanceError("give a tokens file, or name the anonymous principal", code="no_tokens")

    def principal(scope: Scope) -> Principal:
        if tokens is None:
            assert anonymous is not None
            return anonymous
        return tokens.principal(_header(scope, b"authorization"))

    pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="ordinance-serve")
    health_pool = ThreadPoolExecutor(1, thread_name_prefix="ordinance-health")  # (never queued behind handlers)
    reading: list[asyncio.Future[Any]] = []  # the revision read under way, if any

    async def off_loop(fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(pool, lambda: fn(*args))

    # a handler: (principal, the raw body, the query parameters) -> JSON-ready data, run in a worker thread
    Handler = Callable[[Any, bytes, Any], Any]

    def endpoint(handler: Handler, authenticated: bool) -> Callable[[HttpRequest], Awaitable[Response]]:
        async def run(req: HttpRequest) -> Response:
            try:
                who = principal(req.scope) if authenticated else None  # before a byte of the body is read
                raw = await read_body(req.scope, req.receive) if req.method == "POST" else b""
                # after a write, with the answer sent, the model takes it in before the next decision
                after = BackgroundTask(service.warm) if handler in (assert_, load, lease) else None
                return _json(await off_loop(handler, who, raw, req.query_params), background=after)
            except Exception as exc:  # every error is data, never a traceback
                return _json(error_data(exc), _status(exc))

        return run

    def health(who: Any, raw: bytes, q: Any) -> Any:  # (run on the loop: it never waits)
        return service.health(read=False)

    def openapi(who: Any, raw: bytes, q: Any) -> Any:
        return document(version("ordinance"))

    batcher = Batcher(service, pool)

    async def check(scope: Scope, receive: Receive, send: Send) -> None:  # (a hot route: no Starlette)
        try:
            who = principal(scope)  # before a byte of the body is read
            answer = await batcher.check(who, await read_body(scope, receive))
        except Exception as exc:  # every error is data, never a traceback
            return await _send_json(send, error_data(exc), _status(exc))
        await _send_json(send, answer)

    def assert_(who: Principal, raw: bytes, q: Any) -> Any:
        data = _parsed(raw)
        if not isinstance(data, dict):
            raise BadRequest("the body must be a JSON object")
        source = data.get("source", "serve")
        if not isinstance(source, str) or not source:
            raise BadRequest("`source` is a non-empty string naming where the facts come from")
        return service.write(who, service.facts_of(data), source, layer=data.get("layer"))

    def load(who: Principal, raw: bytes, q: Any) -> Any:
        return service.load(who, decode_text(raw, "body"))  # invalid UTF-8: error[encoding], as `ordinance load`

    def lease(who: Principal, raw: bytes, q: Any) -> Any:
        return service.lease(who, _parsed(raw))

    def query(who: Principal, raw: bytes, q: Any) -> Any:
        return service.query(who, _parsed(raw))

    def why(who: Principal, raw: bytes, q: Any) -> Any:
        return service.why(who, _parsed(raw))

    def why_not(who: Principal, raw: bytes, q: Any) -> Any:
        return service.why_not(who, _parsed(raw))

    def log(who: Principal, raw: bytes, q: Any) -> Any:
        try:
            since, limit = int(q.get("since", 0)), int(q.get("limit", 100))
        except ValueError:
            raise BadRequest("`since` and `limit` are integers") from None
        kinds = q.getlist("kind") or None
        return service.log(who, since, limit, kinds, q.get("audience"))

    def state(who: Principal, raw: bytes, q: Any) -> Any:
        return service.state(who, q.get("now"), q.get("audience"), q.get("cap"))

    def rehydrate(who: Principal, raw: bytes, q: Any) -> Any:
        return service.rehydrate(who, q.get("now"), q.get("audience"), q.get("bound"), q.get("cap"))

    warming: list[bool] = []  # a warm queued and not yet started

    def warm() -> None:
        warming.clear()
        service.warm()

    async def hook(scope: Scope, receive: Receive, send: Send) -> None:  # (a hot route: no Starlette)
        name = scope["path"].removeprefix("/hooks/")
        try:
            host = host_module(name) if "/" not in name else None
        except KeyError:
            host = None
        if host is None:
            return await _send_json(send, _not_found(scope["path"]), 404)
        try:  # unauthenticated or too large: refused (the host's fail-closed answer, with 200)
            who = principal(scope)
            raw = await read_body(scope, receive)
        except Exception as exc:
            err = error_data(exc)["error"]
            peek: Any = None
            if isinstance(exc, AuthError):  # which event failed, from at most HOOK_PEEK bytes of its body
                try:
                    peek = parse_json(await read_body(scope, receive, HOOK_PEEK))
                except Exception:
                    pass
            failed = host.failure(event_of(host, peek), f"ordinance: error[{err['code']}]: {err['message']}")
            return await _send_json(send, failed)

        def handle() -> Any:
            data: Any = None
            try:
                data = _parsed(raw)
            except Exception as exc:  # unreadable: fail
                err = error_data(exc)["error"]
                return host.failure(None, f"ordinance: error[{err['code']}]: {err['message']}")
            return handle_hook(host, service, who, data, project=project, epoch=epoch)

        try:
            answer = await off_loop(handle)
        except Exception as exc:  # (the pool is shut down)
            return await _send_json(send, error_data(exc), _status(exc))
        await _send_json(send, answer)
        # then, with the answer sent, the model takes in the receipt before the next call (one warm
        # queued at a time: the connection is not held for it, and calls that came together share it)
        if not warming:
            warming.append(True)
            asyncio.get_running_loop().run_in_executor(pool, warm)

    def read_revision() -> None:
        try:
            service.read_revision()
        except Exception:  # (the store failed: /health answers the revision last read)
            pass

    async def health_endpoint(req: HttpRequest) -> Response:
        if not reading or reading[0].done():  # one read at a time: a stuck one is not joined by more
            reading[:] = [asyncio.get_running_loop().run_in_executor(health_pool, read_revision)]
        try:
            await asyncio.wait_for(asyncio.shield(reading[0]), HEALTH_WAIT_S)
        except asyncio.TimeoutError:  # slow: the revision last read
            pass
        return _json(health(None, b"", None))

    handlers: dict[str, Any] = {
        "/health": health,
        "/openapi.json": openapi,
        "/check": check,
        "/assert": assert_,
        "/load": load,
        "/lease": lease,
        "/query": query,
        "/why": why,
        "/why-not": why_not,
        "/log": log,
        "/state": state,
        "/rehydrate": rehydrate,
    }

    def route(path: str, auth: bool) -> Any:
        if path == "/health":
            return health_endpoint
        return _Asgi(check) if path == "/check" else endpoint(handlers[path], auth)

    routes = [
        Route(path, route(path, auth), methods=[method.upper()])
        for method, path, _s, _b, auth in ROUTES
        if path in handlers
    ]
    routes.append(Route("/hooks/{host}", _Asgi(hook), methods=["POST"]))  # (for a 405: POSTs take the hot route)

    async def http_error(req: HttpRequest, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        code = {404: "not_found", 405: "method_not_allowed"}.get(status, "http")
        if status == 404:
            return _json(_not_found(req.url.path), 404)
        message = {405: f"`{req.method}` is not allowed on `{req.url.path}`"}
        return _json({"error": {"code": code, "message": message.get(status, "http error"), "span": None}}, status)

    async def server_error(req: HttpRequest, exc: Exception) -> Response:
        return _json({"error": {"code": "internal", "message": type(exc).__name__, "span": None}}, 500)

    app = Starlette(routes=routes, exception_handlers={HTTPException: http_error, Exception: server_error})

    async def served(scope: Scope, receive: Receive, send: Send) -> None:
        """The hot routes, POST /check and /hooks/HOST, straight to their
        handlers (no routing table, middleware or Request); all else through
        Starlette. Each answers as its Starlette route would."""
        if scope["type"] == "http" and scope["method"] == "POST":
            path = scope["path"]
            if path == "/check":
                return await check(scope, receive, send)
            if path.startswith("/hooks/"):
                return await hook(scope, receive, send)
        await app(scope, receive, send)

    return served


class _Asgi:
    """A hot route as a Starlette Route's endpoint (a plain function would be taken for a request handler)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


def _not_found(path: str) -> dict[str, Any]:
    return {"error": {"code": "not_found", "message": f"no endpoint `{path}`", "span": None}}

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
from starlette.requests import Request as HttpRequest
from starlette.responses import Response
from starlette.routing import Route

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


async def read_body(req: HttpRequest, cap: int = MAX_BODY) -> bytes:
    """The body, read as a stream and refused as soon as it is known to be over `cap`."""
    declared = req.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > cap):
        raise TooLarge(f"the body is larger than {cap} bytes" if declared.isdigit() else "bad `Content-Length`")
    chunks, size = [], 0
    async for chunk in req.stream():
        size += len(chunk)
        if size > cap:
            raise TooLarge(f"the body is larger than {cap} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _parsed(raw: bytes) -> Any:
    return parse_json(raw, "the body") if raw else {}


class Batcher:
    """Group commit for /check: decisions that arrive while the log is
    being written are decided and logged together in the next append
    (`Gate.log`), in a worker thread so the event loop keeps taking
    requests. Each caller gets its own decision once it is durable."""

    def __init__(self, service: Service, pool: ThreadPoolExecutor) -> None:
        self.service = service
        self.pool = pool
        self.pending: list[tuple[Any, int, str, asyncio.Future[Any]]] = []
        self.running = False

    async def check(self, request: Any, now: int, clock: str) -> Any:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending.append((request, now, clock, future))
        if not self.running:
            self.running = True
            asyncio.get_running_loop().create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self.pending:
                batch, self.pending = self.pending, []
                try:
                    asks = [(r, n, c) for r, n, c, _ in batch]
                    decisions = await loop.run_in_executor(self.pool, self.service.check_many, asks)
                except Exception as exc:
                    if len(batch) == 1:
                        batch[0][3].set_exception(exc)
                        continue
                    # one request's failure is never its neighbours': each is decided and logged alone
                    for request, now, clock, future in batch:
                        try:
                            one = await loop.run_in_executor(
                                self.pool, self.service.check_many, [(request, now, clock)]
                            )
                            future.set_result(one[0])
                        except Exception as alone:
                            future.set_exception(alone)
                    continue
                for (*_, future), decision in zip(batch, decisions):
                    future.set_result(decision)
        finally:
            self.running = False


def create_app(
    service: Service,
    tokens: Tokens | None = None,
    *,
    anonymous: Principal | None = None,
    project: str | None = None,
    epoch: int = 1,
) -> Starlette:
    """The ASGI app. Callers authenticate with `tokens`; without tokens,
    every caller is `anonymous` (which must then be given)."""
    if tokens is None and anonymous is None:
        raise OrdinanceError("give a tokens file, or name the anonymous principal", code="no_tokens")

    def principal(req: HttpRequest) -> Principal:
        if tokens is None:
            assert anonymous is not None
            return anonymous
        return tokens.principal(req.headers.get("authorization"))

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
                who = principal(req) if authenticated else None  # before a byte of the body is read
                raw = await read_body(req) if req.method == "POST" else b""
                if handler is check:  # (authenticated: `who` is a principal)
                    assert who is not None
                    return _json(await check_async(who, raw))
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

    def check(who: Principal, raw: bytes, q: Any) -> Any:
        return service.ask(who, _parsed(raw))

    async def check_async(who: Principal, raw: bytes) -> Any:
        request, now, clock, proofs = await off_loop(check, who, raw, None)
        decision = await batcher.check(request, now, clock)
        return await off_loop(lambda: decision_json(decision, program=service.policy, proofs=proofs))

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

    async def hook(req: HttpRequest) -> Response:
        try:
            host = host_module(req.path_params["host"])
        except KeyError:
            raise HTTPException(404) from None
        try:  # unauthenticated or too large: refused (the host's fail-closed answer, with 200)
            who = principal(req)
            raw = await read_body(req)
        except Exception as exc:
            err = error_data(exc)["error"]
            peek: Any = None
            if isinstance(exc, AuthError):  # which event failed, from at most HOOK_PEEK bytes of its body
                try:
                    peek = parse_json(await read_body(req, HOOK_PEEK))
                except Exception:
                    pass
            return _json(host.failure(event_of(host, peek), f"ordinance: error[{err['code']}]: {err['message']}"))

        def handle() -> Any:
            data: Any = None
            try:
                data = _parsed(raw)
            except Exception as exc:  # unreadable: fail
                err = error_data(exc)["error"]
                return host.failure(None, f"ordinance: error[{err['code']}]: {err['message']}")
            return handle_hook(host, service, who, data, project=project, epoch=epoch)

        # then, with the answer sent, the model takes in the receipt before the next call
        return _json(await off_loop(handle), background=BackgroundTask(service.warm))

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
    routes = [
        Route(path, health_endpoint if path == "/health" else endpoint(handlers[path], auth), methods=[method.upper()])
        for method, path, _s, _b, auth in ROUTES
        if path in handlers
    ]
    routes.append(Route("/hooks/{host}", hook, methods=["POST"]))

    async def http_error(req: HttpRequest, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        code = {404: "not_found", 405: "method_not_allowed"}.get(status, "http")
        message = {404: f"no endpoint `{req.url.path}`", 405: f"`{req.method}` is not allowed on `{req.url.path}`"}
        return _json({"error": {"code": code, "message": message.get(status, "http error"), "span": None}}, status)

    async def server_error(req: HttpRequest, exc: Exception) -> Response:
        return _json({"error": {"code": "internal", "message": type(exc).__name__, "span": None}}, 500)

    return Starlette(routes=routes, exception_handlers={HTTPException: http_error, Exception: server_error})

"""The HTTP API on Starlette: JSON in, JSON out, errors as `error[CODE]` data.

    app = create_app(Service(policy, store), tokens=Tokens.from_file("tokens.toml"))
    uvicorn.run(app, uds="/run/ordinance.sock")

Endpoints are in openapi.py's table. A bad request gets a 4xx whose body is
`{"error": {"code", "message", "span"}}`, never a traceback; the store
writes a batch whole or not at all. A host's hook endpoint,
`/hooks/HOST` (`claude-code`, `pre-push`, any module of ordinance.hosts),
always answers 200 with the host's answer (Claude Code ignores other
statuses), so its failures are the host's fail-closed answer.
"""

from __future__ import annotations

import asyncio
import json
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
from ..facts import decode_text
from ..hosts import event_of
from ..hosts import host as host_module
from ..hosts.flow import handle as handle_hook
from .identity import AuthError, Principal, Tokens
from .openapi import ROUTES, document
from .service import BadRequest, Forbidden, Service, error_data

__all__ = ["create_app", "MAX_BODY"]

MAX_BODY = 16 * 1024 * 1024


def _status(exc: BaseException) -> int:
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


class Batcher:
    """Group commit for /check: decisions that arrive while the log is
    being written are decided and logged together in the next append
    (`Gate.log`), in a worker thread so the event loop keeps taking
    requests. Each caller gets its own decision once it is durable."""

    def __init__(self, service: Service) -> None:
        self.service = service
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
        try:
            while self.pending:
                batch, self.pending = self.pending, []
                try:
                    decisions = await asyncio.to_thread(self.service.check_many, [(r, n, c) for r, n, c, _ in batch])
                except Exception as exc:  # the whole batch failed (e.g. the store): every caller hears it
                    for *_, future in batch:
                        future.set_exception(exc)
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

    async def body(req: HttpRequest) -> Any:
        raw = await req.body()
        if len(raw) > MAX_BODY:
            raise BadRequest("the body is too large", code="too_large")
        if not raw:
            return {}
        try:
            return json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise BadRequest(f"the body is not JSON: {getattr(exc, 'msg', 'bad encoding')}", code="bad_json") from None

    Handler = Callable[[HttpRequest], Awaitable[Any]]

    def endpoint(handler: Handler) -> Callable[[HttpRequest], Awaitable[Response]]:
        async def run(req: HttpRequest) -> Response:
            try:
                # after a write, with the answer sent, the model takes it in before the next decision
                after = BackgroundTask(service.warm) if handler in (assert_, load, lease) else None
                return _json(await handler(req), background=after)
            except Exception as exc:  # every error is data, never a traceback
                return _json(error_data(exc), _status(exc))

        return run

    async def health(req: HttpRequest) -> Any:
        return service.health()

    async def openapi(req: HttpRequest) -> Any:
        return document(version("ordinance"))

    batcher = Batcher(service)

    async def check(req: HttpRequest) -> Any:
        request, now, clock, proofs = service.ask(principal(req), await body(req))
        decision = await batcher.check(request, now, clock)
        return decision_json(decision, program=service.policy, proofs=proofs)

    async def assert_(req: HttpRequest) -> Any:
        who = principal(req)
        data = await body(req)
        if not isinstance(data, dict):
            raise BadRequest("the body must be a JSON object")
        source = data.get("source", "serve")
        if not isinstance(source, str) or not source:
            raise BadRequest("`source` is a non-empty string naming where the facts come from")
        return service.write(who, service.facts_of(data), source, layer=data.get("layer"))

    async def load(req: HttpRequest) -> Any:
        who = principal(req)
        raw = await req.body()
        if len(raw) > MAX_BODY:
            raise BadRequest("the body is too large", code="too_large")
        return service.load(who, decode_text(raw, "body"))  # invalid UTF-8: error[encoding], as `ordinance load`

    async def lease(req: HttpRequest) -> Any:
        who = principal(req)
        return await asyncio.to_thread(service.lease, who, await body(req))

    async def query(req: HttpRequest) -> Any:
        return service.query(principal(req), await body(req))

    async def why(req: HttpRequest) -> Any:
        return service.why(principal(req), await body(req))

    async def why_not(req: HttpRequest) -> Any:
        return service.why_not(principal(req), await body(req))

    async def log(req: HttpRequest) -> Any:
        who = principal(req)
        q = req.query_params
        try:
            since, limit = int(q.get("since", 0)), int(q.get("limit", 100))
        except ValueError:
            raise BadRequest("`since` and `limit` are integers") from None
        kinds = q.getlist("kind") or None
        return service.log(who, since, limit, kinds, q.get("audience"))

    async def state(req: HttpRequest) -> Any:
        who, q = principal(req), req.query_params
        return service.state(who, q.get("now"), q.get("audience"), q.get("cap"))

    async def rehydrate(req: HttpRequest) -> Any:
        who, q = principal(req), req.query_params
        return service.rehydrate(who, q.get("now"), q.get("audience"), q.get("bound"), q.get("cap"))

    async def hook(req: HttpRequest) -> Response:
        try:
            host = host_module(req.path_params["host"])
        except KeyError:
            raise HTTPException(404) from None
        data: Any = None
        try:
            data = await body(req)
            who = principal(req)
        except Exception as exc:  # unreadable or unauthenticated: fail, with a 200 the host reads
            err = error_data(exc)["error"]
            return _json(host.failure(event_of(host, data), f"ordinance: error[{err['code']}]: {err['message']}"))
        # in a worker thread, so the event loop keeps taking requests; then, with
        # the answer sent, the model takes in the receipt before the next call
        reply = await asyncio.to_thread(handle_hook, host, service, who, data, project=project, epoch=epoch)
        return _json(reply, background=BackgroundTask(service.warm))

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
        Route(path, endpoint(handlers[path]), methods=[method.upper()])
        for method, path, _s, _b, _a in ROUTES
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

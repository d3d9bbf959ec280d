"""Error responses as Connect's ``ConnectExceptionMapper`` writes them: ``{"error_code","message"}``."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from connect.api.errors import AlreadyExistsError, ConnectError, NotFoundError
from connect.distributed.cluster import RequestTargetError
from connect.runtime.rest_errors import ConnectRestError
from rest.forward import forward

log = logging.getLogger(__name__)

_REASONS = {404: "Not Found", 405: "Method Not Allowed", 415: "Unsupported Media Type", 400: "Bad Request"}


def error_response(status: int, message: str) -> JSONResponse:
    """The error body with ``error_code`` equal to the HTTP status."""
    return JSONResponse({"error_code": status, "message": message}, status_code=status)


async def _connect_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, RequestTargetError):
        try:
            return await forward(request, exc)
        except ConnectRestError as failed:  # cannot be forwarded: Connect's 409, or its 500 on an IO error
            return error_response(failed.status, failed.message)
    if isinstance(exc, ConnectRestError):
        return error_response(exc.status, exc.message)
    if isinstance(exc, NotFoundError):
        return error_response(404, str(exc))
    if isinstance(exc, AlreadyExistsError):
        return error_response(409, str(exc))
    log.error("Uncaught exception in REST call", exc_info=exc)
    return error_response(500, str(exc))


async def _http_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    if isinstance(exc.detail, str) and exc.detail and exc.detail != _REASONS.get(exc.status_code):
        return error_response(exc.status_code, exc.detail)
    return error_response(exc.status_code, f"HTTP {exc.status_code} {_REASONS.get(exc.status_code, '')}".strip())


async def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
        problems.append(f"{where}: {err.get('msg')}" if where else str(err.get("msg")))
    return error_response(400, "Invalid request body: " + "; ".join(problems))


class CatchAll:
    """ASGI middleware: any other exception becomes Connect's 500 body, and the connection stays usable
    (Starlette's own last-resort handler re-raises after answering, which drops keep-alive connections)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as exc:
            log.error("Uncaught exception in REST call to %s", scope.get("path"), exc_info=exc)
            if not started:
                await error_response(500, str(exc) or type(exc).__name__)(scope, receive, send)


def install(app: FastAPI) -> None:
    """Register the handlers on ``app``."""
    app.add_exception_handler(ConnectError, _connect_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_middleware(CatchAll)

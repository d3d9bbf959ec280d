"""Error responses as Connect's ``ConnectExceptionMapper`` writes them: ``{"error_code","message"}``."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from connect.api.errors import AlreadyExistsError, ConnectError, NotFoundError
from connect.errors import ConnectRestError

log = logging.getLogger(__name__)

_REASONS = {404: "Not Found", 405: "Method Not Allowed", 415: "Unsupported Media Type", 400: "Bad Request"}


def error_response(status: int, message: str) -> JSONResponse:
    """The error body with ``error_code`` equal to the HTTP status."""
    return JSONResponse({"error_code": status, "message": message}, status_code=status)


async def _connect_error(_request: Request, exc: Exception) -> JSONResponse:
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


async def _unexpected(_request: Request, exc: Exception) -> JSONResponse:
    log.error("Uncaught exception in REST call", exc_info=exc)
    return error_response(500, str(exc) or type(exc).__name__)


def install(app: FastAPI) -> None:
    """Register the handlers on ``app``."""
    app.add_exception_handler(ConnectError, _connect_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(Exception, _unexpected)

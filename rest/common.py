"""What every router shares: awaiting herder futures, the herder of a request, JSON bodies, route helpers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar
from urllib.parse import unquote

import orjson
from fastapi import APIRouter, Request
from starlette.convertors import Convertor, register_url_convertor

from connect.runtime.herder import Herder
from connect.runtime.rest_errors import BadRequestError, ConnectRestError

T = TypeVar("T")
SLASH = "\x00"  # stands for an encoded "/" (%2F) inside a name while routing; names never hold NUL
# stands for a newline ending the path while routing: Starlette's "$" also matches before a final "\n", so
# "/connectors/%0A" (a connector named "\n") would otherwise be the connector list
NEWLINE = "\x01"


class NameConvertor(Convertor[str]):
    """Path segment holding a name (connector, logger): what :func:`routing_path` set apart is put back."""

    regex = "[^/]+"

    def convert(self, value: str) -> str:
        return value.replace(SLASH, "/").replace(NEWLINE, "\n")

    def to_string(self, value: str) -> str:
        return value.replace("/", SLASH)


register_url_convertor("name", NameConvertor())


def routing_path(raw_path: bytes | None, path: str) -> str:
    """The path to route on: like ``path``, but a ``%2F`` in a segment stays inside that segment, and a final
    newline cannot make a route without it match."""
    if raw_path and b"%2f" in raw_path.lower():
        segments = raw_path.decode("latin-1").split("/")
        path = "/".join(unquote(segment).replace("/", SLASH) for segment in segments)
    if path.endswith("\n"):
        path = path[:-1] + NEWLINE
    return path


REQUEST_TIMEOUT_S = 90.0


async def await_future(future: Future[T]) -> T:
    """Wait for a herder future (90 s, as Connect), mapping a timeout to Connect's 500."""
    try:
        return await asyncio.wait_for(asyncio.wrap_future(future), REQUEST_TIMEOUT_S)
    except TimeoutError as exc:
        raise ConnectRestError(500, "Request timed out") from exc


def herder_of(request: Request) -> Herder:
    """The herder the app serves."""
    herder: Herder = request.app.state.herder
    return herder


async def json_body(request: Request) -> Any:
    """The parsed JSON body; a malformed or empty body is a 400 naming the problem."""
    raw = await request.body()
    if not raw.strip():
        raise BadRequestError("Request body is empty; a JSON object is expected")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BadRequestError(f"Cannot parse the request body as JSON: {exc}") from exc


def route(router: APIRouter, method: str, path: str, **kwargs: Any) -> Callable[[Any], Any]:
    """Register ``path`` with and without a trailing slash (Jersey accepts both; no redirects)."""
    def decorate(fn: Any) -> Any:
        router.add_api_route(path or "/", fn, methods=[method], **kwargs)
        if path:
            extra = {**kwargs, "include_in_schema": False}
            router.add_api_route(path + "/", fn, methods=[method], **extra)
        return fn
    return decorate

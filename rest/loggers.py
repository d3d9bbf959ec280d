"""``/admin/loggers``: read and change log levels at runtime (Connect's ``LoggingResource``, KIP-495 / KIP-976).

The levels live in :mod:`connect.runtime.loggers`. Two optional attributes of ``app.state`` plug the router in:

- ``loggers``: the :class:`~connect.runtime.loggers.Loggers` to use (default: the process-wide one);
- ``publish_cluster_level``: a callable ``(namespace, level)`` that spreads a ``?scope=cluster`` change to every
  worker (in Connect, the ``logger-cluster-<namespace>`` config-topic record, which each worker, this one
  included, applies when it reads it back). It may return an awaitable or a ``concurrent.futures.Future``,
  which is awaited. Without it the change is applied here only: a single worker is the whole cluster.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import orjson
from fastapi import APIRouter, Request, Response

from connect.api.errors import NotFoundError
from connect.runtime.loggers import Loggers, default_loggers, parse_level
from connect.runtime.rest_errors import BadRequestError
from rest import openapi as oa
from rest.common import await_future, json_body, route

log = logging.getLogger(__name__)

router = APIRouter()

WORKER_SCOPE = "worker"
CLUSTER_SCOPE = "cluster"


def loggers_of(request: Request) -> Loggers:
    """The :class:`Loggers` the app serves."""
    loggers: Loggers | None = getattr(request.app.state, "loggers", None)
    return loggers if loggers is not None else default_loggers()


@route(router, "GET", "/admin/loggers",
       responses=oa.responses({200: {"type": "object", "additionalProperties": oa.LOGGER_LEVEL}}))
async def list_loggers(request: Request) -> dict[str, Any]:
    return {name: level.to_json() for name, level in loggers_of(request).all_levels().items()}


@route(router, "GET", "/admin/loggers/{logger:name}",
       responses=oa.responses({200: oa.LOGGER_LEVEL}, 404))
async def get_logger(logger: str, request: Request) -> dict[str, Any]:
    level = loggers_of(request).level(logger)
    if level is None:
        log.warning("Unable to find level for logger %s", logger)
        raise NotFoundError(f"Logger {logger} not found.")
    return level.to_json()


@route(router, "PUT", "/admin/loggers/{logger:name}",
       responses=oa.responses({200: {"type": "array", "items": {"type": "string"}}, 204: None}, 400, 404),
       openapi_extra=oa.LEVEL_BODY)
async def set_level(logger: str, request: Request, scope: str = WORKER_SCOPE) -> Any:
    body = await json_body(request)
    if not isinstance(body, dict):
        raise BadRequestError("Invalid request body: a JSON object with a 'level' field is expected")
    level = _as_text(body.get("level"))
    if level is None:
        raise BadRequestError("Desired 'level' parameter was not specified in request.")
    if parse_level(level) is None:
        raise NotFoundError(f"invalid log level '{level}'.")
    if scope.lower() == CLUSTER_SCOPE:
        publish: Callable[[str, str], object] | None = getattr(request.app.state, "publish_cluster_level", None)
        if publish is None:
            loggers_of(request).set_level(logger, level)
        else:
            await _settle(publish(logger, level.upper()))
        return Response(status_code=204)
    if scope.lower() != WORKER_SCOPE:
        log.warning("Received invalid scope '%s' in request to adjust logging level; will default to %s",
                    scope, WORKER_SCOPE)
    return loggers_of(request).set_level(logger, level)


def _as_text(value: Any) -> str | None:
    """A JSON value as Jackson reads it into a ``Map<String, String>``: scalars become their text."""
    if value is None or isinstance(value, str):
        return value
    return orjson.dumps(value).decode()


async def _settle(result: object) -> None:
    if isinstance(result, Future):
        await await_future(result)
    elif inspect.isawaitable(result):
        await result

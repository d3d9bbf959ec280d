"""The FastAPI application serving Kafka Connect's REST API over a :class:`~connect.herder.Herder`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar
from urllib.parse import quote

import orjson
from fastapi import APIRouter, FastAPI, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from connect import plugins
from connect.api.errors import NotFoundError
from connect.config import string_values
from connect.errors import BadRequestError, ConnectRestError
from connect.herder import Herder
from connect.storage.config_state import TargetState
from rest import errors, models

T = TypeVar("T")
REQUEST_TIMEOUT_S = 90.0
COMMIT = "26b251a451ce941d"


async def _await(future: Future[T]) -> T:
    try:
        return await asyncio.wait_for(asyncio.wrap_future(future), REQUEST_TIMEOUT_S)
    except TimeoutError as exc:
        raise ConnectRestError(500, "Request timed out") from exc


def _herder(request: Request) -> Herder:
    herder: Herder = request.app.state.herder
    return herder


async def _json_body(request: Request) -> Any:
    raw = await request.body()
    if not raw.strip():
        raise BadRequestError("Request body is empty; a JSON object is expected")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BadRequestError(f"Cannot parse the request body as JSON: {exc}") from exc


def _route(router: APIRouter, method: str, path: str, **kwargs: Any) -> Callable[[Any], Any]:
    """Register ``path`` with and without a trailing slash (Jersey accepts both; no redirects)."""
    def decorate(fn: Any) -> Any:
        router.add_api_route(path or "/", fn, methods=[method], **kwargs)
        if path:
            router.add_api_route(path + "/", fn, methods=[method], include_in_schema=False, **kwargs)
        return fn
    return decorate


router = APIRouter()


@_route(router, "GET", "")
async def root(request: Request) -> dict[str, Any]:
    return {"version": plugins.VERSION, "commit": COMMIT, "kafka_cluster_id": _herder(request).kafka_cluster_id}


@_route(router, "GET", "/connectors")
async def list_connectors(request: Request, expand: list[str] = Query(default=[])) -> Any:  # noqa: B008
    herder = _herder(request)
    names = herder.connectors()
    if not expand:
        return names
    result: dict[str, Any] = {}
    for name in names:
        entry: dict[str, Any] = {}
        try:
            if "status" in expand:
                entry["status"] = models.connector_state(herder.connector_status(name))
            if "info" in expand:
                entry["info"] = models.connector_info(herder.connector_info(name))
        except NotFoundError:
            continue
        result[name] = entry
    return result


@_route(router, "POST", "/connectors")
async def create_connector(request: Request) -> Response:
    body = await _json_body(request)
    try:
        parsed = models.CreateConnectorRequest.model_validate(body)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "body"
        raise BadRequestError(f"Invalid request body at '{where}': {err['msg']}") from exc
    name = (parsed.name or "").strip()
    config = string_values(parsed.config or {})
    if "name" in config and config["name"] != name:
        raise BadRequestError(f"Connector name configuration ({config['name']}) doesn't match connector name "
                              f"in the URL ({name})")
    config["name"] = name
    initial = _initial_state(parsed.initial_state)
    created = await _await(_herder(request).put_connector_config(name, config, allow_replace=False,
                                                                 initial_state=initial))
    location = f"{str(request.base_url).rstrip('/')}/connectors/{quote(name, safe='')}"
    return JSONResponse(models.connector_info(created.info), status_code=201, headers={"Location": location})


def _initial_state(value: str | None) -> TargetState | None:
    if value is None:
        return None
    mapping = {"RUNNING": TargetState.STARTED, "PAUSED": TargetState.PAUSED, "STOPPED": TargetState.STOPPED}
    state = mapping.get(value.strip().upper())
    if state is None:
        raise BadRequestError(f"Invalid initial state {value}; must be one of RUNNING, PAUSED, STOPPED")
    return state


@_route(router, "GET", "/connectors/{connector}")
async def connector_info(connector: str, request: Request) -> dict[str, Any]:
    return models.connector_info(_herder(request).connector_info(connector))


@_route(router, "GET", "/connectors/{connector}/config")
async def connector_config(connector: str, request: Request) -> dict[str, str]:
    return _herder(request).connector_config(connector)


@_route(router, "PUT", "/connectors/{connector}/config")
async def put_connector_config(connector: str, request: Request) -> Response:
    body = await _json_body(request)
    if not isinstance(body, dict):
        raise BadRequestError("The connector config must be a JSON object of strings")
    config = string_values(body)
    if "name" in config and config["name"] != connector:
        raise BadRequestError(f"Connector name configuration ({config['name']}) doesn't match connector name "
                              f"in the URL ({connector})")
    config["name"] = connector
    created = await _await(_herder(request).put_connector_config(connector, config, allow_replace=True))
    if created.created:
        location = f"{str(request.base_url).rstrip('/')}/connectors/{quote(connector, safe='')}"
        return JSONResponse(models.connector_info(created.info), status_code=201, headers={"Location": location})
    return JSONResponse(models.connector_info(created.info), status_code=200)


@_route(router, "GET", "/connectors/{connector}/status")
async def connector_status(connector: str, request: Request) -> dict[str, Any]:
    return models.connector_state(_herder(request).connector_status(connector))


@_route(router, "GET", "/connectors/{connector}/tasks")
async def connector_tasks(connector: str, request: Request) -> list[dict[str, Any]]:
    return [models.task_info(t) for t in _herder(request).task_infos(connector)]


@_route(router, "GET", "/connectors/{connector}/tasks/{task}/status")
async def task_status(connector: str, task: int, request: Request) -> dict[str, Any]:
    return models.state(_herder(request).task_status(connector, task))


@_route(router, "DELETE", "/connectors/{connector}")
async def delete_connector(connector: str, request: Request) -> Response:
    await _await(_herder(request).delete_connector(connector))
    return Response(status_code=204)


@_route(router, "GET", "/connector-plugins")
async def connector_plugins(connectorsOnly: bool = True) -> list[dict[str, str]]:
    kinds = [plugins.CONNECTORS] if connectorsOnly else [plugins.CONNECTORS, plugins.CONVERTERS,
                                                         plugins.HEADER_CONVERTERS]
    return [{"class": d.class_name, "type": d.type, "version": d.version} for kind in kinds for d in kind]


def create_app(herder: Herder) -> FastAPI:
    """The application, bound to ``herder``."""
    app = FastAPI(title="Kafka Connect REST API", version=plugins.VERSION, redirect_slashes=False,
                  docs_url=None, redoc_url=None)
    app.state.herder = herder
    app.include_router(router)
    errors.install(app)
    return app

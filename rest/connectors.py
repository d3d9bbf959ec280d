"""``/connectors``: create, read, update, delete connectors and read their status and tasks."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from connect.api.errors import NotFoundError
from connect.runtime import offsets_admin
from connect.runtime.rest_errors import BadRequestError, ConnectRestError
from connect.runtime.worker_config import string_values
from connect.storage.config_state import TargetState
from rest import models
from rest import openapi as oa
from rest.common import await_future, herder_of, json_body, route

router = APIRouter()


@route(router, "GET", "/connectors",
       responses=oa.responses({200: {"type": ["array", "object"]}}))
async def list_connectors(request: Request, expand: list[str] = Query(default=[])) -> Any:  # noqa: B008
    herder = herder_of(request)
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


@route(router, "POST", "/connectors",
       responses=oa.responses({201: oa.CONNECTOR_INFO}, 400, 409),
       openapi_extra=oa.body(oa.CREATE_REQUEST))
async def create_connector(request: Request) -> Response:
    body = await json_body(request)
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
    created = await await_future(herder_of(request).put_connector_config(name, config, allow_replace=False,
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


@route(router, "GET", "/connectors/{connector:name}",
       responses=oa.responses({200: oa.CONNECTOR_INFO}, 404))
async def connector_info(connector: str, request: Request) -> dict[str, Any]:
    return models.connector_info(herder_of(request).connector_info(connector))


@route(router, "GET", "/connectors/{connector:name}/config",
       responses=oa.responses({200: {"type": "object"}}, 404))
async def connector_config(connector: str, request: Request) -> dict[str, str]:
    return herder_of(request).connector_config(connector)


@route(router, "PUT", "/connectors/{connector:name}/config",
       responses=oa.responses({200: oa.CONNECTOR_INFO, 201: oa.CONNECTOR_INFO}, 400, 409),
       openapi_extra=oa.CONFIG_BODY)
async def put_connector_config(connector: str, request: Request) -> Response:
    body = await json_body(request)
    if not isinstance(body, dict):
        raise BadRequestError("The connector config must be a JSON object of strings")
    config = string_values(body)
    if "name" in config and config["name"] != connector:
        raise BadRequestError(f"Connector name configuration ({config['name']}) doesn't match connector name "
                              f"in the URL ({connector})")
    config["name"] = connector
    created = await await_future(herder_of(request).put_connector_config(connector, config, allow_replace=True))
    if created.created:
        location = f"{str(request.base_url).rstrip('/')}/connectors/{quote(connector, safe='')}"
        return JSONResponse(models.connector_info(created.info), status_code=201, headers={"Location": location})
    return JSONResponse(models.connector_info(created.info), status_code=200)


@route(router, "GET", "/connectors/{connector:name}/status",
       responses=oa.responses({200: oa.CONNECTOR_STATE}, 404))
async def connector_status(connector: str, request: Request) -> dict[str, Any]:
    return models.connector_state(herder_of(request).connector_status(connector))


@route(router, "GET", "/connectors/{connector:name}/tasks",
       responses=oa.responses({200: {"type": "array", "items": oa.TASK_INFO}}, 404))
async def connector_tasks(connector: str, request: Request) -> list[dict[str, Any]]:
    return [models.task_info(t) for t in herder_of(request).task_infos(connector)]


@route(router, "GET", "/connectors/{connector:name}/tasks/{task}/status",
       responses=oa.responses({200: oa.TASK_STATE}, 400, 404))
async def task_status(connector: str, task: int, request: Request) -> dict[str, Any]:
    return models.state(herder_of(request).task_status(connector, task))


@route(router, "DELETE", "/connectors/{connector:name}",
       responses=oa.responses({204: None}, 404, 409))
async def delete_connector(connector: str, request: Request) -> Response:
    await await_future(herder_of(request).delete_connector(connector))
    return Response(status_code=204)




@route(router, "PATCH", "/connectors/{connector:name}/config",
       responses=oa.responses({200: oa.CONNECTOR_INFO}, 400, 404, 409),
       openapi_extra=oa.PATCH_BODY)
async def patch_connector_config(connector: str, request: Request) -> Response:
    body = await json_body(request)
    if not isinstance(body, dict):
        raise BadRequestError("The config patch must be a JSON object")
    patch = {k: None if v is None else string_values({k: v})[k] for k, v in body.items()}
    if patch.get("name") not in (None, connector):
        raise BadRequestError(f"Connector name configuration ({patch['name']}) doesn't match connector name "
                              f"in the URL ({connector})")
    updated = await await_future(herder_of(request).patch_connector_config(connector, patch))
    return JSONResponse(models.connector_info(updated.info), status_code=200)


@route(router, "PUT", "/connectors/{connector:name}/pause",
       responses=oa.responses({202: None}, 404))
async def pause_connector(connector: str, request: Request) -> Response:
    await await_future(herder_of(request).pause_connector(connector))
    return Response(status_code=202)


@route(router, "PUT", "/connectors/{connector:name}/resume",
       responses=oa.responses({202: None}, 404))
async def resume_connector(connector: str, request: Request) -> Response:
    await await_future(herder_of(request).resume_connector(connector))
    return Response(status_code=202)


@route(router, "PUT", "/connectors/{connector:name}/stop",
       responses=oa.responses({204: None}, 404, 409))
async def stop_connector(connector: str, request: Request) -> Response:
    await await_future(herder_of(request).stop_connector(connector))
    return Response(status_code=204)


@route(router, "POST", "/connectors/{connector:name}/restart",
       responses=oa.responses({202: oa.CONNECTOR_STATE, 204: None}, 400, 404, 409))
async def restart_connector(connector: str, request: Request, includeTasks: bool = False,
                            onlyFailed: bool = False) -> Response:
    state = await await_future(herder_of(request).restart_connector(connector, includeTasks, onlyFailed))
    if state is None:
        return Response(status_code=204)
    return JSONResponse(models.connector_state(state), status_code=202)


@route(router, "POST", "/connectors/{connector:name}/tasks/{task}/restart",
       responses=oa.responses({204: None}, 400, 404, 409))
async def restart_task(connector: str, task: int, request: Request) -> Response:
    await await_future(herder_of(request).restart_task(connector, task))
    return Response(status_code=204)


@route(router, "POST", "/connectors/{connector:name}/tasks", include_in_schema=False)
async def put_task_configs(connector: str, request: Request) -> Response:
    """Internal: a connector's worker hands its task configs to the leader (forwarded when not the leader)."""
    raw = await request.body()
    herder_of(request).verify_internal_request(raw, dict(request.headers))
    body = await json_body(request)
    if not isinstance(body, list) or not all(isinstance(c, dict) for c in body):
        raise BadRequestError("Task configs must be a JSON array of objects")
    configs = [string_values(c) for c in body]
    await await_future(herder_of(request).put_task_configs(connector, configs))
    return Response(status_code=204)


@route(router, "PUT", "/connectors/{connector:name}/fence", include_in_schema=False)
async def fence_zombies(connector: str, request: Request) -> Response:
    """Internal (KIP-618): the leader fences the connector's previous task generation (forwarded to the leader)."""
    raw = await request.body()
    herder = herder_of(request)
    herder.verify_internal_request(raw, dict(request.headers))
    if herder.fence_zombies is None:
        raise BadRequestError("Zombie fencing is only performed by distributed workers")
    await asyncio.to_thread(herder.fence_zombies, connector)
    return Response(status_code=204)


@route(router, "GET", "/connectors/{connector:name}/offsets",
       responses=oa.responses({200: oa.OFFSETS}, 404))
async def connector_offsets(connector: str, request: Request) -> dict[str, Any]:
    return {"offsets": offsets_admin.connector_offsets(herder_of(request), connector)}


@route(router, "PATCH", "/connectors/{connector:name}/offsets",
       responses=oa.responses({200: oa.MESSAGE}, 400, 404, 409),
       openapi_extra=oa.OFFSETS_BODY)
async def alter_offsets(connector: str, request: Request) -> dict[str, str]:
    body = await json_body(request)
    message = await await_future(offsets_admin.alter_offsets(herder_of(request), connector, body))
    return {"message": message}


@route(router, "DELETE", "/connectors/{connector:name}/offsets",
       responses=oa.responses({200: oa.MESSAGE}, 400, 404, 409))
async def reset_offsets(connector: str, request: Request) -> dict[str, str]:
    message = await await_future(offsets_admin.reset_offsets(herder_of(request), connector))
    return {"message": message}


def _tracking(request: Request, reset: bool = False) -> None:
    props = herder_of(request).worker.props
    if props.get("topic.tracking.enable", "true").strip().lower() == "false":
        raise ConnectRestError(403, "Topic tracking is disabled.")
    if reset and props.get("topic.tracking.allow.reset", "true").strip().lower() == "false":
        raise ConnectRestError(403, "Topic tracking reset is disabled.")


@route(router, "GET", "/connectors/{connector:name}/topics",
       responses=oa.responses({200: {"type": "object"}}, 403))
async def connector_topics(connector: str, request: Request) -> dict[str, Any]:
    _tracking(request)
    return {connector: {"topics": herder_of(request).status_store.topics(connector)}}


@route(router, "PUT", "/connectors/{connector:name}/topics/reset",
       responses=oa.responses({202: None}, 403))
async def reset_connector_topics(connector: str, request: Request) -> Response:
    _tracking(request, reset=True)
    herder_of(request).status_store.reset_topics(connector)
    return Response(status_code=202)

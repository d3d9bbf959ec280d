"""``/connector-plugins``: the installed plugins, their config keys and connector config validation."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request

from connect.api.errors import NotFoundError
from connect.runtime import plugins, validation
from connect.runtime.rest_errors import BadRequestError, ConnectRestError
from connect.runtime.worker_config import string_values
from rest import openapi as oa
from rest.common import REQUEST_TIMEOUT_S, herder_of, json_body, route

router = APIRouter()


@route(router, "GET", "/connector-plugins",
       responses=oa.responses({200: {"type": "array", "items": {"type": "object"}}}, 400))
async def connector_plugins(connectorsOnly: bool = True) -> list[dict[str, str]]:
    return listing(connectors_only=connectorsOnly)


_ORDER = ("sink", "source", "transformation", "predicate", "converter", "header_converter")


def listing(*, connectors_only: bool) -> list[dict[str, str]]:
    """Connect's PluginInfo list: connectors, then (``connectorsOnly=false``) transformations, predicates,
    converters and header converters; each type sorted by class name."""
    kinds = [plugins.CONNECTORS] if connectors_only else [plugins.CONNECTORS, plugins.TRANSFORMATIONS,
                                                          plugins.PREDICATES, plugins.CONVERTERS,
                                                          plugins.HEADER_CONVERTERS]
    descs = sorted((d for kind in kinds for d in kind), key=lambda d: (_ORDER.index(d.type), d.class_name))
    return [{"class": d.class_name, "type": d.type, "version": d.version} for d in descs]


@route(router, "GET", "/connector-plugins/{plugin}/config",
       responses=oa.responses({200: {"type": "array", "items": {"type": "object"}}}, 400, 404))
async def plugin_config(plugin: str) -> list[dict[str, Any]]:
    """The plugin's config keys (connectors: their own keys, then the framework's)."""
    desc = plugins.find_any(plugin)
    if desc is None:
        raise NotFoundError(f"Unknown plugin {plugin}.")
    return validation.plugin_config(desc)


@route(router, "PUT", "/connector-plugins/{plugin}/config/validate",
       responses=oa.responses({200: {"type": "object", "required": ["name", "error_count", "groups", "configs"]}}, 400),
       openapi_extra=oa.CONFIG_BODY)
async def validate_config(plugin: str, request: Request) -> dict[str, Any]:
    """Every problem of a connector config; 200 even when there are errors."""
    body = await json_body(request)
    if not isinstance(body, dict):
        raise BadRequestError("The request body must be a JSON object of connector config values")
    nested = sorted(k for k, v in body.items() if isinstance(v, dict | list))
    if nested:
        raise BadRequestError("Connector config values must be strings, numbers, booleans or null: "
                              + ", ".join(nested))
    props = string_values(body)
    desc = validation.resolve_validate_request(plugin, props)
    defaults = herder_of(request).worker.config.validation_defaults()
    try:
        return await asyncio.wait_for(
            asyncio.to_thread(validation.validate_connector_config, props, desc, worker_defaults=defaults),
            REQUEST_TIMEOUT_S)
    except TimeoutError as exc:
        raise ConnectRestError(500, "Request timed out") from exc

"""``/connector-plugins``: the installed plugins."""

from __future__ import annotations

from fastapi import APIRouter

from connect import plugins
from rest.common import route

router = APIRouter()


@route(router, "GET", "/connector-plugins")
async def connector_plugins(connectorsOnly: bool = True) -> list[dict[str, str]]:
    kinds = [plugins.CONNECTORS] if connectorsOnly else [plugins.CONNECTORS, plugins.CONVERTERS,
                                                         plugins.HEADER_CONVERTERS]
    return [{"class": d.class_name, "type": d.type, "version": d.version} for kind in kinds for d in kind]



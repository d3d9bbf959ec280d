"""``/``: the worker's version and Kafka cluster."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from connect.runtime import plugins
from rest import openapi as oa
from rest.common import herder_of, route

router = APIRouter()
COMMIT = "26b251a451ce941d"


@route(router, "GET", "",
       responses=oa.responses({200: {"type": "object", "required": ["version", "commit", "kafka_cluster_id"]}}))
async def root(request: Request) -> dict[str, Any]:
    return {"version": plugins.VERSION, "commit": COMMIT, "kafka_cluster_id": herder_of(request).kafka_cluster_id}




_HEALTH = {
    "healthy": (200, "Worker has completed startup and is ready to handle requests."),
    "starting": (503, "Worker is still starting up."),
    "unhealthy": (500, "Worker was unable to handle this request and may be unable to handle other requests."),
}


@route(router, "GET", "/health",
       responses=oa.responses({200: {"type": "object", "required": ["status", "message"]}, 503: {"type": "object"}}))
async def health(request: Request) -> JSONResponse:
    import asyncio

    status = await asyncio.to_thread(herder_of(request).health)
    code, message = _HEALTH[status]
    return JSONResponse({"status": status, "message": message}, status_code=code)

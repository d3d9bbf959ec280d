"""``/``: the worker's version and Kafka cluster."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from connect import plugins
from rest.common import herder_of, route

router = APIRouter()
COMMIT = "26b251a451ce941d"


@route(router, "GET", "")
async def root(request: Request) -> dict[str, Any]:
    return {"version": plugins.VERSION, "commit": COMMIT, "kafka_cluster_id": herder_of(request).kafka_cluster_id}



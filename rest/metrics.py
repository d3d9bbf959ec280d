"""``/metrics``: the worker's and its tasks' metrics in Prometheus' text format (Debezium's ``debezium_metrics_*``)."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request
from fastapi.responses import Response

from rest import prometheus as metrics
from rest.common import herder_of, route

router = APIRouter()

_RESPONSES: dict[int | str, dict[str, object]] = {
    200: {"description": "Prometheus text exposition format 0.0.4",
          "content": {"text/plain": {"schema": {"type": "string"}}}}}


@route(router, "GET", "/metrics", responses=_RESPONSES)
async def prometheus(request: Request) -> Response:
    worker = herder_of(request).worker
    text = await asyncio.to_thread(lambda: metrics.render(worker.metrics()))
    return Response(text, media_type=metrics.CONTENT_TYPE)

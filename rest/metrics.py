"""``/metrics``: the worker's, its connectors' and tasks' metrics in Prometheus' text format, named as the JMX
exporter rules of Strimzi and Debezium name Kafka Connect's and Debezium's MBeans, plus ``process_*``.

Served on the REST listener (behind its authentication) and, with ``metrics.listener``, on a port of its own
without it (:mod:`rest.metrics_listener`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from prometheus_client import CollectorRegistry

from connect.api.metrics import Metric
from rest import prometheus
from rest.common import route

router = APIRouter()

_RESPONSES: dict[int | str, dict[str, object]] = {
    200: {"description": "Prometheus text exposition format 0.0.4",
          "content": {"text/plain": {"schema": {"type": "string"}}}}}


def registry_for(herder: Any) -> CollectorRegistry:
    """The registry a worker's ``/metrics`` answers from (the herder may still be starting: then only the process
    metrics)."""
    def source() -> list[Metric]:
        try:
            worker = herder.worker
        except AttributeError:  # the runtime has not started yet
            return []
        return list(worker.metrics())

    return prometheus.registry(source)


async def scrape(registry: CollectorRegistry) -> Response:
    """One scrape, off the event loop."""
    body = await asyncio.to_thread(prometheus.exposition, registry)
    return Response(body, media_type=prometheus.CONTENT_TYPE)


@route(router, "GET", "/metrics", responses=_RESPONSES)
async def metrics(request: Request) -> Response:
    return await scrape(request.app.state.metrics_registry)

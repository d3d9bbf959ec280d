"""``metrics.listener``: ``GET /metrics`` on a port of its own, without the REST API's authentication, as the
Prometheus JMX exporter agent serves a Java worker's metrics, so a ServiceMonitor can scrape a cluster whose REST
API needs credentials. Nothing else is served there.
"""

from __future__ import annotations

import logging
import socket
import threading

import uvicorn
from fastapi import FastAPI
from fastapi.responses import Response
from prometheus_client import CollectorRegistry

from rest.metrics import scrape

log = logging.getLogger(__name__)


def metrics_app(registry: CollectorRegistry) -> FastAPI:
    """An application serving only ``GET /metrics`` from ``registry``."""
    app = FastAPI(title="Kafka Connect metrics", docs_url=None, redoc_url=None, openapi_url=None,
                  redirect_slashes=False)

    async def metrics() -> Response:
        return await scrape(registry)

    app.add_api_route("/metrics", metrics, methods=["GET"])
    app.add_api_route("/metrics/", metrics, methods=["GET"], include_in_schema=False)
    return app


class MetricsListener:
    """The metrics server on its own thread; the socket is bound in :meth:`start`, so a port in use is an error
    there."""

    def __init__(self, host: str, port: int, registry: CollectorRegistry) -> None:
        self._address = (host, port)
        self._server = uvicorn.Server(uvicorn.Config(metrics_app(registry), log_level="warning", access_log=False))
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Bind and serve; raises ``OSError`` when the address cannot be bound."""
        host, port = self._address
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            sock.close()
            raise OSError(f"metrics.listener cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
        sock.listen(128)
        sock.setblocking(False)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]},
                                        name="metrics-listener", daemon=True)
        self._thread.start()
        log.info("Serving /metrics on http://%s:%s/metrics (no authentication)", host, port)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving; idempotent."""
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)

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


_THREAD_NAME = "metrics-listener"


class _NotTheScrapes(logging.Filter):
    """Keeps the scrapes of ``/metrics`` out of the REST access log (``uvicorn.access``, shared by every uvicorn
    server of the process), as the JMX exporter agent's requests are not in Connect's: they are served on the
    listener's thread."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.threadName != _THREAD_NAME


class MetricsListener:
    """The metrics server on its own thread; the socket is bound in :meth:`start`, so a port in use is an error
    there.

    uvicorn's logging is left as :mod:`connect.runtime.log_setup` set it: ``log_config=None`` (uvicorn's own would
    give its loggers handlers of its own on stderr), ``log_level=None`` (it would set the levels of every uvicorn
    logger) and ``access_log=True`` (``False`` would strip the shared ``uvicorn.access`` logger of its propagation,
    losing the REST access log); the filter keeps this server's requests out of that log."""

    def __init__(self, host: str, port: int, registry: CollectorRegistry) -> None:
        self._address = (host, port)
        self._server = uvicorn.Server(uvicorn.Config(metrics_app(registry), log_config=None, log_level=None,
                                                     access_log=True))
        access = logging.getLogger("uvicorn.access")
        if not any(isinstance(f, _NotTheScrapes) for f in access.filters):
            access.addFilter(_NotTheScrapes())
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
                                        name=_THREAD_NAME, daemon=True)
        self._thread.start()
        log.info("Serving /metrics on http://%s:%s/metrics (no authentication)", host, port)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving; idempotent."""
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)

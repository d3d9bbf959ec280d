"""The FastAPI application serving Kafka Connect's REST API over a :class:`~connect.runtime.herder.Herder`."""

from __future__ import annotations

import base64
import binascii
import hmac

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from connect.runtime import plugins
from connect.runtime.herder import Herder
from rest import connectors, loggers, metrics, root
from rest import error_handlers as errors
from rest import plugins as plugin_routes
from rest.common import REQUEST_TIMEOUT_S, routing_path


class _WaitForStartup:
    """ASGI middleware: while the worker starts, ``/health`` answers 503 and other requests wait for it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = scope.get("app")
        startup = getattr(app.state, "startup", None) if app is not None else None
        if scope["type"] != "http" or startup is None or startup.ready.is_set():
            await self.app(scope, receive, send)
            return
        if scope["path"].rstrip("/") == "/health":
            message = "Worker is still starting up."
            response = JSONResponse({"status": "starting", "message": message}, status_code=503)
            await response(scope, receive, send)
            return
        import asyncio

        # waits for the outcome, not for success: a worker that failed to start answers at once (and its
        # process exits at once, not once every waiting request has timed out)
        if not await asyncio.to_thread(startup.done.wait, REQUEST_TIMEOUT_S):
            await errors.error_response(500, "Request timed out. The worker is still starting up.")(
                scope, receive, send)
            return
        if not startup.ready.is_set():
            await errors.error_response(503, f"The worker failed to start: {startup.failed}")(scope, receive, send)
            return
        await self.app(scope, receive, send)


class _BasicAuth:
    """ASGI middleware: HTTP basic authentication against the credentials of the basic-auth extension."""

    def __init__(self, app: ASGIApp, credentials: dict[str, str]) -> None:
        self.app = app
        self._credentials = credentials

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _internal(scope) or self._authorized(dict(scope.get("headers") or [])):
            await self.app(scope, receive, send)
            return
        response = errors.error_response(401, "User cannot access the resource.")
        response.headers["WWW-Authenticate"] = 'Basic realm="KafkaConnect"'
        await response(scope, receive, send)

    def _authorized(self, headers: dict[bytes, bytes]) -> bool:
        value = headers.get(b"authorization", b"")
        if not value.lower().startswith(b"basic "):
            return False
        try:
            user, _, password = base64.b64decode(value[6:].strip()).decode("utf-8").partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return False
        expected = self._credentials.get(user)
        return expected is not None and hmac.compare_digest(expected, password)


def _internal(scope: Scope) -> bool:
    """Worker-to-worker requests, which Connect's basic-auth filter lets through: ``POST /connectors/{c}/tasks``
    and ``PUT /connectors/{c}/fence``."""
    path = str(scope.get("path", "")).rstrip("/")
    method = scope.get("method")
    return path.startswith("/connectors/") and ((method == "POST" and path.endswith("/tasks"))
                                                or (method == "PUT" and path.endswith("/fence")))


class _RoutingPath:
    """ASGI middleware: route ``/connectors/a%2Fb/status`` to connector ``a/b`` (Connect allows ``/``) and
    ``/connectors/%0A`` to connector "\\n" (see :func:`~rest.common.routing_path`)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope = {**scope, "path": routing_path(scope.get("raw_path"), scope["path"])}
        await self.app(scope, receive, send)


def create_app(herder: Herder, credentials: dict[str, str] | None = None) -> FastAPI:
    """The application, bound to ``herder``."""
    app = FastAPI(title="Kafka Connect REST API", version=plugins.VERSION, redirect_slashes=False,
                  docs_url=None, redoc_url=None)
    app.state.herder = herder
    app.state.metrics_registry = metrics.registry_for(herder)
    app.state.publish_cluster_level = lambda namespace, level: herder.publish_logger_level(namespace, level)
    for module in (root, connectors, plugin_routes, loggers, metrics):
        app.include_router(module.router)
    errors.install(app)
    app.add_middleware(_RoutingPath)
    app.add_middleware(_WaitForStartup)
    if credentials is not None:
        app.add_middleware(_BasicAuth, credentials=credentials)
    return app

"""The FastAPI application serving Kafka Connect's REST API over a :class:`~connect.herder.Herder`."""

from __future__ import annotations

from fastapi import FastAPI

from connect import plugins
from connect.herder import Herder
from rest import connectors, errors, root
from rest import plugins as plugin_routes


def create_app(herder: Herder) -> FastAPI:
    """The application, bound to ``herder``."""
    app = FastAPI(title="Kafka Connect REST API", version=plugins.VERSION, redirect_slashes=False,
                  docs_url=None, redoc_url=None)
    app.state.herder = herder
    for module in (root, connectors, plugin_routes):
        app.include_router(module.router)
    errors.install(app)
    return app

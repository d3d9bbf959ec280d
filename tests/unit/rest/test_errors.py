"""Every error leaves the app as Connect's ``{"error_code","message"}`` body, and an unexpected exception is a
500 that does not break the connection."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.testclient import TestClient

from rest import error_handlers as errors


def test_unexpected_exception_is_a_connect_500() -> None:
    app = FastAPI()

    @app.get("/boom")
    async def boom() -> None:
        raise RuntimeError("kaput")

    errors.install(app)
    client = TestClient(app)  # raises if the exception escaped the app
    reply = client.get("/boom")
    assert reply.status_code == 500
    assert reply.json() == {"error_code": 500, "message": "kaput"}
    assert client.get("/nope").json() == {"error_code": 404, "message": "HTTP 404 Not Found"}

"""Every error leaves the app as Connect's ``{"error_code","message"}`` body, and an unexpected exception is a
500 that does not break the connection."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.testclient import TestClient

from connect.distributed.cluster import RequestTargetError
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


def test_a_request_that_cannot_be_forwarded_is_connects_409_or_500() -> None:
    app = FastAPI()

    @app.post("/work")
    async def work() -> None:
        raise RequestTargetError("http://127.0.0.1:9/", "not the leader")  # port 9 (discard): nobody answers

    errors.install(app)
    client = TestClient(app)
    third_hop = client.post("/work?forward=false")
    assert third_hop.status_code == 409
    assert third_hop.json() == {"error_code": 409, "message": "Cannot complete request because of a conflicting "
                                                              "operation (e.g. worker rebalance)"}
    unreachable = client.post("/work")
    assert unreachable.status_code == 500
    assert unreachable.json()["message"].startswith("IO Error trying to forward REST request: ")

"""``GET /health`` as KIP-1017 answers it: 503 while starting, 200 healthy, 500 unhealthy."""

from __future__ import annotations

import threading
from typing import Any

from fastapi.testclient import TestClient

from rest.app import create_app


class _Herder:
    def __init__(self, status: str) -> None:
        self.status = status

    def health(self) -> str:
        return self.status


class _Startup:
    def __init__(self) -> None:
        self.ready = threading.Event()
        self.done = threading.Event()
        self.failed: BaseException | None = None


def _client(herder: Any, startup: _Startup) -> TestClient:
    app = create_app(herder)
    app.state.startup = startup
    return TestClient(app)


def test_starting_then_healthy_then_unhealthy() -> None:
    herder, startup = _Herder("healthy"), _Startup()
    client = _client(herder, startup)
    starting = client.get("/health")
    assert starting.status_code == 503
    assert starting.json() == {"status": "starting", "message": "Worker is still starting up."}
    startup.ready.set()
    healthy = client.get("/health/")
    assert healthy.status_code == 200 and healthy.json()["status"] == "healthy"
    herder.status = "unhealthy"
    unhealthy = client.get("/health")
    assert unhealthy.status_code == 500 and unhealthy.json()["status"] == "unhealthy"


def test_a_request_waiting_for_a_start_that_fails_is_answered_at_once() -> None:
    startup = _Startup()
    client = _client(_Herder("healthy"), startup)
    answers: list[Any] = []
    waiting = threading.Thread(target=lambda: answers.append(client.get("/connectors")))
    waiting.start()
    startup.failed = RuntimeError("the group uses another config topic")
    startup.done.set()
    waiting.join(30)
    [answer] = answers
    assert answer.status_code == 503
    assert answer.json()["message"] == "The worker failed to start: the group uses another config topic"

"""``/admin/loggers`` over a minimal app: shapes, status codes and Connect's error messages."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from concurrent.futures import Future

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

import rest.loggers
from connect.runtime.loggers import Loggers
from rest import error_handlers as errors

NOW = 1_729_800_000_000


@pytest.fixture
def manager() -> logging.Manager:
    return logging.Manager(logging.RootLogger(logging.INFO))


@pytest.fixture
def app(manager: logging.Manager) -> FastAPI:
    app = FastAPI(redirect_slashes=False)
    app.state.loggers = Loggers(clock=lambda: NOW, manager=manager)
    app.include_router(rest.loggers.router)
    errors.install(app)
    return app


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


def test_list_with_and_without_trailing_slash(client: TestClient, manager: logging.Manager) -> None:
    manager.getLogger("org.apache.kafka.connect").setLevel(logging.DEBUG)
    manager.getLogger("unset")
    for path in ("/admin/loggers", "/admin/loggers/"):
        reply = client.get(path, follow_redirects=False)
        assert reply.status_code == 200
        assert reply.json() == {"org.apache.kafka.connect": {"level": "DEBUG", "last_modified": None},
                                "root": {"level": "INFO", "last_modified": None}}
        assert list(reply.json()) == ["org.apache.kafka.connect", "root"]


def test_get_one(client: TestClient, manager: logging.Manager) -> None:
    manager.getLogger("connect.runtime.herder")
    for path in ("/admin/loggers/connect.runtime.herder", "/admin/loggers/connect.runtime.herder/"):
        reply = client.get(path, follow_redirects=False)
        assert reply.status_code == 200
        assert reply.json() == {"level": "INFO", "last_modified": None}
    assert client.get("/admin/loggers/ROOT").json() == {"level": "INFO", "last_modified": None}


def test_get_unknown_is_404(client: TestClient) -> None:
    reply = client.get("/admin/loggers/no.such.logger")
    assert reply.status_code == 404
    assert reply.json() == {"error_code": 404, "message": "Logger no.such.logger not found."}


def test_put_worker_scope_answers_affected_names(client: TestClient, manager: logging.Manager) -> None:
    manager.getLogger("connect.runtime.herder")
    manager.getLogger("connectors.mongodb")
    reply = client.put("/admin/loggers/connect", json={"level": "DEBUG"})
    assert reply.status_code == 200
    assert reply.json() == ["connect", "connect.runtime.herder"]
    assert client.get("/admin/loggers/connect.runtime.herder").json() == {"level": "DEBUG", "last_modified": NOW}
    assert client.get("/admin/loggers/connectors.mongodb").json()["level"] == "INFO"
    listed = client.get("/admin/loggers/").json()
    assert listed["connect"] == {"level": "DEBUG", "last_modified": NOW}


@pytest.mark.parametrize("query", ["?scope=worker", "?scope=WORKER", "?scope=galaxy", "?scope=", ""])
def test_put_worker_or_unknown_scope(client: TestClient, query: str) -> None:
    reply = client.put(f"/admin/loggers/x.y/{query}", json={"level": "warn"})
    assert reply.status_code == 200 and reply.json() == ["x.y"]
    assert client.get("/admin/loggers/x.y").json()["level"] == "WARN"


def test_put_cluster_scope_without_hook_applies_locally(client: TestClient) -> None:
    reply = client.put("/admin/loggers/a.b?scope=cluster", json={"level": "TRACE"})
    assert reply.status_code == 204 and reply.content == b""
    assert client.get("/admin/loggers/a.b").json() == {"level": "TRACE", "last_modified": NOW}


def test_put_cluster_scope_calls_the_hook(app: FastAPI, client: TestClient) -> None:
    calls: list[tuple[str, str]] = []
    app.state.publish_cluster_level = lambda namespace, level: calls.append((namespace, level))
    reply = client.put("/admin/loggers/a.b?scope=Cluster", json={"level": "debug"})
    assert reply.status_code == 204
    assert calls == [("a.b", "DEBUG")]
    assert client.get("/admin/loggers/a.b").status_code == 404, "the hook decides where the level is applied"


def test_cluster_hook_may_return_a_future_or_a_coroutine(app: FastAPI, client: TestClient) -> None:
    calls: list[str] = []

    def with_future(namespace: str, level: str) -> Future[None]:
        calls.append(f"future {namespace} {level}")
        done: Future[None] = Future()
        done.set_result(None)
        return done

    async def coroutine(namespace: str, level: str) -> None:
        await asyncio.sleep(0)
        calls.append(f"coroutine {namespace} {level}")

    app.state.publish_cluster_level = with_future
    assert client.put("/admin/loggers/n?scope=cluster", json={"level": "OFF"}).status_code == 204
    app.state.publish_cluster_level = coroutine
    assert client.put("/admin/loggers/n?scope=cluster", json={"level": "OFF"}).status_code == 204
    assert calls == ["future n OFF", "coroutine n OFF"]


def test_cluster_hook_failure_is_an_error(app: FastAPI, client: TestClient) -> None:
    def failing(namespace: str, level: str) -> None:
        raise RuntimeError("config topic unavailable")

    app.state.publish_cluster_level = failing
    reply = client.put("/admin/loggers/n?scope=cluster", json={"level": "INFO"})
    assert reply.status_code == 500
    assert reply.json() == {"error_code": 500, "message": "config topic unavailable"}


@pytest.mark.parametrize("body", [{}, {"level": None}, {"other": "DEBUG"}])
def test_put_without_level_is_400(client: TestClient, body: dict[str, object]) -> None:
    reply = client.put("/admin/loggers/x", json=body)
    assert reply.status_code == 400
    assert reply.json() == {"error_code": 400,
                            "message": "Desired 'level' parameter was not specified in request."}


@pytest.mark.parametrize(("level", "shown"), [("LOUD", "LOUD"), ("WARNING", "WARNING"), (10, "10"), ("", "")])
def test_put_invalid_level_is_404(client: TestClient, level: object, shown: str) -> None:
    for scope in ("worker", "cluster"):
        reply = client.put(f"/admin/loggers/x?scope={scope}", json={"level": level})
        assert reply.status_code == 404
        assert reply.json() == {"error_code": 404, "message": f"invalid log level '{shown}'."}
    assert client.get("/admin/loggers/x").status_code == 404, "nothing was created"


@pytest.mark.parametrize("content", [b"", b"{not json", b"[\"DEBUG\"]"])
def test_put_bad_body_is_400(client: TestClient, content: bytes) -> None:
    reply = client.put("/admin/loggers/x", content=content, headers={"Content-Type": "application/json"})
    assert reply.status_code == 400
    assert reply.json()["error_code"] == 400


def test_put_root(client: TestClient, manager: logging.Manager) -> None:
    manager.getLogger("a")
    reply = client.put("/admin/loggers/root", json={"level": "ERROR"})
    assert reply.status_code == 200 and reply.json() == ["a", "root"]
    assert client.get("/admin/loggers").json() == {"a": {"level": "ERROR", "last_modified": NOW},
                                                   "root": {"level": "ERROR", "last_modified": NOW}}


def test_default_loggers_are_the_process_ones() -> None:
    app = FastAPI(redirect_slashes=False)
    app.include_router(rest.loggers.router)
    errors.install(app)
    with TestClient(app) as client:
        name = "tests.unit.rest.loggers_probe"
        logging.getLogger(name)
        assert client.get(f"/admin/loggers/{name}").status_code == 200
        assert "root" in client.get("/admin/loggers").json()

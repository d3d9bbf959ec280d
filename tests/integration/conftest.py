"""Fixtures for tests against the real stack: worker processes, MongoDB clients, and a broker with secured listeners
(started once, on first use: the security tests and the Spark jobs' secured read)."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pymongo
import pytest

import stack as stack_mod
from stack import StackEndpoints
from stack.oauth_server import OAuthServer
from stack.procs import tail
from stack.secure_kafka import SecureKafkaBroker
from stack.worker import ConnectWorker, distributed_properties
from tests.integration.support import Worker

_counter = itertools.count()
OAUTH_CLIENTS = {"pyconnect": "oauth-client-secret"}


@pytest.fixture(scope="session")
def oauth_server() -> Iterator[OAuthServer]:
    server = OAuthServer(OAUTH_CLIENTS).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def secure_kafka(stack_dir: Path, oauth_server: OAuthServer) -> Iterator[SecureKafkaBroker]:
    broker = SecureKafkaBroker(stack_dir / "secure-kafka", jwks_url=oauth_server.jwks_url)
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def worker_factory(stack: StackEndpoints, tmp_path: Path) -> Iterator[Callable[..., Worker]]:
    """Start worker processes (distributed mode) sharing a fresh group and internal topics."""
    group = f"connect-test-{uuid.uuid4().hex[:8]}"
    started: list[ConnectWorker] = []

    def start(extra: dict[str, str] | None = None, port: int | None = None, env: dict[str, str] | None = None,
              ) -> Worker:
        rest_port = port or stack_mod.free_port()
        props = distributed_properties(stack.kafka_bootstrap, rest_port, group_id=group, extra=extra)
        process = ConnectWorker(tmp_path / f"worker-{next(_counter)}", rest_port, props, env)
        process.start()
        started.append(process)
        return Worker(process)

    yield start
    for process in started:
        process.stop(timeout=20)
    for process in started:  # pytest shows a test's teardown output only when the test failed
        print(f"--- last lines of {process.log_path}:\n{tail(process.log_path, 120)}")


@pytest.fixture
def worker(worker_factory: Callable[..., Worker]) -> Worker:
    """One running worker."""
    return worker_factory()


@pytest.fixture
def mongo(stack: StackEndpoints) -> Iterator[pymongo.MongoClient[dict[str, Any]]]:
    client: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(stack.mongo_uri)
    yield client
    client.close()



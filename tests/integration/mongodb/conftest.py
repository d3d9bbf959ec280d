"""Fixtures of the MongoDB capture tests: extra SecantusDB servers with their own flags (small oplog, --auth,
TLS, shards), a MongoDB connector helper and a reader of the payloads of a topic's records."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pymongo
import pytest

import stack as stack_mod
from stack.mongo import MongoServer
from tests.integration import support
from tests.integration.support import Worker, payload, read_topic


class FlaggedMongoServer(MongoServer):
    """A SecantusDB server started with extra command-line flags."""

    def __init__(self, state_dir: Path, port: int, flags: list[str]) -> None:
        super().__init__(state_dir, port)
        self.flags = flags

    def command(self) -> list[str]:
        return [*super().command(), *self.flags]

    def is_ready(self) -> bool:
        if "--tls-cert-file" not in self.flags:
            return super().is_ready()
        probe: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(
            self.uri, tls=True, tlsAllowInvalidCertificates=True, serverSelectionTimeoutMS=1000)
        try:
            return bool(probe.admin.command("hello").get("isWritablePrimary"))
        except pymongo.errors.PyMongoError:
            return False
        finally:
            probe.close()


@pytest.fixture
def secantus_factory(tmp_path: Path) -> Iterator[Callable[..., FlaggedMongoServer]]:
    """Start extra SecantusDB servers (each a replica set ``secantus``); all are stopped afterwards."""
    started: list[FlaggedMongoServer] = []

    def start(*flags: str) -> FlaggedMongoServer:
        server = FlaggedMongoServer(tmp_path / f"mongo-{len(started)}", stack_mod.free_port(), list(flags))
        server.start()
        started.append(server)
        return server

    yield start
    with ThreadPoolExecutor(max_workers=max(1, len(started))) as pool:  # each takes 2 s to stop: at once
        list(pool.map(lambda server: server.stop(), started))


def create_mongodb_connector(worker: Worker, name: str, config: dict[str, str], *, wait_running: bool = True) -> None:
    """Create a MongoDB connector (``snapshot.mode`` ``no_data`` unless ``config`` says otherwise) and, unless
    ``wait_running`` is False, wait until it and its tasks run."""
    support.create_connector(worker, name, {"connector.class": "io.debezium.connector.mongodb.MongoDbConnector",
                                            "snapshot.mode": "no_data", **config}, wait_running=wait_running)


def values(bootstrap: str, topic: str, count: int, timeout: float = 60) -> list[Any]:
    """The decoded ``payload`` of the value of ``count`` records of ``topic`` (None for tombstones)."""
    return [payload(r.value) for r in read_topic(bootstrap, topic, count, timeout=timeout)]


def client(uri: str) -> pymongo.MongoClient[dict[str, Any]]:
    """A client with short timeouts."""
    return pymongo.MongoClient(uri, serverSelectionTimeoutMS=10_000)

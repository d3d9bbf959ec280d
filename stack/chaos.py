"""A stack with Toxiproxy between the worker and each service, for the fault matrix (tests/integration/chaos/).

* Kafka's ``PLAINTEXT`` listener advertises the ``kafka`` proxy, so every connection a worker makes after the
  bootstrap (producers, the group member, the internal topics' readers) goes through it. A second listener,
  ``OBSERVER``, advertises itself: the test's own consumers read through it, unaffected by the faults.
* SecantusDB advertises its own address in ``hello``, so a driver given the proxy with ``replicaSet=`` would move
  to the server itself; the worker's connection string uses ``directConnection=true`` to stay on the proxy.
  The test's writer connects to the server directly.
* A third listener, ``ISOLATED``, advertises a proxy of its own: a worker bootstrapped there reaches the broker
  only through it, so that one worker can be cut from Kafka while the others (and its REST API) go on.
* :meth:`ChaosStack.small_oplog_mongo` starts a SecantusDB keeping only a few oplog entries
  (``--oplog-max-entries``) behind a proxy of its own: a partition longer than that window loses the
  connector's resume position, as a MongoDB whose oplog rolled over.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stack import procs
from stack.kafka import KafkaBroker
from stack.mongo import MongoServer
from stack.procs import StackError
from stack.toxiproxy import Proxy, ToxiproxyServer


class ProxiedKafkaBroker(KafkaBroker):
    """A broker whose clients are sent to a proxy, with an ``OBSERVER`` listener that bypasses it."""

    def __init__(self, state_dir: Path, port: int, observer_port: int, proxy: str, controller_port: int,
                 isolated_port: int, isolated_proxy: str) -> None:
        super().__init__(state_dir, port, controller_port, advertised=proxy)
        self.observer_port = observer_port
        self.isolated_port = isolated_port
        self.isolated_proxy = isolated_proxy

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.observer_port}"

    def extra_properties(self) -> dict[str, str]:
        return {
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},OBSERVER://127.0.0.1:{self.observer_port},"
                         f"ISOLATED://127.0.0.1:{self.isolated_port},CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://{self.advertised},OBSERVER://127.0.0.1:{self.observer_port},"
                                    f"ISOLATED://{self.isolated_proxy}",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,OBSERVER:PLAINTEXT,ISOLATED:PLAINTEXT,"
                                              "CONTROLLER:PLAINTEXT",
        }

    def state(self) -> dict[str, Any]:
        return {**super().state(), "observer_port": self.observer_port, "advertised": self.advertised}


class DurableMongoServer(MongoServer):
    """SecantusDB fsyncing its log at every commit (``--sync-on-commit``): a write it acknowledged survives a
    SIGKILL, as a MongoDB write acknowledged with ``j: true`` does, so a change lost after a kill is the
    connector's, not the server's."""

    def __init__(self, state_dir: Path, port: int, flags: tuple[str, ...] = ()) -> None:
        super().__init__(state_dir, port)
        self.flags = flags

    def command(self) -> list[str]:
        return [*super().command(), "--sync-on-commit", *self.flags]


@dataclass
class ProxiedMongo:
    """A SecantusDB of one cell behind a proxy of its own."""

    server: MongoServer
    proxy: Proxy

    @property
    def worker_uri(self) -> str:
        return f"mongodb://{self.proxy.address}/?directConnection=true"


@dataclass
class ChaosStack:
    toxiproxy: ToxiproxyServer
    kafka: ProxiedKafkaBroker
    mongo: MongoServer
    kafka_proxy: Proxy
    mongo_proxy: Proxy
    isolated_kafka_proxy: Proxy

    @property
    def worker_bootstrap(self) -> str:
        """What a worker under test is given: the proxy (and the broker sends it back there)."""
        return self.kafka_proxy.address

    @property
    def observer_bootstrap(self) -> str:
        return self.kafka.bootstrap

    @property
    def worker_mongo_uri(self) -> str:
        return f"mongodb://{self.mongo_proxy.address}/?directConnection=true"

    @property
    def mongo_uri(self) -> str:
        return self.mongo.uri

    @property
    def isolated_worker_bootstrap(self) -> str:
        """A worker given this reaches the broker only through :attr:`isolated_kafka_proxy`."""
        return self.isolated_kafka_proxy.address

    def small_oplog_mongo(self, state_dir: Path, entries: int) -> ProxiedMongo:
        """A SecantusDB keeping ``entries`` oplog entries, behind a new proxy; the caller stops the server."""
        port, listen = procs.free_ports(2)
        server = DurableMongoServer(state_dir, port, ("--oplog-max-entries", str(entries)))
        proxy = self.toxiproxy.client().create_proxy("mongo-small-oplog", listen, server.address)
        server.start()
        return ProxiedMongo(server, proxy)

    def heal(self) -> None:
        """Every toxic removed, both proxies enabled."""
        self.toxiproxy.client().reset()

    def stop(self) -> None:
        errors = []
        for service in (self.mongo, self.kafka, self.toxiproxy):
            try:
                service.stop()
            except StackError as exc:
                errors.append(f"{service.name}: {exc}")
        if errors:
            raise StackError("; ".join(errors))


def start(state_dir: Path) -> ChaosStack:
    """Toxiproxy, then Kafka and SecantusDB behind it, all on free ports under ``state_dir``."""
    state_dir.mkdir(parents=True, exist_ok=True)
    api, kafka_port, observer, controller, kafka_listen, mongo_port, mongo_listen, isolated, isolated_listen = \
        procs.free_ports(9)
    toxiproxy = ToxiproxyServer(state_dir, api)
    toxiproxy.start()
    try:
        client = toxiproxy.client()
        kafka_proxy = client.create_proxy("kafka", kafka_listen, f"127.0.0.1:{kafka_port}")
        mongo_proxy = client.create_proxy("mongo", mongo_listen, f"127.0.0.1:{mongo_port}")
        isolated_proxy = client.create_proxy("kafka-isolated", isolated_listen, f"127.0.0.1:{isolated}")
        kafka = ProxiedKafkaBroker(state_dir, kafka_port, observer, kafka_proxy.address, controller, isolated,
                                   isolated_proxy.address)
        mongo = DurableMongoServer(state_dir, mongo_port)
        kafka.start()
        mongo.start()
    except BaseException:
        for service in (MongoServer(state_dir, mongo_port), KafkaBroker(state_dir, kafka_port, controller), toxiproxy):
            with contextlib.suppress(StackError):
                service.stop()
        raise
    return ChaosStack(toxiproxy, kafka, mongo, kafka_proxy, mongo_proxy, isolated_proxy)

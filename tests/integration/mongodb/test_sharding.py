"""mongodb.connection.mode=replica_set against a sharded cluster: the connector finds the shards (SecantusDB has
no mongos, so: several SecantusDB servers as shards, and one holding ``config.shards`` as the config server),
runs one task per group of shard replica sets up to tasks.max, keeps one offset per replica set and asks for a
task reconfiguration when a shard is added."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests.integration.mongodb.conftest import client
from tests.integration.support import Worker, create_connector, read_to_end, read_topic, unique

pytestmark = pytest.mark.integration


def _tasks(worker: Worker, name: str, count: int, timeout: float = 90) -> list[dict[str, Any]]:
    status = worker.wait_status(name, lambda s: len(s["tasks"]) == count
                                and all(t["state"] == "RUNNING" for t in s["tasks"]), timeout, fail_fast=True)
    return list(status["tasks"])


def _ids(bootstrap: str, topic: str, count: int) -> set[str]:
    return {json.loads(r.key)["payload"]["id"] for r in read_topic(bootstrap, topic, count, timeout=120)}


def _wait_streams_open(shard_uris: dict[int, str], db: str, bootstrap: str, topics: list[str]) -> None:
    """Write a probe into ``<db>.probe`` of each shard, again every half second, until each of ``topics`` holds a
    probe of every shard: every shard's change stream is open (``no_data`` streams start at "now")."""
    pending = {(shard, topic) for shard in shard_uris for topic in topics}
    deadline, round_ = time.monotonic() + 120, 0
    while pending:
        assert time.monotonic() < deadline, f"streams never opened: {sorted(pending)}"
        for shard in {shard for shard, _ in pending}:
            with client(shard_uris[shard]) as mongo:
                mongo[db]["probe"].insert_one({"_id": f"p{shard}-{round_}"})
        round_ += 1
        time.sleep(0.5)
        for topic in {topic for _, topic in pending}:
            keys = {json.loads(key)["payload"]["id"] for key, _ in read_to_end(bootstrap, topic) if key is not None}
            pending -= {(shard, topic) for shard in shard_uris if any(k.startswith(f'"p{shard}-') for k in keys)}


def test_one_task_per_replica_set_group_and_new_shards(secantus_factory: Any, worker: Worker, stack: Any) -> None:
    shards = [secantus_factory() for _ in range(3)]
    config_server = secantus_factory()
    with client(config_server.uri) as cfg:
        cfg["config"]["shards"].insert_many(
            [{"_id": f"shard{i}", "host": f"secantus/{s.address}"} for i, s in enumerate(shards)])
    db = unique("sh")
    connectors = {}
    for tasks_max in (2, 4):
        name, prefix = unique(f"shard{tasks_max}-"), unique("sh")
        connectors[tasks_max] = (name, prefix)
        config = {"connector.class": "MongoDbConnector", "mongodb.connection.string": config_server.uri,
                  "mongodb.connection.mode": "replica_set", "tasks.max": str(tasks_max), "topic.prefix": prefix,
                  "snapshot.mode": "no_data", "mongodb.poll.interval.ms": "1000",
                  "collection.include.list": f"{db}.c,{db}.probe"}
        create_connector(worker, name, config, wait_running=False)
    _tasks(worker, connectors[2][0], 2)
    _tasks(worker, connectors[4][0], 3)
    probes = [f"{prefix}.{db}.probe" for _name, prefix in connectors.values()]
    _wait_streams_open({i: s.uri for i, s in enumerate(shards)}, db, stack.kafka_bootstrap, probes)
    for i, shard in enumerate(shards):
        with client(shard.uri) as mongo:
            mongo[db]["c"].insert_many([{"_id": f"s{i}-{n}"} for n in range(5)])
    for _name, prefix in connectors.values():
        assert _ids(stack.kafka_bootstrap, f"{prefix}.{db}.c", 15) == {f'"s{i}-{n}"' for i in range(3)
                                                                       for n in range(5)}
    deadline = time.monotonic() + 30
    partitions: list[str] = []
    while time.monotonic() < deadline and len(partitions) < 3:
        offsets = worker.http.get(f"/connectors/{connectors[2][0]}/offsets").json()["offsets"]
        partitions = sorted(o["partition"]["rs"] for o in offsets)
        time.sleep(1)
    assert partitions == ["shard0", "shard1", "shard2"]

    fourth = secantus_factory()
    with client(config_server.uri) as cfg:
        cfg["config"]["shards"].insert_one({"_id": "shard3", "host": f"secantus/{fourth.address}"})
    _tasks(worker, connectors[4][0], 4)
    tasks_of_two = _tasks(worker, connectors[2][0], 2)
    assert len(tasks_of_two) == 2
    _wait_streams_open({3: fourth.uri}, db, stack.kafka_bootstrap, probes)
    with client(fourth.uri) as mongo:
        mongo[db]["c"].insert_many([{"_id": f"s3-{n}"} for n in range(5)])
    for _name, prefix in connectors.values():
        assert {f'"s3-{n}"' for n in range(5)} <= _ids(stack.kafka_bootstrap, f"{prefix}.{db}.c", 20)

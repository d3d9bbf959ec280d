"""Several workers in one group: connectors and tasks spread over them, writes sent to a follower reach the
leader, and a worker killed with SIGKILL hands its work to the survivors without losing a change."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import httpx
import pytest

from tests.integration.support import Worker, create_connector, payload, read_topic, unique

pytestmark = pytest.mark.integration

GROUP = {"session.timeout.ms": "6000", "heartbeat.interval.ms": "1000", "scheduled.rebalance.max.delay.ms": "5000"}
PROTOCOLS = pytest.mark.parametrize("protocol", ["sessioned", "eager"])  # compatible: sessioned minus signing


def _mongo_config(stack: Any, prefix: str, collection: str) -> dict[str, str]:
    return {"connector.class": "io.debezium.connector.mongodb.MongoDbConnector",
            "mongodb.connection.string": stack.mongo_uri, "topic.prefix": prefix,
            "collection.include.list": collection}


def _wait(predicate: Callable[[], bool], what: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def _retrying(call: Callable[[], httpx.Response], timeout: float = 60) -> httpx.Response:
    """A REST write, repeated while the group rebalances (Connect answers 409 then, and clients retry)."""
    deadline = time.monotonic() + timeout
    while True:
        reply = call()
        if reply.status_code != 409 or time.monotonic() > deadline:
            return reply
        time.sleep(0.5)


def _running_everywhere(workers: list[Worker], names: list[str]) -> bool:
    for worker in workers:
        for name in names:
            reply = worker.http.get(f"/connectors/{name}/status")
            if reply.status_code != 200:
                return False
            status = reply.json()
            if status["connector"]["state"] != "RUNNING" or not status["tasks"] \
                    or any(t["state"] != "RUNNING" for t in status["tasks"]):
                return False
    return True


@PROTOCOLS
def test_three_workers_share_connectors_and_forward_writes(worker_factory: Callable[..., Worker], stack: Any,
                                                           mongo: Any, protocol: str) -> None:
    workers = [worker_factory({**GROUP, "connect.protocol": protocol}) for _ in range(3)]
    db = unique("dist_")
    names = [unique(f"dist{i}-") for i in range(3)]
    for worker, name in zip(workers, names, strict=True):  # each POST lands on a different worker
        reply = _retrying(partial(worker.http.post, "/connectors",
                                  json={"name": name, "config": _mongo_config(stack, name, f"{db}.c")}))
        assert reply.status_code == 201, reply.text
        assert reply.json()["name"] == name
    _wait(lambda: _running_everywhere(workers, names), "every connector RUNNING on every worker's view")

    statuses = [[w.http.get(f"/connectors/{n}/status").json() for n in names] for w in workers]
    assert statuses[0] == statuses[1] == statuses[2], "every worker reports the same assignment"
    owners = {s["connector"]["worker_id"] for s in statuses[0]} | {t["worker_id"] for s in statuses[0]
                                                                   for t in s["tasks"]}
    assert owners == {w.url.removeprefix("http://") for w in workers}, "work is spread over the three workers"

    for worker in workers:  # config updates and deletes sent to any worker are applied by the leader
        name = names[0]
        config = {**_mongo_config(stack, name, f"{db}.c"), "heartbeat.interval.ms": str(1000 + len(worker.url))}
        reply = _retrying(partial(worker.http.put, f"/connectors/{name}/config", json=config))
        assert reply.status_code == 200, reply.text
        assert workers[0].http.get(f"/connectors/{name}/config").json()["heartbeat.interval.ms"] == \
            config["heartbeat.interval.ms"]
    assert _retrying(lambda: workers[2].http.delete(f"/connectors/{names[2]}")).status_code == 204
    _wait(lambda: all(w.http.get(f"/connectors/{names[2]}").status_code == 404 for w in workers), "delete seen")


@PROTOCOLS
def test_a_killed_worker_hands_its_task_over_without_losing_changes(worker_factory: Callable[..., Worker],
                                                                      stack: Any, mongo: Any, protocol: str) -> None:
    workers = [worker_factory({**GROUP, "connect.protocol": protocol}) for _ in range(3)]
    db, name = unique("distkill_"), unique("distkill-")
    reply = _retrying(lambda: workers[1].http.post(
        "/connectors", json={"name": name, "config": _mongo_config(stack, name, f"{db}.c")}))
    assert reply.status_code == 201, reply.text
    _wait(lambda: _running_everywhere(workers, [name]), f"{name} RUNNING")
    owner_id = workers[0].http.get(f"/connectors/{name}/status").json()["tasks"][0]["worker_id"]
    owner = next(w for w in workers if w.url.endswith(owner_id))
    survivors = [w for w in workers if w is not owner]

    collection = mongo[db].c
    collection.insert_many([{"_id": n, "phase": "before"} for n in range(500)])
    owner.process.kill()
    collection.insert_many([{"_id": n, "phase": "after"} for n in range(500, 1000)])

    def moved() -> bool:
        reply = survivors[0].http.get(f"/connectors/{name}/status")
        if reply.status_code != 200:
            return False
        tasks = reply.json()["tasks"]
        return bool(tasks) and tasks[0]["state"] == "RUNNING" and tasks[0]["worker_id"] != owner_id
    _wait(moved, "the task to move to a surviving worker", timeout=120)
    collection.insert_many([{"_id": n, "phase": "moved"} for n in range(1000, 1200)])

    records = read_topic(stack.kafka_bootstrap, f"{name}.{db}.c", 1200, timeout=120)
    seen = {json.loads(payload(r.value)["after"])["_id"] for r in records if r.value is not None}
    assert seen == set(range(1200)), f"missing: {sorted(set(range(1200)) - seen)[:20]}"


def test_a_worker_with_another_config_topic_is_refused_and_the_group_goes_on(
        worker_factory: Callable[..., Worker], stack: Any) -> None:
    from stack.procs import StackError

    first = worker_factory(GROUP)
    with pytest.raises(StackError) as refused:
        worker_factory({**GROUP, "config.storage.topic": unique("other-configs-")})
    assert "every worker of a group must use the same config, offset and status topics" in str(refused.value)
    name = unique("after-refusal-")
    config = {"connector.class": "FileStreamSource", "file": "/dev/null", "topic": name}
    create_connector(first, name, config, wait_running=False)
    _wait(lambda: first.http.get(f"/connectors/{name}/status").status_code == 200, "the group to keep working")


def test_a_worker_that_cannot_reach_kafka_exits_with_a_clear_message(tmp_path: Any) -> None:
    import subprocess
    import sys

    from stack import free_port
    from stack.worker import distributed_properties

    # Java's worker gives up after its admin's default.api.timeout.ms (60 s by default)
    props = {**distributed_properties("127.0.0.1:1", free_port()), "default.api.timeout.ms": "5000"}
    path = tmp_path / "worker.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    done = subprocess.run([sys.executable, "-m", "connect", "distributed", str(path)], capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 1
    assert "Cannot reach Kafka at 127.0.0.1:1" in done.stderr + done.stdout


def test_forwarding_hops_and_graceful_leave(worker_factory: Callable[..., Worker], stack: Any) -> None:
    slow_session = {"session.timeout.ms": "45000", "heartbeat.interval.ms": "1000",
                    "scheduled.rebalance.max.delay.ms": "3000"}
    workers = [worker_factory(slow_session) for _ in range(2)]
    name = unique("hops-")
    config = {"connector.class": "FileStreamSource", "file": "/dev/null", "topic": unique("hops-topic-")}
    assert _retrying(lambda: workers[0].http.post("/connectors", json={"name": name, "config": config})
                     ).status_code == 201
    _wait(lambda: _running_everywhere(workers, [name]), f"{name} RUNNING")
    leader_urls = set()
    for worker in workers:  # a request that would need one more hop is Connect's 409
        reply = worker.http.put(f"/connectors/{name}/config?forward=false", json=config)
        if reply.status_code == 409:
            assert reply.json()["message"] == ("Cannot complete request because of a conflicting operation (e.g. "
                                               "worker rebalance)")
        else:
            assert reply.status_code == 200, reply.text
            leader_urls.add(worker.url)
    assert len(leader_urls) == 1, "exactly one worker (the leader) serves a write without forwarding"
    leader = next(w for w in workers if w.url in leader_urls)
    unsigned = leader.http.post(f"/connectors/{name}/tasks?forward=false", json=[{"task.class": "x"}])
    assert unsigned.status_code == 400 and unsigned.json()["message"] == "Internal request missing required signature"
    forged = leader.http.post(f"/connectors/{name}/tasks?forward=false", json=[{"task.class": "x"}], headers={
        "X-Connect-Authorization": "AAAA", "X-Connect-Request-Signature-Algorithm": "HmacSHA256"})
    assert forged.status_code == 403

    owner_id = workers[0].http.get(f"/connectors/{name}/status").json()["tasks"][0]["worker_id"]
    owner = next(w for w in workers if w.url.endswith(owner_id))
    survivor = next(w for w in workers if w is not owner)
    started = time.monotonic()
    owner.process.stop(timeout=30)  # SIGTERM: tasks stopped, offsets flushed, the group left at once

    def moved() -> bool:
        tasks = survivor.http.get(f"/connectors/{name}/status").json()["tasks"]
        return bool(tasks) and tasks[0]["state"] == "RUNNING" and tasks[0]["worker_id"] != owner_id
    _wait(moved, "the task to move after a graceful stop", timeout=40)
    assert time.monotonic() - started < 40, "a graceful leave does not wait for the 45 s session timeout"

"""The leader's transactional writes to the config topic (KIP-618; Connect's ``KafkaConfigBackingStore`` fencable
producer, ``transactional.id`` ``connect-cluster-<group.id>``), with ``exactly.once.source.support`` ``preparing``
or ``enabled``: each new leader fences the previous one, so a zombie leader cannot write connector configs."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest

from compat.java_connect import JavaConnect
from connect import clients
from connect.runtime import exactly_once
from connect.runtime.rdkafka_producer import RdKafkaProducer
from connect.storage.config_state import TargetState
from connect.storage.kafka import KafkaConfigStore, PrivilegedWriteError
from connect.storage.kafka_log import TopicSpec, ensure_compacted_topic
from connect.test_hooks import ENV
from stack import free_port
from stack.worker import ConnectWorker, distributed_properties
from tests.integration.support import Worker, create_connector, read_to_end, unique

pytestmark = pytest.mark.integration

FAST_GROUP = {"session.timeout.ms": "6000", "heartbeat.interval.ms": "1000", "scheduled.rebalance.max.delay.ms": "0"}


def _store(bootstrap: str, topic: str, group: str, member: str) -> KafkaConfigStore:
    settings = {"bootstrap.servers": bootstrap}
    leader = exactly_once.leader_producer_settings(settings, group, f"{member}-configs-leader")
    return KafkaConfigStore(topic, {**settings, "isolation.level": "read_committed"},
                            partial(RdKafkaProducer, leader))


def test_a_new_leader_fences_the_config_writes_of_the_previous_one(stack: Any) -> None:
    group, topic = unique("leaders-"), unique("leaders-configs-")
    admin = clients.admin({"bootstrap.servers": stack.kafka_bootstrap})
    try:
        ensure_compacted_topic(admin, TopicSpec(topic, 1, 1, {}))
    finally:
        admin.close()
    old, new = (_store(stack.kafka_bootstrap, topic, group, m) for m in ("old", "new"))
    old.start()
    new.start()
    try:
        assert old.needs_write_privileges()
        old.claim_write_privileges()
        old.put_connector_config("first", {"connector.class": "FileStreamSource"})
        new.claim_write_privileges()  # the same transactional.id: the old leader's producer is fenced
        with pytest.raises(PrivilegedWriteError, match="Failed to write to config topic"):
            old.put_connector_config("zombie", {"connector.class": "FileStreamSource"})
        assert old.take_write_fenced() and not old.take_write_fenced()
        assert old.needs_write_privileges()  # it gave up its producer: it must claim again, if still leader
        new.put_connector_config("second", {"connector.class": "FileStreamSource"})
        old.put_target_state("second", TargetState.PAUSED)  # any worker may write a target state, as in Connect
        keys = [k for k, _ in read_to_end(stack.kafka_bootstrap, topic)]
        # not even as an aborted record: the fenced producer sent nothing
        assert keys == [b"connector-first", b"connector-second", b"target-state-second"]
        new.refresh(30)
        assert sorted(new.snapshot().connector_configs) == ["first", "second"]
    finally:
        old.stop()
        new.stop()


def _post_until_created(http: httpx.Client, name: str, config: dict[str, str], timeout: float = 120) -> None:
    """``POST /connectors`` until a 201: while leadership moves, a worker answers 409 or forwards to a leader
    that does not answer (the request then times out)."""
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        try:
            reply = http.post("/connectors", json={"name": name, "config": config}, timeout=10)
            if reply.status_code == 201:
                return
            last = (reply.status_code, reply.text)
        except httpx.HTTPError as exc:
            last = exc
        time.sleep(0.5)
    raise AssertionError(f"POST /connectors {name} never succeeded: {last}")


def _tasks_stored(client: httpx.Client, *names: str) -> None:
    """Wait until ``client``'s worker shows task configs for every connector of ``names``: their writes are done,
    so the next config write the leader makes is the one a test holds (not a late task-config write)."""
    deadline = time.monotonic() + 60
    for name in names:
        while not ((reply := client.get(f"/connectors/{name}/tasks")).status_code == 200 and reply.json()):
            assert time.monotonic() < deadline, f"no task configs of {name}: {reply.status_code} {reply.text}"
            time.sleep(0.2)


@contextlib.contextmanager
def _frozen_in_config_write(client: httpx.Client, holds: Path, pid: int, name: str,
                            config: dict[str, str]) -> Iterator[list[httpx.Response | Exception]]:
    """POST connector ``name`` to the leader ``client`` (process ``pid``) held inside its config write, SIGSTOP the
    leader there; on leaving, release and SIGCONT it and yield its one reply (a response or an exception)."""
    (holds / "config-write.hold").touch()
    replies: list[httpx.Response | Exception] = []

    def post() -> None:
        try:
            replies.append(client.post("/connectors", json={"name": name, "config": config}, timeout=300))
        except Exception as exc:  # noqa: BLE001 - reported by the caller's assertion
            replies.append(exc)

    poster = threading.Thread(target=post)
    poster.start()
    deadline = time.monotonic() + 60
    while not (holds / "config-write.reached").exists():
        assert time.monotonic() < deadline, "the leader never reached its config write"
        time.sleep(0.05)
    os.kill(pid, signal.SIGSTOP)
    try:
        yield replies
    finally:
        (holds / "config-write.hold").unlink()
        os.kill(pid, signal.SIGCONT)
        poster.join(timeout=300)


@pytest.mark.parametrize("support", ["preparing", "enabled"])
def test_a_leader_frozen_while_leadership_moved_cannot_write_configs(support: str,
                                                                     worker_factory: Callable[..., Worker],
                                                                     stack: Any, tmp_path: Path) -> None:
    """The leader is held inside a config write (a test hook, right before its transaction begins), frozen with
    SIGSTOP until the other worker leads and has claimed the config topic, then resumed: its write is refused,
    nothing of it reaches the config topic, and it carries on as a follower."""
    holds = tmp_path / "holds"
    holds.mkdir()
    extra = {**FAST_GROUP, "exactly.once.source.support": support}
    first = worker_factory(extra, env={ENV: str(holds)})
    config = {"connector.class": "FileStreamSource", "file": str(tmp_path / "none.txt"), "topic": unique("t-")}
    before, probe = unique("before-"), unique("probe-")
    create_connector(first, before, config, wait_running=False)
    second = worker_factory(extra)
    _post_until_created(second.http, probe, config)  # forwarded to the leader: the second worker has joined
    _tasks_stored(first.http, before, probe)

    zombie = unique("zombie-")
    pid = first.process.pid
    assert pid is not None
    with _frozen_in_config_write(first.http, holds, pid, zombie, config) as replies:
        # the second worker leads once the frozen one left the group: its own write proves it claimed the topic
        _post_until_created(second.http, unique("after-"), config)
    assert len(replies) == 1 and isinstance(replies[0], httpx.Response), replies
    assert replies[0].status_code == 500, replies[0].text
    assert "Failed to write to config topic" in replies[0].json()["message"]
    keys = {k for k, _ in read_to_end(stack.kafka_bootstrap, f"{first.process.properties['group.id']}-configs")}
    assert f"connector-{zombie}".encode() not in keys
    # the former leader rejoined as a follower: its requests go to the new leader
    later = unique("later-")
    _post_until_created(first.http, later, config)
    for worker in (first, second):  # a follower reads what the leader wrote a moment later
        deadline = time.monotonic() + 60
        while later not in (names := worker.http.get("/connectors").json()):
            assert time.monotonic() < deadline, f"{later} never listed by {worker.url}: {names}"
            time.sleep(0.3)
        assert zombie not in names


def test_a_java_connect_leader_fences_our_frozen_leader(stack: Any, tmp_path: Path) -> None:
    """Our worker leads a group that a real Java Connect 4.3 worker joins (``enabled``): Java reads the configs our
    leader wrote in its transactions, and once our leader froze inside a config write, Java's leader claims the
    same ``connect-cluster-<group.id>`` transactional id: our resumed leader's write is refused, and both workers
    then show the same connectors and configs."""
    holds = tmp_path / "holds"
    holds.mkdir()
    group = unique("mixed-")
    extra = {**FAST_GROUP, "exactly.once.source.support": "enabled"}
    port, java_port = free_port(), free_port()
    ours = ConnectWorker(tmp_path / "ours", port, distributed_properties(stack.kafka_bootstrap, port, group_id=group,
                                                                         extra=extra), env={ENV: str(holds)})
    java = JavaConnect(tmp_path / "java", java_port,
                       distributed_properties(stack.kafka_bootstrap, java_port, group_id=group, extra=extra))
    ours.start()
    try:
        leader = Worker(ours)
        config = {"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
                  "file": str(tmp_path / "none.txt"), "topic": unique("t-")}
        before = unique("before-")
        create_connector(leader, before, config, wait_running=False)
        java.start()
        follower = httpx.Client(base_url=java.address, timeout=60)
        probe = unique("probe-")
        _post_until_created(follower, probe, config)  # Java forwards it to our leader: it has joined
        _tasks_stored(leader.http, before, probe)
        assert follower.get(f"/connectors/{before}/config").json() == {**config, "name": before}

        zombie = unique("zombie-")
        pid = ours.pid
        assert pid is not None
        with _frozen_in_config_write(leader.http, holds, pid, zombie, config) as replies:
            after = unique("after-")
            _post_until_created(follower, after, config)  # written by Java as the new leader
        assert len(replies) == 1 and isinstance(replies[0], httpx.Response), replies
        assert replies[0].status_code == 500, replies[0].text
        assert f"connector-{zombie}".encode() not in {k for k, _ in read_to_end(stack.kafka_bootstrap,
                                                                                f"{group}-configs")}
        deadline = time.monotonic() + 120
        while sorted(leader.http.get("/connectors").json()) != sorted(follower.get("/connectors").json()):
            assert time.monotonic() < deadline, "the two workers never showed the same connectors"
            time.sleep(0.5)
        names = leader.http.get("/connectors").json()
        assert after in names and zombie not in names
        for name in names:
            assert leader.http.get(f"/connectors/{name}/config").json() == \
                follower.get(f"/connectors/{name}/config").json()
    finally:
        java.stop(timeout=30)
        ours.stop(timeout=30)

"""The control plane without services: a herder over in-memory config and status stores, a file offset store and
an in-memory producer, running the FileStreamSource connector; and the reconciler under a membership that owns
only part of the work (what a distributed worker sees)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from connect.api.errors import AlreadyExistsError, NotFoundError
from connect.api.metrics import Metric
from connect.runtime.herder import Herder
from connect.runtime.membership import RebalanceListener
from connect.runtime.reconciler import Reconciler
from connect.runtime.rest_errors import BadRequestError
from connect.runtime.task_contracts import SourceProducer
from connect.runtime.worker import Worker
from connect.runtime.worker_config import WorkerConfig
from connect.storage.config_state import ConfigState, ConnectorTaskId
from connect.storage.file import FileOffsetStore
from connect.storage.memory import MemoryConfigStore, MemoryStatusStore

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"


class MemoryProducer:
    """Records what a task sends; every send succeeds when dispatched."""

    def __init__(self, sent: list[tuple[str, bytes | None]]) -> None:
        self._sent = sent
        self._pending: list[Callable[[BaseException | None], Any]] = []
        self._lock = threading.Lock()

    def send(self, topic: str, *, value: bytes | None, key: bytes | None, headers: list[tuple[str, bytes]],
             partition: int | None, timestamp_ms: int | None,
             on_done: Callable[[BaseException | None], Any] | None = None) -> None:
        with self._lock:
            self._sent.append((topic, value))
            if on_done is not None:
                self._pending.append(on_done)

    @staticmethod
    def failure(error: Any) -> BaseException:
        """Failures are exceptions already."""
        return error if isinstance(error, BaseException) else RuntimeError(error)

    def dispatch(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, []
        for on_done in pending:
            on_done(None)

    def metrics(self) -> list[Metric]:
        return []

    def flush(self, timeout: float | None = None) -> None:
        self.dispatch()

    def close(self, timeout: float | None = None) -> None:
        self.dispatch()


def _wait(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


@dataclass
class ControlPlane:
    herder: Herder
    worker: Worker
    sent: list[tuple[str, bytes | None]]
    offsets: FileOffsetStore

    def result(self, future: Future[Any]) -> Any:
        return future.result(timeout=30)

    def create(self, name: str, file: Path, topic: str, **extra: str) -> None:
        config = {"connector.class": FILE_SOURCE, "name": name, "file": str(file), "topic": topic, "tasks.max": "1",
                  "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                  "value.converter": "org.apache.kafka.connect.storage.StringConverter", **extra}
        self.result(self.herder.put_connector_config(name, config, allow_replace=False))

    def states(self, name: str) -> tuple[str, list[str]]:
        """The connector's and its tasks' states; ("", []) until the connector has written its first status (the
        config is written before the connector starts, as in Connect, whose status endpoint answers 404 then)."""
        try:
            status = self.herder.connector_status(name)
        except NotFoundError:
            return "", []
        return status.connector.state, [t.state for t in status.tasks]

    def values(self, topic: str) -> list[str]:
        return [v.decode() for t, v in list(self.sent) if t == topic and v is not None]


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[ControlPlane]:
    props = {"bootstrap.servers": "unused:9092", "offset.storage.file.filename": str(tmp_path / "offsets"),
             "offset.flush.interval.ms": "50"}
    config, raw = WorkerConfig.parse(props, distributed=False)
    offsets = FileOffsetStore(tmp_path / "offsets")
    configs, statuses = MemoryConfigStore(), MemoryStatusStore()
    offsets.start()
    sent: list[tuple[str, bytes | None]] = []

    def producer(_servers: str, _client_id: str, _overrides: dict[str, str]) -> SourceProducer:
        return MemoryProducer(sent)

    holder: list[Herder] = []
    worker = Worker(config, raw, offsets, statuses, producer_factory=producer,
                    on_reconfigure=lambda name: holder[0].request_task_reconfiguration(name))
    herder = Herder(worker, configs, statuses)
    holder.append(herder)
    herder.start()
    assert herder.ready.wait(30)
    yield ControlPlane(herder, worker, sent, offsets)
    herder.stop(30)
    offsets.stop()


def test_create_runs_the_connector_and_its_task(plane: ControlPlane, tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("a\nb\n")
    plane.create("files", source, "lines")
    _wait(lambda: plane.values("lines") == ["a", "b"], "both lines sent")
    assert plane.states("files") == ("RUNNING", ["RUNNING"])
    assert plane.herder.connectors() == ["files"]
    info = plane.herder.connector_info("files")
    assert info.type == "source" and [t.task for t in info.tasks] == [0]
    assert plane.herder.task_infos("files")[0].config["task.class"].endswith("FileStreamSourceTask")
    with pytest.raises(AlreadyExistsError):
        plane.create("files", source, "lines")


def test_pause_resume_and_config_update(plane: ControlPlane, tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("a\n")
    plane.create("files", source, "lines")
    _wait(lambda: plane.values("lines") == ["a"], "the first line")
    plane.result(plane.herder.pause_connector("files"))
    _wait(lambda: plane.states("files") == ("PAUSED", ["PAUSED"]), "PAUSED")
    plane.result(plane.herder.resume_connector("files"))
    _wait(lambda: plane.states("files") == ("RUNNING", ["RUNNING"]), "RUNNING again")
    before = plane.worker.tasks[ConnectorTaskId("files", 0)]
    plane.result(plane.herder.patch_connector_config("files", {"topic": "other"}))
    # the write comes after the task was restarted with the new config (else the old task may send it)
    _wait(lambda: plane.worker.tasks.get(ConnectorTaskId("files", 0)) not in (None, before), "the task restarted")
    with source.open("a") as out:
        out.write("b\n")
    _wait(lambda: plane.values("other") == ["b"], "the next line on the new topic, from the committed offset")
    assert plane.herder.task_infos("files")[0].config["topic"] == "other"


def test_stop_keeps_offsets_and_delete_forgets_the_connector(plane: ControlPlane, tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("a\n")
    plane.create("files", source, "lines")
    _wait(lambda: any(b"files" in key for key, _ in plane.offsets.items()), "an offset flushed")
    plane.result(plane.herder.stop_connector("files"))
    _wait(lambda: plane.states("files") == ("STOPPED", []), "STOPPED with no task")
    assert plane.herder.task_infos("files") == [] and not plane.worker.tasks
    assert any(b"files" in key for key, _ in plane.offsets.items())
    plane.result(plane.herder.delete_connector("files"))
    _wait(lambda: plane.herder.connectors() == [], "the connector gone")
    _wait(lambda: plane.herder.status_store.connector("files") is None, "its status tombstoned")
    with pytest.raises(NotFoundError):
        plane.herder.connector_status("files")
    with pytest.raises(NotFoundError):
        plane.result(plane.herder.delete_connector("files"))


def test_a_deleted_connector_is_gone_from_reads_when_the_delete_returns(plane: ControlPlane, tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("a\n")
    plane.create("files", source, "lines")
    plane.create("more", source, "lines")
    _wait(lambda: plane.states("more")[0] == "RUNNING", "the second connector running")
    plane.result(plane.herder.delete_connector("more"))
    assert plane.herder.connectors() == ["files"]  # as Connect answers a GET right after the DELETE
    with pytest.raises(NotFoundError):
        plane.herder.connector_info("more")


def test_restart_task_and_connector(plane: ControlPlane, tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("a\n")
    plane.create("files", source, "lines")
    _wait(lambda: plane.states("files") == ("RUNNING", ["RUNNING"]), "RUNNING")
    first = plane.worker.tasks[ConnectorTaskId("files", 0)]
    plane.result(plane.herder.restart_task("files", 0))
    assert plane.worker.tasks[ConnectorTaskId("files", 0)] is not first
    connector = plane.worker.connectors["files"][0]
    assert plane.result(plane.herder.restart_connector("files", include_tasks=False, only_failed=False)) is None
    assert plane.worker.connectors["files"][0] is not connector
    with pytest.raises(NotFoundError):
        plane.result(plane.herder.restart_task("files", 7))


def test_restart_with_tasks_answers_from_its_plan(plane: ControlPlane, tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("a\n")
    plane.create("files", source, "lines")
    _wait(lambda: plane.states("files") == ("RUNNING", ["RUNNING"]), "RUNNING")
    only_failed = plane.result(plane.herder.restart_connector("files", include_tasks=True, only_failed=True))
    assert (only_failed.connector.state, [t.state for t in only_failed.tasks]) == ("RUNNING", ["RUNNING"])
    both = plane.result(plane.herder.restart_connector("files", include_tasks=True, only_failed=False))
    assert (both.connector.state, [t.state for t in both.tasks]) == ("RESTARTING", ["RESTARTING"])
    assert both.connector.worker_id == plane.worker.worker_id and both.tasks[0].id == 0
    _wait(lambda: plane.states("files") == ("RUNNING", ["RUNNING"]), "RUNNING after the restart")


def test_invalid_config_is_a_bad_request_naming_the_key(plane: ControlPlane, tmp_path: Path) -> None:
    with pytest.raises(BadRequestError, match="topic"):
        plane.result(plane.herder.put_connector_config(
            "bad", {"connector.class": FILE_SOURCE, "name": "bad", "file": str(tmp_path / "x")}, allow_replace=False))
    with pytest.raises(BadRequestError, match="contains no connector type"):
        plane.herder.put_connector_config("bad", {"name": "bad"}, allow_replace=False)
    assert plane.herder.connectors() == []


class PartialMembership:
    """A follower of a group that runs only the tasks it is given, and sends task configs to the leader."""

    poll_timeout = 0.05
    rebalancing = False
    leads = False

    def __init__(self, owned_tasks: set[ConnectorTaskId], connectors: set[str]) -> None:
        self.owned_tasks = owned_tasks
        self.connectors = connectors
        self.published: list[tuple[str, list[dict[str, str]]]] = []

    def join(self, stop: threading.Event, listener: RebalanceListener) -> None:
        """Already assigned."""

    def tick(self, listener: RebalanceListener) -> None:
        """No rebalance in these tests."""

    def owns_connector(self, name: str) -> bool:
        return name in self.connectors

    def owns_task(self, task_id: ConnectorTaskId) -> bool:
        return task_id in self.owned_tasks

    def require_leader(self) -> None:
        raise BadRequestError("not the leader")

    def require_owner_or_leader(self, item: str | ConnectorTaskId) -> bool:
        return self.owns_connector(item) if isinstance(item, str) else self.owns_task(item)

    def publish_task_configs(self, name: str, configs: list[dict[str, str]], snapshot: ConfigState) -> None:
        self.published.append((name, configs))

    def after_reconcile(self, snapshot: ConfigState) -> None:
        """Nothing to rebalance."""

    def verify_internal_request(self, body: bytes, headers: Mapping[str, str]) -> None:
        """Accepts every request."""

    def generation(self) -> int:
        return 3

    def stop(self) -> None:
        """Nothing to leave."""


def test_reconciler_runs_only_the_owned_share_and_stops_what_is_revoked(tmp_path: Path) -> None:
    config, raw = WorkerConfig.parse({"bootstrap.servers": "unused:9092",
                                      "offset.storage.file.filename": str(tmp_path / "offsets")}, distributed=False)
    offsets, configs, statuses = FileOffsetStore(tmp_path / "offsets"), MemoryConfigStore(), MemoryStatusStore()
    offsets.start()
    sent: list[tuple[str, bytes | None]] = []
    worker = Worker(config, raw, offsets, statuses, producer_factory=lambda *_: MemoryProducer(sent))
    membership = PartialMembership({ConnectorTaskId("a", 0)}, {"a"})
    reconciler = Reconciler(worker, configs, statuses, membership)
    for name in ("a", "b"):
        (tmp_path / name).write_text("x\n")
        configs.put_connector_config(name, {"connector.class": FILE_SOURCE, "name": name, "file": str(tmp_path / name),
                                            "topic": name, "tasks.max": "1"}, None)
    try:
        reconciler.reconcile()
        # a follower owning connector "a" computes its task configs and sends them to the leader
        assert [name for name, _ in membership.published] == ["a"] and set(worker.connectors) == {"a"}
        configs.put_task_configs("a", membership.published[0][1])
        configs.put_task_configs("b", [{"connector.class": FILE_SOURCE, "file": str(tmp_path / "b"), "topic": "b",
                                        "task.class": "org.apache.kafka.connect.file.FileStreamSourceTask"}])
        reconciler.reconcile()
        assert set(worker.tasks) == {ConnectorTaskId("a", 0)}
        # the task's thread writes its status as it starts
        _wait(lambda: statuses.task(ConnectorTaskId("a", 0)) is not None, "the task's status")
        status = statuses.task(ConnectorTaskId("a", 0))
        assert status is not None and status.worker_id == worker.worker_id
        membership.owned_tasks, membership.connectors = {ConnectorTaskId("b", 0)}, {"b"}
        reconciler.stop_unowned()
        assert not worker.tasks and not worker.connectors
        reconciler.reconcile()
        assert set(worker.tasks) == {ConnectorTaskId("b", 0)} and set(worker.connectors) == {"b"}
        reconciler.revoke_all()
        assert not worker.tasks and not worker.connectors
    finally:
        worker.stop(10)
        offsets.stop()

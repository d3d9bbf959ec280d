"""Store interfaces and the parts shared by every backend (Connect's ``*BackingStore``)."""

from __future__ import annotations

import copy
import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Protocol

from connect.storage import codec
from connect.storage.config_state import ConfigState, ConnectorTaskId, TargetState

log = logging.getLogger(__name__)

Listener = Callable[[], None]
Interrupt = Callable[[], str | None]
"""Asked while a store waits on Kafka: a reason to give the wait up now (None: keep waiting)."""


@dataclass(frozen=True, slots=True)
class Status:
    """A connector or task status record: ``{"state","trace","worker_id","generation","version"}``."""

    state: str
    trace: str | None
    worker_id: str
    generation: int
    version: str | None = None

    def to_json(self) -> bytes:
        """The status-topic value bytes, in Connect's field order (``version``: the plugin's, since 4.x)."""
        return codec.dumps({"state": self.state, "trace": self.trace, "worker_id": self.worker_id,
                            "generation": self.generation, "version": self.version})

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Status:
        """Parse a status-topic value."""
        version = data.get("version")
        return cls(str(data["state"]), data.get("trace"), str(data.get("worker_id", "")),
                   int(data.get("generation", 0)), None if version is None else str(version))


def _never() -> str | None:
    return None


class ConfigStore(ABC):
    """Connector configs, task configs and target states, applied through :class:`ConfigState`."""

    def __init__(self) -> None:
        self._state = ConfigState()
        self._lock = threading.Lock()
        self._listener: Listener | None = None
        self._interrupt: Interrupt = _never

    def set_interrupt(self, interrupt: Interrupt) -> None:
        """Give up a blocking write or read to the end as soon as ``interrupt`` names a reason (a distributed
        worker cut off from its group: its revocation must not wait behind the write's own bound)."""
        self._interrupt = interrupt

    def set_listener(self, listener: Listener) -> None:
        """Call ``listener`` (on any thread) whenever the state changed."""
        self._listener = listener

    def snapshot(self) -> ConfigState:
        """A private copy of the current state."""
        with self._lock:
            return copy.deepcopy(self._state)

    def take_restart_requests(self) -> list[Any]:
        """Restart requests read since the last call."""
        with self._lock:
            requests, self._state.restart_requests = self._state.restart_requests, []
        return requests

    def take_logger_levels(self) -> list[tuple[str, str]]:
        """Cluster-scope log levels (``logger-cluster-<namespace>``) read since the last call."""
        with self._lock:
            levels, self._state.logger_levels = self._state.logger_levels, []
        return levels

    def put_logger_level(self, namespace: str, level: str) -> None:
        """Write a cluster-scope log level (KIP-976)."""
        self._write([(f"logger-cluster-{namespace}", {"level": level})], privileged=False)

    def _apply(self, key: str, value: bytes | None, offset: int) -> None:
        with self._lock:
            self._state.apply(key, codec.loads(value), offset)
        if self._listener is not None:
            self._listener()

    def put_connector_config(self, name: str, props: Mapping[str, str],
                             target_state: TargetState | None = None) -> None:
        """Write a connector config, preceded by its target state when one is given (one privileged write)."""
        records: list[tuple[str, dict[str, Any] | None]] = []
        if target_state is not None:
            records.append(_target_state_record(name, target_state))
        records.append((f"connector-{name}", {"properties": dict(props)}))
        self._write(records)

    def remove_connector_config(self, name: str) -> None:
        """Delete a connector: tombstones for its config and target state."""
        self._write([(f"connector-{name}", None), (f"target-state-{name}", None)])

    def put_target_state(self, name: str, state: TargetState) -> None:
        """Write a target state (any worker may: not a privileged write, as in Connect)."""
        self._write([_target_state_record(name, state)], privileged=False)

    def put_task_configs(self, name: str, configs: list[dict[str, str]]) -> None:
        """Write task configs then the commit record that applies them, read back once (Connect's
        ``putTaskConfigs``: two privileged sends, the task configs then the commit, and one read to the end)."""
        records: list[tuple[str, dict[str, Any] | None]] = [
            (f"task-{name}-{i}", {"properties": cfg}) for i, cfg in enumerate(configs)
        ]
        self._write(records, read_back=False)
        self._write([(f"commit-{name}", {"tasks": len(configs)})])

    def put_task_count_record(self, name: str, count: int) -> None:
        """Write ``tasks-fencing-<name>``: the task producers to fence before the next generation (KIP-618)."""
        self._write([(f"tasks-fencing-{name}", {"task-count": count})])

    def put_session_key(self, key: bytes, algorithm: str, created_ms: int) -> None:
        """Write a new session key (leader only, ``sessioned`` protocol)."""
        import base64

        self._write([("session-key", {"key": base64.b64encode(key).decode(), "algorithm": algorithm,
                                      "creation-timestamp": created_ms})])

    def put_restart_request(self, name: str, include_tasks: bool, only_failed: bool) -> None:
        """Write a KIP-745 restart request."""
        self._write([(f"restart-connector-{name}", {"include-tasks": include_tasks, "only-failed": only_failed})])

    @abstractmethod
    def _write(self, records: list[tuple[str, dict[str, Any] | None]], *, privileged: bool = True,
               read_back: bool = True) -> None:
        """Durably write ``records`` in order and apply them before returning (unless not ``read_back``: then the
        next write's read applies them too). ``privileged`` writes are the leader's (connector and task configs,
        task count records, session keys, restart requests): with a fencable writer they go in one transaction of
        the leader's transactional producer (Connect's ``sendPrivileged``)."""

    def claim_write_privileges(self) -> None:  # noqa: B027 - only stores with a fencable writer have privileges
        """Become the config topic's only privileged writer (the leader, under exactly-once source support)."""

    def relinquish_write_privileges(self) -> None:  # noqa: B027 - only stores with a fencable writer have privileges
        """Give up the privileges (this worker no longer leads)."""

    def needs_write_privileges(self) -> bool:
        """True when privileged writes need :meth:`claim_write_privileges` first."""
        return False

    def take_write_fenced(self) -> bool:
        """True once after a privileged write failed (the writer was fenced, or lost): the leader must rejoin and
        claim the privileges again if it still leads."""
        return False

    def start(self) -> None:  # noqa: B027 - optional for in-memory stores
        """Load the current state."""

    def refresh(self, timeout: float) -> None:  # noqa: B027 - optional for in-memory stores
        """Catch up with writes made elsewhere."""

    def stop(self, timeout: float = 10.0) -> None:  # noqa: B027 - optional for in-memory stores
        """Release resources; idempotent."""


# the states a worker writes with Connect's ``putSafe`` (see :meth:`StatusStore.superseded`)
SAFE_WRITE_STATES = frozenset({"FAILED", "UNASSIGNED"})


class StatusStore:
    """Connector and task statuses, served locally from a cache."""

    def __init__(self) -> None:
        self._cache: dict[str, Status] = {}
        self._topics: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def connector(self, name: str) -> Status | None:
        """The connector's status, or None."""
        with self._lock:
            return self._cache.get(f"status-connector-{name}")

    def task(self, task_id: ConnectorTaskId) -> Status | None:
        """The task's status, or None."""
        with self._lock:
            return self._cache.get(f"status-task-{task_id}")

    def tasks(self, name: str) -> dict[int, Status]:
        """The statuses of the connector's tasks, by task number."""
        prefix = f"status-task-{name}-"
        with self._lock:
            items = [(k.removeprefix(prefix), v) for k, v in self._cache.items() if k.startswith(prefix)]
        return {int(n): s for n, s in items if n.isdigit()}

    def put_connector(self, name: str, status: Status | None) -> None:
        """Record (or with None, delete) a connector status (a FAILED or UNASSIGNED one only when not
        :meth:`superseded`)."""
        self._put_unless_superseded(f"status-connector-{name}", status)

    def put_task(self, task_id: ConnectorTaskId, status: Status | None) -> None:
        """Record (or with None, delete) a task status (a FAILED or UNASSIGNED one only when not
        :meth:`superseded`)."""
        self._put_unless_superseded(f"status-task-{task_id}", status)

    def _put_unless_superseded(self, key: str, status: Status | None) -> None:
        if status is not None and self.superseded(key, status):
            log.debug("Not writing %s %s of generation %s: another worker's status of a later generation is "
                      "newer", key, status.state, status.generation)
            return
        self._put(key, status)

    def superseded(self, key: str, status: Status) -> bool:
        """Connect's ``putSafe``: a FAILED or UNASSIGNED status (work failing or stopping) from a worker of an older
        generation than another worker's status already known for it. The group has given that work to the other
        worker: a worker cut off from the group, or paused past its session, whose copy then failed (its producer
        fenced) or stopped, must not hide the new owner's state. Checked before writing and on reading back (the
        writer may not have read the newer status yet)."""
        if status.state not in SAFE_WRITE_STATES:
            return False
        with self._lock:
            current = self._cache.get(key)
        return current is not None and current.worker_id != status.worker_id \
            and status.generation < current.generation

    def topics(self, connector: str) -> list[str]:
        """Topics the connector's tasks have produced to (topic tracking), sorted."""
        with self._lock:
            return sorted(name for name, c in self._topics if c == connector)

    def put_topic(self, connector: str, task: int, topic: str, discovered_ms: int) -> None:
        """Record that ``connector`` uses ``topic`` (once)."""
        with self._lock:
            if (topic, connector) in self._topics:
                return
            self._topics.add((topic, connector))
        value = {"topic": {"name": topic, "connector": connector, "task": task, "discoverTimestamp": discovered_ms}}
        self._write_raw(f"status-topic-{topic}:connector-{connector}", codec.dumps(value))

    def reset_topics(self, connector: str) -> None:
        """Forget the topics of ``connector`` (tombstones)."""
        with self._lock:
            gone = [(t, c) for t, c in self._topics if c == connector]
            self._topics.difference_update(gone)
        for topic, _ in gone:
            self._write_raw(f"status-topic-{topic}:connector-{connector}", None)

    def _write_raw(self, key: str, value: bytes | None) -> None:
        """Persist a raw status-topic record (nothing to do in memory)."""

    def _topic_record(self, key: str, value: bytes | None) -> None:
        """Apply a ``status-topic-<topic>:connector-<c>`` record read back from storage."""
        topic, _, connector = key.removeprefix("status-topic-").rpartition(":connector-")
        with self._lock:
            if value is None:
                self._topics.discard((topic, connector))
            else:
                self._topics.add((topic, connector))

    def _cache_put(self, key: str, status: Status | None) -> None:
        with self._lock:
            if status is None:
                self._cache.pop(key, None)
            else:
                self._cache[key] = status

    def _put(self, key: str, status: Status | None) -> None:
        self._cache_put(key, status)

    def start(self) -> None:
        """Load the current statuses."""

    def stop(self, timeout: float = 10.0) -> None:
        """Release resources; idempotent."""


class OffsetStore(Protocol):
    """Raw offset storage: key bytes ``[connector, partition]`` to value bytes."""

    def start(self) -> None:
        """Load stored offsets."""

    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        """Stored values of ``keys`` (missing keys map to None)."""

    def set(self, values: Mapping[bytes, bytes | None]) -> Future[None]:
        """Store ``values``; the future resolves once they are durable."""

    def items(self) -> list[tuple[bytes, bytes]]:
        """Every stored (key, value) pair, tombstones excluded."""

    def stop(self, timeout: float = 10.0) -> None:
        """Release resources; idempotent."""


def _target_state_record(name: str, state: TargetState) -> tuple[str, dict[str, Any]]:
    """``target-state-<name>``: ``state`` downgraded for old workers (STOPPED as PAUSED), ``state.v2`` exact."""
    legacy = TargetState.PAUSED if state is TargetState.STOPPED else state
    return f"target-state-{name}", {"state": legacy.value, "state.v2": state.value}

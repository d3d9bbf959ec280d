"""The cluster's connector configuration, rebuilt from config-topic records (Connect's
``ClusterConfigState`` plus the record parsing of ``KafkaConfigBackingStore``).

Both the in-memory and the Kafka config stores feed :meth:`ConfigState.apply` with
``(key, value)`` records in Connect's formats, so they share one interpretation of them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

log = logging.getLogger(__name__)


class TargetState(StrEnum):
    """What the user asked a connector to be (Connect's ``TargetState``)."""

    STARTED = "STARTED"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"


@dataclass(frozen=True, slots=True, order=True)
class ConnectorTaskId:
    """A task's identity: connector name and task number."""

    connector: str
    task: int

    def __str__(self) -> str:
        return f"{self.connector}-{self.task}"


@dataclass(frozen=True, slots=True)
class RestartRequest:
    """A KIP-745 restart request read from the config topic."""

    connector: str
    include_tasks: bool
    only_failed: bool


@dataclass(frozen=True, slots=True)
class SessionKey:
    """The key workers sign internal requests with (``session-key`` record, ``sessioned`` protocol)."""

    key: bytes
    algorithm: str
    created_ms: int


@dataclass(slots=True)
class ConfigState:
    """Snapshot of connector configs, target states and committed task configs."""

    offset: int = -1
    connector_configs: dict[str, dict[str, str]] = field(default_factory=dict)
    target_states: dict[str, TargetState] = field(default_factory=dict)
    task_configs: dict[ConnectorTaskId, dict[str, str]] = field(default_factory=dict)
    task_counts: dict[str, int] = field(default_factory=dict)
    restart_requests: list[RestartRequest] = field(default_factory=list)
    logger_levels: list[tuple[str, str]] = field(default_factory=list)
    session_key: SessionKey | None = None
    task_count_records: dict[str, int] = field(default_factory=dict)
    """``tasks-fencing-<connector>``: how many task producers the leader fences before the next generation starts."""
    pending_fencing: set[str] = field(default_factory=set)
    """Connectors whose latest task configs came after their latest task count record (KIP-618)."""
    task_config_generations: dict[str, int] = field(default_factory=dict)
    _pending_tasks: dict[str, dict[int, dict[str, str]]] = field(default_factory=dict)

    def connectors(self) -> list[str]:
        """Names of the connectors that exist."""
        return sorted(self.connector_configs)

    def target_state(self, connector: str) -> TargetState:
        """The connector's target state (STARTED when never set)."""
        return self.target_states.get(connector, TargetState.STARTED)

    def tasks(self, connector: str) -> list[ConnectorTaskId]:
        """The connector's committed task ids, in order."""
        return [ConnectorTaskId(connector, i) for i in range(self.task_counts.get(connector, 0))]

    def apply(self, key: str, value: dict[str, Any] | None, offset: int) -> None:
        """Apply one config-topic record at ``offset``."""
        self.offset = offset + 1
        if key.startswith("target-state-"):
            self._apply_target_state(key.removeprefix("target-state-"), value)
        elif key.startswith("connector-"):
            self._apply_connector(key.removeprefix("connector-"), value)
        elif key.startswith("task-"):
            self._apply_task(key.removeprefix("task-"), value)
        elif key.startswith("commit-"):
            self._apply_commit(key.removeprefix("commit-"), value)
        elif key.startswith("restart-connector-") and value is not None:
            self.restart_requests.append(RestartRequest(
                key.removeprefix("restart-connector-"),
                bool(value.get("include-tasks", False)),
                bool(value.get("only-failed", False)),
            ))
        elif key.startswith("tasks-fencing-"):
            self._apply_task_count_record(key.removeprefix("tasks-fencing-"), value)
        elif key == "session-key" and value is not None:
            self._apply_session_key(value)
        elif key.startswith("logger-cluster-") and value is not None and value.get("level"):
            self.logger_levels.append((key.removeprefix("logger-cluster-"), str(value["level"])))
        else:
            log.debug("Ignoring config record with key %s", key)

    def _apply_target_state(self, name: str, value: dict[str, Any] | None) -> None:
        if value is None:
            self.target_states.pop(name, None)
            return
        state = value.get("state.v2") or value.get("state")
        try:
            self.target_states[name] = TargetState(str(state))
        except ValueError:
            log.error("Invalid target state %s for connector %s", state, name)

    def _apply_connector(self, name: str, value: dict[str, Any] | None) -> None:
        if value is None:
            self.connector_configs.pop(name, None)
            self.target_states.pop(name, None)
            self.task_counts.pop(name, None)
            self._pending_tasks.pop(name, None)  # task count records outlive the connector, as in Connect
            for task_id in [t for t in self.task_configs if t.connector == name]:
                del self.task_configs[task_id]
            return
        self.connector_configs[name] = {k: str(v) for k, v in value.get("properties", {}).items()}

    def _apply_task(self, rest: str, value: dict[str, Any] | None) -> None:
        name, _, number = rest.rpartition("-")
        if not name or not number.isdigit() or value is None:
            log.debug("Ignoring task config record task-%s", rest)
            return
        props = {k: str(v) for k, v in value.get("properties", {}).items()}
        self._pending_tasks.setdefault(name, {})[int(number)] = props

    def _apply_task_count_record(self, name: str, value: dict[str, Any] | None) -> None:
        count = None if not isinstance(value, dict) else value.get("task-count")
        if not isinstance(count, int):
            log.error("Ignoring task count record for connector '%s' because it is in the wrong format: %s", name,
                      type(value).__name__)
            return
        self.task_count_records[name] = count
        self.pending_fencing.discard(name)

    def _apply_session_key(self, value: dict[str, Any]) -> None:
        import base64
        import binascii

        try:
            self.session_key = SessionKey(base64.b64decode(str(value["key"])), str(value["algorithm"]),
                                          int(value["creation-timestamp"]))
        except (KeyError, ValueError, TypeError, binascii.Error):
            log.error("Ignoring a malformed session key record")

    def _apply_commit(self, name: str, value: dict[str, Any] | None) -> None:
        if value is None:
            return
        count = int(value.get("tasks", 0))
        pending = self._pending_tasks.get(name, {})
        if any(i not in pending for i in range(count)):
            log.error("Commit of %s task configs for %s is incomplete; keeping the old tasks", count, name)
            return
        for task_id in [t for t in self.task_configs if t.connector == name]:
            del self.task_configs[task_id]
        for i in range(count):
            self.task_configs[ConnectorTaskId(name, i)] = pending[i]
        self.task_counts[name] = count
        self._pending_tasks.pop(name, None)
        self.task_config_generations[name] = self.task_config_generations.get(name, -1) + 1
        self.pending_fencing.add(name)

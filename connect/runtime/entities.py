"""Values the herder returns to the REST layer (Connect's REST ``entities``), as frozen dataclasses."""

from __future__ import annotations

from dataclasses import dataclass

from connect.storage.config_state import ConnectorTaskId


@dataclass(frozen=True, slots=True)
class ConnectorInfo:
    """``{"name","config","tasks","type"}``."""

    name: str
    config: dict[str, str]
    tasks: list[ConnectorTaskId]
    type: str


@dataclass(frozen=True, slots=True)
class TaskInfo:
    """``{"id":{"connector","task"},"config":{...}}``."""

    id: ConnectorTaskId
    config: dict[str, str]


@dataclass(frozen=True, slots=True)
class StateInfo:
    """The state of a connector or of one task."""

    state: str
    worker_id: str
    trace: str | None = None
    id: int | None = None
    version: str | None = None


@dataclass(frozen=True, slots=True)
class ConnectorStateInfo:
    """``{"name","connector":{...},"tasks":[...],"type"}``."""

    name: str
    connector: StateInfo
    tasks: list[StateInfo]
    type: str


@dataclass(frozen=True, slots=True)
class Created:
    """The result of a create-or-update: whether it created, and the connector info."""

    created: bool
    info: ConnectorInfo

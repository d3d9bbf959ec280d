"""Request bodies (pydantic, at the edge) and response bodies in Connect's exact JSON shapes."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from connect.runtime.entities import ConnectorInfo, ConnectorStateInfo, StateInfo, TaskInfo


class CreateConnectorRequest(BaseModel):
    """``POST /connectors`` body."""

    model_config = ConfigDict(extra="ignore")

    name: str | None = None
    config: dict[str, Any] | None = None
    initial_state: str | None = None


def connector_info(info: ConnectorInfo) -> dict[str, Any]:
    """ConnectorInfo JSON."""
    return {
        "name": info.name,
        "config": info.config,
        "tasks": [{"connector": t.connector, "task": t.task} for t in info.tasks],
        "type": info.type,
    }


def task_info(info: TaskInfo) -> dict[str, Any]:
    """TaskInfo JSON."""
    return {"id": {"connector": info.id.connector, "task": info.id.task}, "config": info.config}


def state(info: StateInfo) -> dict[str, Any]:
    """A connector or task state; ``trace`` omitted when empty."""
    body: dict[str, Any] = {} if info.id is None else {"id": info.id}
    body.update(state=info.state, worker_id=info.worker_id)
    if info.trace:
        body["trace"] = info.trace
    if info.version:
        body["version"] = info.version
    return body


def connector_state(info: ConnectorStateInfo) -> dict[str, Any]:
    """ConnectorStateInfo JSON."""
    return {
        "name": info.name,
        "connector": state(info.connector),
        "tasks": [state(t) for t in info.tasks],
        "type": info.type,
    }

"""The connector bootstrap (``python -m connect.bootstrap``, what the chart's hook Job runs) against a real worker:
it creates, then updates on a changed config, and does nothing on an unchanged one."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from connect.bootstrap import Action, Bootstrap, RestClient, connector_files, load_spec, main
from tests.integration.support import Worker, create_connector, end_offsets, unique

pytestmark = pytest.mark.integration


def _config(mongo_uri: str, prefix: str, **extra: Any) -> dict[str, Any]:
    return {"connector.class": "io.debezium.connector.mongodb.MongoDbConnector",
            "mongodb.connection.string": mongo_uri, "topic.prefix": prefix,
            "collection.include.list": f"{prefix}db.c", "tasks.max": 1, **extra}


def _write(directory: Path, name: str, config: dict[str, Any]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.json"
    path.write_text(json.dumps({"name": name, "config": config}))
    return path


def _config_topic_size(bootstrap: str, worker: Worker) -> int:
    """Records in the worker group's config topic: every accepted PUT writes one."""
    topic = worker.process.properties["config.storage.topic"]
    size = end_offsets(bootstrap, [topic])[topic]
    assert size, f"config topic {topic} not found (or empty)"
    return size


def test_creates_then_updates_then_leaves_alone(worker: Worker, stack: Any, tmp_path: Path) -> None:
    name = unique("boot-")
    prefix = unique("boot")
    directory = tmp_path / "connectors"
    _write(directory, name, _config(stack.mongo_uri, prefix))
    assert main(["--url", worker.url, "--timeout", "60", str(directory)]) == 0
    stored = worker.http.get(f"/connectors/{name}/config").json()
    assert stored == {**{k: str(v) for k, v in _config(stack.mongo_uri, prefix).items()}, "name": name}
    worker.wait_running(name)

    bootstrap = Bootstrap(RestClient(worker.url), timeout=60)
    before = _config_topic_size(stack.kafka_bootstrap, worker)
    assert bootstrap.run([load_spec(directory / f"{name}.json")]) == {name: Action.UNCHANGED}
    assert _config_topic_size(stack.kafka_bootstrap, worker) == before  # nothing was written

    _write(directory, name, _config(stack.mongo_uri, prefix, **{"tombstones.on.delete": False}))
    assert bootstrap.run([load_spec(directory / f"{name}.json")]) == {name: Action.UPDATED}
    assert _config_topic_size(stack.kafka_bootstrap, worker) > before
    assert worker.http.get(f"/connectors/{name}/config").json()["tombstones.on.delete"] == "false"
    worker.wait_running(name)
    assert main(["--url", worker.url, "--timeout", "60", str(directory)]) == 0
    assert worker.http.get("/connectors").json() == [name]


def test_leaves_other_connectors_alone_and_applies_several(worker: Worker, stack: Any, tmp_path: Path) -> None:
    other = unique("manual-")
    create_connector(worker, other, _config(stack.mongo_uri, unique("man")), wait_running=False)
    names = [unique("a-"), unique("b-")]
    for name in names:
        _write(tmp_path / "connectors", name, _config(stack.mongo_uri, unique("multi")))
    files = connector_files([str(tmp_path / "connectors")])
    result = Bootstrap(RestClient(worker.url), timeout=60).run([load_spec(p) for p in files])
    assert set(result.values()) == {Action.CREATED}
    assert sorted(worker.http.get("/connectors").json()) == sorted([other, *names])


def test_a_rejected_config_fails_with_the_workers_reason(worker: Worker, tmp_path: Path,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    name = unique("bad-")
    path = _write(tmp_path / "connectors", name, {"connector.class": "com.example.NoSuchConnector"})
    with caplog.at_level(logging.ERROR, logger="connect.bootstrap"):
        assert main(["--url", worker.url, "--timeout", "60", str(path)]) == 1
    message = caplog.text
    assert f"connector {name}: PUT /connectors/{name}/config answered 400" in message
    assert "com.example.NoSuchConnector" in message
    assert worker.http.get(f"/connectors/{name}").status_code == 404

"""``${file:...}`` placeholders: the MongoDB connection string comes from a secrets file; REST and the config
topic keep the placeholder, the task connects with the resolved value."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.integration.support import Worker, create_connector, read_topic, unique

pytestmark = pytest.mark.integration


def test_connection_string_from_a_secrets_file(worker_factory: Callable[..., Worker], stack: Any, mongo: Any,
                                               tmp_path: Path) -> None:
    secrets = tmp_path / "mongo-secrets.properties"
    secrets.write_text(f"uri={stack.mongo_uri}\n")
    worker = worker_factory(extra={
        "config.providers": "file",
        "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
    })
    name, prefix, db = unique("secret-"), unique("secret"), unique("secretdb_")
    placeholder = f"${{file:{secrets}:uri}}"
    config = {"connector.class": "MongoDbConnector", "mongodb.connection.string": placeholder,
              "topic.prefix": prefix, "collection.include.list": f"{db}.c"}
    create_connector(worker, name, config)
    assert worker.http.get(f"/connectors/{name}/config").json()["mongodb.connection.string"] == placeholder
    assert worker.http.get(f"/connectors/{name}/tasks").json()[0]["config"]["mongodb.connection.string"] == \
        placeholder, "task configs keep the placeholder too"
    mongo[db].c.insert_one({"_id": 1})
    assert len(read_topic(stack.kafka_bootstrap, f"{prefix}.{db}.c", 1)) == 1

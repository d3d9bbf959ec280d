"""Every ``compression.type`` Kafka has works out of the box, on both task producer libraries: a connector
writes compressed batches and a plain consumer reads the records back."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.integration.support import Worker, create_connector, read_topic, unique

pytestmark = pytest.mark.integration

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def test_every_compression_type(worker_factory: Callable[..., Worker], stack: Any, mongo: Any) -> None:
    worker = worker_factory()
    db = unique("compdb_")
    topics: dict[str, str] = {}
    for library in ("librdkafka", "kafka-python"):
        for codec in CODECS:
            name, prefix = unique(f"comp-{codec}-"), unique(f"comp{codec}")
            create_connector(worker, name, {
                "connector.class": "MongoDbConnector", "mongodb.connection.string": stack.mongo_uri,
                "topic.prefix": prefix, "collection.include.list": f"{db}.c",
                "producer.override.compression.type": codec, "producer.override.client.library": library})
            topics[f"{library}/{codec}"] = f"{prefix}.{db}.c"
    mongo[db].c.insert_many([{"_id": i, "text": "compressible " * 50} for i in range(20)])
    for label, topic in topics.items():
        records = read_topic(stack.kafka_bootstrap, topic, 20)
        ids = sorted(json.loads(json.loads(r.value)["payload"]["after"])["_id"] for r in records)
        assert ids == list(range(20)), label

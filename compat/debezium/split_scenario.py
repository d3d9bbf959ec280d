"""The oversize-split golden scenario: ``cursor.oversize.handling.mode=split``, a change event over MongoDB's 16 MB
limit that the server hands out in fragments (``$changeStreamSplitLargeEvent``) and the connector joins.

    python -m compat.debezium.golden --scenario split --release 3.6.3.Final

A 9 MB document, an update whose event (update description + looked-up document) is over 16 MB, then a small
insert; ``field.exclude.list`` keeps the 9 MB field out of the records, under Kafka's 1 MB limit (the event is
split all the same).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compat.debezium import harness

DB = "golden_split"
MB = 1024 * 1024
RECORDS = 3


def config(mongo_uri: str, prefix: str, start_op_time: int) -> dict[str, str]:
    """Streaming from before the operations, oversize events split, the big field left out."""
    return {
        "connector.class": harness.CONNECTOR_CLASS, "mongodb.connection.string": mongo_uri, "topic.prefix": prefix,
        "database.include.list": DB, "snapshot.mode": "no_data", "capture.start.op.time": str(start_op_time),
        "tasks.max": "1", "cursor.oversize.handling.mode": "split", "field.exclude.list": f"{DB}.big.a",
    }


def capture(client: Any, bootstrap: str, prefix: str, create: Callable[[dict[str, str]], None],
            mongo_uri: str) -> list[dict[str, Any]]:
    """Run the operations, then a connector made by ``create(config)`` from before them; the records."""
    start = client.admin.command("ping")["operationTime"]
    big = client[DB]["big"]
    big.insert_one({"_id": 1, "a": "x" * (9 * MB), "n": 1})
    big.update_one({"_id": 1}, {"$set": {"a": "y" * (9 * MB), "n": 2}})
    big.insert_one({"_id": 2, "small": True})
    create(config(mongo_uri, prefix, harness.op_time(start)))
    return harness.read_records(bootstrap, prefix, RECORDS, quiet=5)

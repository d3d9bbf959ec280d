"""provide.transaction.metadata: BEGIN/END records on <prefix>.transaction and the transaction block of data
events, END written when the next event arrives (as Debezium's TransactionMonitor)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.integration.mongodb.conftest import create_mongodb_connector, values
from tests.integration.support import Worker, read_topic, unique

pytestmark = pytest.mark.integration


def test_transaction_metadata(worker: Worker, stack: Any, mongo: Any) -> None:
    db = unique("txn")
    prefix = unique("t")
    mongo[db].create_collection("a")
    mongo[db].create_collection("b")
    create_mongodb_connector(worker, unique("txn-"), {
        "mongodb.connection.string": stack.mongo_uri, "topic.prefix": prefix,
        "database.include.list": db, "provide.transaction.metadata": "true"})
    with mongo.start_session() as session, session.start_transaction():
        mongo[db]["a"].insert_one({"_id": 1}, session=session)
        mongo[db]["b"].insert_one({"_id": 2}, session=session)
        mongo[db]["a"].insert_one({"_id": 3}, session=session)
    mongo[db]["a"].insert_one({"_id": 4})

    tx = read_topic(stack.kafka_bootstrap, f"{prefix}.transaction", 2)
    begin, end = (json.loads(r.value)["payload"] for r in tx[:2])
    keys = [json.loads(r.key)["payload"]["id"] for r in tx[:2]]
    txn_id = begin["id"]
    assert keys == [txn_id, txn_id]
    assert txn_id.startswith('{"id": {"$binary": ') and txn_id.rsplit(":", 1)[1].isdigit()
    assert begin["status"] == "BEGIN" and begin["event_count"] is None and begin["data_collections"] is None
    assert end["status"] == "END" and end["id"] == txn_id and end["event_count"] == 3
    assert sorted((c["data_collection"], c["event_count"]) for c in end["data_collections"]) == [
        (f"{db}.a", 2), (f"{db}.b", 1)]
    assert json.loads(tx[0].value)["schema"]["name"] == "io.debezium.connector.common.TransactionMetadataValue"

    a = values(stack.kafka_bootstrap, f"{prefix}.{db}.a", 3)
    b = values(stack.kafka_bootstrap, f"{prefix}.{db}.b", 1)
    assert [v["transaction"] for v in a] == [
        {"id": txn_id, "total_order": 1, "data_collection_order": 1},
        {"id": txn_id, "total_order": 3, "data_collection_order": 2},
        None]
    assert b[0]["transaction"] == {"id": txn_id, "total_order": 2, "data_collection_order": 1}
    assert a[0]["source"]["lsid"] and a[0]["source"]["txnNumber"] is not None

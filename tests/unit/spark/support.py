"""Helpers for the Spark job tests: the shared local SparkSession, Kafka-shaped DataFrames, records in every
format (made by the product's own ChangeEventConverter + JsonConverter, then reshaped as Debezium documents
CloudEventsConverter and ExtractNewDocumentState output: reference/debezium-mongodb.md sections 7 and 8), and
the comparison of a materialized table with MongoDB documents."""

from __future__ import annotations

import base64
import calendar
import datetime as dt
import itertools
import json
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from bson import Binary, Decimal128, Int64, ObjectId, Regex, Timestamp, json_util

from connectors.mongodb.event_converter import ChangeEventConverter
from converters.json import JsonConverter

Record = tuple[bytes | None, bytes | None]
_clock = itertools.count(1)


def spark_session() -> Any:
    """The test session's SparkSession, the same whichever test folder asks first: with the Kafka source and Delta
    jars, spark_jobs' JVM functions and Hadoop's S3A connector (the s3a:// tests need it in the one JVM a test
    session has)."""
    from spark_jobs.session import session
    from stack.spark import job_jars, s3_jars

    return session("local[2]", jars=job_jars() + s3_jars(),
                   conf={"spark.sql.shuffle.partitions": "2", "spark.driver.memory": "1g"})


def change_event(op: str, db: str, coll: str, doc: Mapping[str, Any] | None = None, key: Any = None,
                 updated: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A pymongo change-stream event (insert/update/replace/delete) as the worker's task receives it."""
    n = next(_clock)
    event: dict[str, Any] = {
        "_id": {"_data": f"82{n:030x}"}, "operationType": op, "clusterTime": Timestamp(1_795_000_000 + n, 1),
        "wallTime": dt.datetime(2026, 11, 21, 12, 0, 0) + dt.timedelta(seconds=n), "ns": {"db": db, "coll": coll},
        "documentKey": {"_id": key if doc is None else doc["_id"]},
    }
    if doc is not None:
        event["fullDocument"] = dict(doc)
    if op == "update":
        event["updateDescription"] = {"updatedFields": dict(updated or {}), "removedFields": []}
    return event


def json_records(events: Iterable[Mapping[str, Any]], prefix: str = "t", schemas: bool = True,
                 snapshot_docs: Iterable[tuple[str, str, Mapping[str, Any]]] = ()) -> list[tuple[str, Record]]:
    """(topic, (key, value)) of each event as the worker writes them with JsonConverter."""
    events_converter = ChangeEventConverter(topic_prefix=prefix, run_id="run-1")
    keys, values = JsonConverter(), JsonConverter()
    keys.configure({"schemas.enable": schemas}, is_key=True)
    values.configure({"schemas.enable": schemas})
    out = []
    records = [events_converter.snapshot_record(doc, db, coll, {"sec": 0, "ord": -1})
               for db, coll, doc in snapshot_docs]
    for event in events:
        records.extend(events_converter.to_records(event))
    for record in records:
        key = keys.from_connect_data(record.topic, record.key_schema, record.key)
        value = values.from_connect_data(record.topic, record.value_schema, record.value)
        out.append((record.topic, (key, value)))
    return out


def cloud_event(value: bytes | None, data_schemas: bool = True) -> bytes | None:
    """A JSON-with-schemas envelope as CloudEventsConverter's structured JSON (section 7.2)."""
    if value is None:
        return None
    envelope = json.loads(value)
    payload, schema = envelope["payload"], envelope["schema"]
    source = payload["source"]
    ts_ms = source["ts_ms"]
    stamp = dt.datetime.fromtimestamp(ts_ms / 1000, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts_ms % 1000:03d}Z"
    event: dict[str, Any] = {
        "id": f"name:{source['name']};ts:{ts_ms};ord:{source['ord']}",
        "source": f"/debezium/mongodb/{source['name']}", "specversion": "1.0",
        "type": "io.debezium.connector.mongodb.DataChangeEvent", "time": stamp,
        "datacontenttype": "application/json", "iodebeziumop": payload["op"],
    }
    for field in schema["fields"][3]["fields"]:
        name = field["field"]
        attr = "iodebezium" + re.sub("[^A-Za-z0-9]", "", name)
        item = source.get(name)
        event[attr] = str(item) if field["type"] == "int64" and item is not None else item
    event.update({"iodebeziumtxid": None, "iodebeziumtxtotalorder": None, "iodebeziumtxdatacollectionorder": None})
    data = {k: payload[k] for k in ("before", "after", "updateDescription")}
    if data_schemas:
        data_schema = {"type": "struct", "fields": schema["fields"][:3], "optional": False,
                       "name": "io.debezium.connector.mongodb.Data"}
        event["data"] = {"schema": data_schema, "payload": data}
    else:
        event["data"] = data
    return json.dumps(event, separators=(",", ":")).encode()


def new_document_state(key: bytes | None, value: bytes | None, schemas: bool = True,
                       source_fields: bool = False) -> Record | None:
    """A JSON-with-schemas record as ExtractNewDocumentState + JsonConverter write it (section 8); None when the
    SMT drops it (the original tombstone after a delete: the delete itself already became a tombstone).

    With ``source_fields``, as the SMT configured with ``add.fields=source.ts_ms,source.ord`` and
    ``delete.tombstone.handling.mode=rewrite``: every record carries ``__source_ts_ms`` and ``__source_ord``, and a
    delete is ``{"_id": ..., "__deleted": true, ...}`` instead of a tombstone."""
    key_id = json_util.loads(json.loads(key)["payload"]["id"]) if key else None
    new_key = _connect_json({"id": key_id}, schemas)
    if value is None:
        return None
    payload = json.loads(value)["payload"]
    added: dict[str, Any] = {}
    if source_fields:
        added = {"__source_ts_ms": Int64(payload["source"]["ts_ms"]), "__source_ord": payload["source"]["ord"]}
    if payload["op"] == "d":
        if not source_fields:
            return new_key, None
        return new_key, _connect_json({"_id": key_id, "__deleted": True, **added}, schemas)
    after = payload["after"]
    doc = json_util.loads(after) if after is not None else _partial_update(payload, key_id)
    return new_key, _connect_json({**doc, **added}, schemas)


def _partial_update(payload: Mapping[str, Any], key_id: Any) -> dict[str, Any]:
    """The SMT's document for an update without ``after`` (the document was gone when the change stream looked it
    up): ``before`` (or nothing) with the updated fields set and the removed ones dropped, ``_id`` from the key."""
    before = payload.get("before")
    doc: dict[str, Any] = json_util.loads(before) if before is not None else {}
    update = payload.get("updateDescription") or {}
    if update.get("updatedFields") is not None:
        doc.update(json_util.loads(update["updatedFields"]))
    for removed in update.get("removedFields") or ():
        doc.pop(removed, None)
    doc.setdefault("_id", key_id)
    return doc


def _connect_json(doc: Mapping[str, Any], schemas: bool) -> bytes:
    schema, payload = _connect_struct(doc)
    body = {"schema": schema, "payload": payload} if schemas else payload
    return json.dumps(body, separators=(",", ":")).encode()


def _connect_struct(doc: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    fields, values = [], {}
    for name, item in doc.items():
        schema, value = _connect_value(item)
        fields.append({**schema, "field": name})
        values[name] = value
    return {"type": "struct", "fields": fields, "optional": True}, values


def _connect_value(item: Any) -> tuple[dict[str, Any], Any]:
    if isinstance(item, bool):
        return {"type": "boolean", "optional": True}, item
    if isinstance(item, Int64):
        return {"type": "int64", "optional": True}, int(item)
    if isinstance(item, int):
        return {"type": "int32" if -2**31 <= item < 2**31 else "int64", "optional": True}, item
    if isinstance(item, float):
        return {"type": "double", "optional": True}, item
    if isinstance(item, dt.datetime):
        return ({"type": "int64", "optional": True, "name": "org.apache.kafka.connect.data.Timestamp", "version": 1},
                _millis(item))
    if isinstance(item, bytes | Binary):
        return {"type": "bytes", "optional": True}, base64.b64encode(bytes(item)).decode()
    if isinstance(item, dict):
        return _connect_struct(item)
    if isinstance(item, list):
        element = _connect_value(item[0])[0] if item else {"type": "string", "optional": True}
        return {"type": "array", "items": element, "optional": True}, [_connect_value(i)[1] for i in item]
    if item is None:
        return {"type": "string", "optional": True}, None
    return {"type": "string", "optional": True}, str(item)  # ObjectId (hex), Decimal128, str


def _millis(value: dt.datetime) -> int:
    return calendar.timegm(value.utctimetuple()) * 1000 + value.microsecond // 1000


def kafka_frame(spark: Any, topic_records: Iterable[tuple[str, Record]],
                partitions: Iterable[int] | None = None) -> Any:
    """A DataFrame shaped like ``spark.read.format("kafka")``'s rows, in partition 0 or, with ``partitions``, in
    the partition given for each record; offsets numbered per topic partition in the order given."""
    rows, offsets = [], dict[tuple[str, int], int]()
    for (topic, (key, value)), partition in zip(topic_records, partitions or itertools.repeat(0), strict=False):
        offset = offsets.get((topic, partition), 0)
        offsets[(topic, partition)] = offset + 1
        rows.append((key, value, topic, partition, offset, dt.datetime(2026, 11, 21, 12, 0, 0), 0))
    return spark.createDataFrame(rows, "key binary, value binary, topic string, partition int, offset long, "
                                       "timestamp timestamp, timestampType int")


# ---------------------------------------------------------------------------------------------------------------
# Comparing a materialized table with MongoDB documents


def expected_value(item: Any) -> Any:
    """A MongoDB (pymongo) value as the table holds it, after :func:`table_value`."""
    if isinstance(item, ObjectId):
        return str(item)
    if isinstance(item, dt.datetime):
        return _millis(item)
    if isinstance(item, Decimal128):
        return Decimal(str(item.to_decimal())).normalize()
    if isinstance(item, bytes | Binary):
        return bytes(item)
    if isinstance(item, Regex):
        return {"pattern": item.pattern, "options": _regex_flags(item)}
    if isinstance(item, Timestamp):
        return {"t": item.time, "i": item.inc}
    if isinstance(item, bool):
        return item
    if isinstance(item, int | float):
        return float(item)
    if isinstance(item, Mapping):
        return {k: expected_value(v) for k, v in item.items() if v is not None}
    if isinstance(item, list):
        return [expected_value(v) for v in item]
    return item


def _regex_flags(item: Regex[Any]) -> str:
    letters = ((re.IGNORECASE, "i"), (re.LOCALE, "l"), (re.MULTILINE, "m"), (re.DOTALL, "s"), (re.UNICODE, "u"),
               (re.VERBOSE, "x"))
    flags = int(item.flags)
    return "".join(letter for bit, letter in letters if flags & bit)


def table_value(item: Any) -> Any:
    """A value collected from the table in the same comparable form."""
    if isinstance(item, dt.datetime):
        return calendar.timegm(item.timetuple()) * 1000 + item.microsecond // 1000 if item.tzinfo is None \
            else int(item.timestamp() * 1000)
    if isinstance(item, Decimal):
        return item.normalize()
    if isinstance(item, bytearray):
        return bytes(item)
    if isinstance(item, bool):
        return item
    if isinstance(item, int | float):
        return float(item)
    if hasattr(item, "asDict"):
        item = item.asDict(recursive=False)
    if isinstance(item, Mapping):
        return {k: table_value(v) for k, v in item.items() if v is not None}
    if isinstance(item, list):
        return [table_value(v) for v in item]
    return item


def table_documents(table: Any) -> dict[Any, dict[str, Any]]:
    """The documents of a materialized table DataFrame by ``_id`` (metadata columns dropped, nulls dropped)."""
    from spark_jobs.tables import META_COLUMNS

    docs = {}
    for row in table.drop(*META_COLUMNS).collect():
        doc = table_value(row)
        docs[json.dumps(doc["_id"], sort_keys=True, default=str)] = doc
    return docs


def mongo_documents(docs: Iterable[Mapping[str, Any]]) -> dict[Any, dict[str, Any]]:
    out = {}
    for doc in docs:
        value = expected_value(doc)
        out[json.dumps(value["_id"], sort_keys=True, default=str)] = value
    return out

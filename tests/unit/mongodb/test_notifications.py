"""Debezium's notifications (``notification.enabled.channels``): the sink channel's records, the log channel's
line, the ``additional_data`` order of Debezium's ``HashMap``, the config checks, and the initial snapshot's
notifications in order. The records' bytes are compared with the real Debezium's in
``tests/integration/mongodb/test_debezium_golden.py`` (the snapshot scenario)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from connect.api.records import PreparedRecords
from connectors.mongodb import config as mongo_config
from connectors.mongodb import debezium_keys
from connectors.mongodb.notifications import (
    INITIAL_SNAPSHOT,
    KEY_SCHEMA,
    VALUE_SCHEMA,
    Notification,
    NotificationService,
    additional_data,
    channel_warnings,
)
from converters.json import JsonConverter

PROPS = {"topic.prefix": "p", "mongodb.connection.string": "mongodb://h/"}


def _errors(props: dict[str, str]) -> dict[str, list[str]]:
    return {r.name: r.errors for r in mongo_config.validate({**PROPS, **props}) if r.errors}


def test_additional_data_follows_debeziums_hash_map_order() -> None:
    # orders seen in the records of the real Debezium 3.6.x (golden/debezium-*-snapshot.jsonl)
    assert [k for k, _ in additional_data({"scanned_collection": "a.b", "status": "SUCCEEDED"}, "g")] == [
        "connector_name", "scanned_collection", "status"]
    assert [k for k, _ in additional_data({"current_collection_in_progress": "a.b"}, "g")] == [
        "current_collection_in_progress", "connector_name"]
    assert additional_data({}, "g") == (("connector_name", "g"),)


def test_sink_record_is_debeziums_notification_without_source_position() -> None:
    service = NotificationService(("sink",), "notes", "server1", "c|task-0")
    [record] = service.notify(INITIAL_SNAPSHOT, "IN_PROGRESS", {"current_collection_in_progress": "db.c"})
    assert (record.topic, record.kafka_partition, record.source_partition, record.source_offset) == (
        "notes", None, None, None)
    assert record.key_schema is KEY_SCHEMA and record.value_schema is VALUE_SCHEMA
    converter = JsonConverter()
    converter.configure({}, False)
    value = converter.from_connect_data("notes", record.value_schema, record.value)
    assert value is not None
    payload = value.decode().split('"payload":', 1)[1]
    note_id = record.key.get("id")
    assert payload.startswith(f'{{"id":"{note_id}","type":"IN_PROGRESS","aggregate_type":"Initial Snapshot",'
                              '"additional_data":{"current_collection_in_progress":"db.c","connector_name":"server1"},'
                              '"timestamp":')


def test_log_channel_writes_debeziums_line(caplog: pytest.LogCaptureFixture) -> None:
    service = NotificationService(("log",), None, "server1", "c|task-0")
    with caplog.at_level(logging.INFO, logger="connectors.mongodb.notifications"):
        assert service.initial("STARTED") == []
    [line] = [r.getMessage() for r in caplog.records]
    assert line.startswith("[c|task-0] [Notification Service]  {id='")
    assert "', aggregateType='Initial Snapshot', type='STARTED', additionalData={connector_name=server1}, " \
           "timestamp=" in line


def test_notification_to_string_is_javas() -> None:
    note = Notification("i", "Incremental Snapshot", "COMPLETED", (("connector_name", "s"), ("k", "v")), 5)
    assert str(note) == ("{id='i', aggregateType='Incremental Snapshot', type='COMPLETED', "
                         "additionalData={connector_name=s, k=v}, timestamp=5}")


def test_no_channel_no_notification() -> None:
    assert NotificationService((), "t", "s", "c").notify(INITIAL_SNAPSHOT, "STARTED") == []
    assert NotificationService(("jmx",), "t", "s", "c").notify(INITIAL_SNAPSHOT, "STARTED") == []


def test_sink_needs_a_topic_named_in_the_error() -> None:
    errors = _errors({"notification.enabled.channels": "sink"})
    assert errors == {"notification.sink.topic.name": [
        "Notification topic name must be provided when kafka notification channel is enabled"]}
    assert _errors({"notification.enabled.channels": "sink,log", "notification.sink.topic.name": "n"}) == {}
    assert _errors({"notification.enabled.channels": "log"}) == {}


def test_jmx_and_unknown_channels_are_named_in_warnings() -> None:
    warnings = channel_warnings({"notification.enabled.channels": "sink,jmx,pigeon"})
    assert len(warnings) == 2
    assert "jmx is not available" in warnings[0] and "pigeon is unknown" in warnings[1]
    assert debezium_keys.BY_NAME["notification.enabled.channels"].support is debezium_keys.Support.HONOURED


def test_honoured_options_parse_the_channels() -> None:
    honoured = mongo_config.MongoDbConfig.parse({**PROPS, "notification.enabled.channels": "sink, log",
                                                 "notification.sink.topic.name": " n "}).honoured
    assert (honoured.notification_channels, honoured.notification_topic) == (("sink", "log"), "n")


def test_initial_snapshot_notifications_in_order() -> None:
    """STARTED, per collection IN_PROGRESS then TABLE_SCAN_COMPLETED (an empty collection too), COMPLETED."""
    from connectors.mongodb.event_converter import ChangeEventConverter
    from connectors.mongodb.position import Position
    from connectors.mongodb.snapshot.parallel import ParallelSnapshot, SnapshotSettings
    from connectors.mongodb.snapshot.progress import SnapshotProgress

    service = NotificationService(("sink",), "n", "p", "c|task-0")
    snap = ParallelSnapshot(object(), [("db", "a"), ("db", "b")], ChangeEventConverter(topic_prefix="p", run_id="r"),
                            Position(1, 1, None).to_offset(), SnapshotProgress(), SnapshotSettings(), "c|task-0",
                            service)
    out = PreparedRecords(snap._pending)
    snap._progress.plan("db.a", [])
    snap._progress.plan("db.b", [])
    snap._emit("db.a", 0, [{"_id": 1}, {"_id": 2}], True, out)
    snap._emit("db.b", 0, [], True, out)
    out.extend(snap._finish(PreparedRecords()) or [])
    kinds = [(r.topic, r.value.get("type") if r.topic == "n" else r.value.get("op")) for r in out]
    assert kinds == [("n", "STARTED"), ("n", "IN_PROGRESS"), ("p.db.a", "r"), ("n", "TABLE_SCAN_COMPLETED"),
                     ("n", "IN_PROGRESS"), ("n", "TABLE_SCAN_COMPLETED"), ("p.db.a", "r"), ("n", "COMPLETED")]


# -- custom.metric.tags (here for want of a better home: the other Events-group key Debezium users carry) --------
@pytest.mark.parametrize(("value", "tags"), [
    ("k1=v1,k2=v2", (("k1", "v1"), ("k2", "v2"))), (" a = b , c=d,", (("a", "b"), ("c", "d"))),
    ("a=1,a=2", (("a", "2"),)), ("", ()), ("a=b,,c=d", None), ("a", None), ("a=b=c", None), ("a=", None)])
def test_custom_metric_tags_parse_as_debezium(value: str, tags: Any) -> None:
    assert debezium_keys.metric_tags(value) == tags


def test_malformed_custom_metric_tags_are_an_error_naming_the_key() -> None:
    assert _errors({"custom.metric.tags": "team=cdc,broken"}) == {"custom.metric.tags": [
        "A equivalent-separated map of valid key/value pairs is expected, for example: k1=v1,k2=v2"]}
    assert _errors({"custom.metric.tags": "team=cdc,env=prod"}) == {}


def test_custom_metric_tags_label_every_debezium_metric() -> None:
    from connectors.mongodb.streaming.metrics import StreamingMetrics
    from connectors.mongodb.task import MongoDbConnectorTask, custom_labels

    task = MongoDbConnectorTask()
    task.config = mongo_config.MongoDbConfig.parse({**PROPS, "custom.metric.tags": "team=cdc,my.env=prod,task=x"})
    task._metrics = StreamingMetrics("p", "0", 10, lambda: 0)
    samples = task.metrics()
    assert samples
    for sample in samples:
        assert sample.labels["team"] == "cdc" and sample.labels["my_env"] == "prod"
        assert sample.labels["task"] == "0" and sample.labels["name"] == "p"
    assert custom_labels((("1x", "v"),)) == {"_1x": "v"}


def test_incremental_keys_print_as_java_does() -> None:
    import uuid

    from bson import Binary, Decimal128, Int64, ObjectId

    from connectors.mongodb.snapshot.incremental import java_key

    oid = ObjectId("65a0f0c1e4b0a1b2c3d4e5f6")
    value = uuid.UUID("00010203-0405-0607-0809-0a0b0c0d0e0f")
    assert [java_key(k) for k in (5, Int64(2147483657), 12.5, 1e7, "id", oid, Decimal128("123.45"),
                                  Binary.from_uuid(value))] == [
        "5", "2147483657", "12.5", "1.0E7", "id", "65a0f0c1e4b0a1b2c3d4e5f6", "123.45", str(value)]

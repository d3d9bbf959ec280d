"""Every key of the real Debezium MongoDB connector (recorded by ``python -m compat.debezium.config_keys``) is
defined here with Debezium's type and default, and has a status: honoured, or named (WARN, validation error)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from connect.runtime import connector_config, plugins
from connectors.mongodb import config as mongo_config
from connectors.mongodb import debezium_keys
from connectors.mongodb.debezium_keys import KEYS, Support

GOLDEN = Path(__file__).parent / "golden" / "debezium_mongodb_keys.json"
README = Path(__file__).resolve().parents[3] / "README.md"
BASE = {"name": "c", "connector.class": "io.debezium.connector.mongodb.MongoDbConnector", "topic.prefix": "p",
        "mongodb.connection.string": "mongodb://127.0.0.1:27017/?replicaSet=rs0"}

KNOWN_DIFFERENCES = {
    # Debezium's validate report shows CommonConnectorConfig's default, the connector runs with
    # DefaultTopicNamingStrategy (its own field's default); the topic names are the same for MongoDB.
    ("topic.naming.strategy", "default"),
    # -1 means "not set" in Debezium; here the key is simply absent.
    ("capture.start.op.time", "default"),
    # Debezium declares these as STRING/LIST but reads them the other way round; the parsing is the same.
    ("collection.exclude.list", "type"),
    ("signal.data.collection", "type"),
    ("snapshot.collection.filter.overrides", "type"),
}


def _recorded() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(GOLDEN.read_text())
    return data


def _defined() -> dict[str, Any]:
    desc = plugins.find(plugins.CONNECTORS, BASE["connector.class"])
    assert desc is not None
    keys = {key.name: key for key in connector_config.source_connector_keys(desc)}
    keys.update({key.name: key for key in mongo_config.CONFIG_DEF.keys})
    return keys


def test_the_golden_says_which_releases_it_was_recorded_from() -> None:
    recorded = _recorded()["recorded_with"]
    assert recorded["debezium"].startswith("3.") and recorded["kafka_connect"].startswith("4.")


def test_every_debezium_key_is_defined_with_debeziums_type_and_default() -> None:
    defined = _defined()
    problems = []
    for key in _recorded()["keys"]:
        mine = defined.get(key["name"])
        if mine is None:
            problems.append(f"{key['name']}: not defined (give it a status in connectors/mongodb/debezium_keys.py)")
            continue
        if mine.type.value != key["type"] and (key["name"], "type") not in KNOWN_DIFFERENCES:
            problems.append(f"{key['name']}: type {mine.type.value}, Debezium {key['type']}")
        if (mine.default or None) != (key["default_value"] or None) \
                and (key["name"], "default") not in KNOWN_DIFFERENCES:
            problems.append(f"{key['name']}: default {mine.default!r}, Debezium {key['default_value']!r}")
    assert not problems, "\n".join(problems)


def test_no_key_is_both_in_the_status_table_and_in_the_connector_definition() -> None:
    own = {key.name for key in mongo_config.CONFIG_DEF.keys} - set(debezium_keys.BY_NAME)
    assert not own & set(debezium_keys.BY_NAME)
    assert len(KEYS) == len(debezium_keys.BY_NAME)


def test_refused_keys_are_validation_errors_naming_the_key() -> None:
    props = {**BASE, "post.processors": "reselector", "mongodb.authentication.class": "com.example.Auth",
             "skip.messages.without.change": "true", "signal.enabled.channels": "source,file,jmx"}
    errors = {r.name: r.errors for r in mongo_config.validate(props) if r.errors}
    assert set(errors) == {"post.processors", "mongodb.authentication.class", "skip.messages.without.change",
                           "signal.enabled.channels"}
    assert errors["post.processors"][0].startswith("Not supported by this connector")
    assert errors["signal.enabled.channels"] == [
        "Signal channel file is not available here (available: source, kafka)",
        "Signal channel jmx is not available here (available: source, kafka)"]


def test_refused_keys_at_their_default_and_empty_values_are_accepted() -> None:
    props = {**BASE, "queue.provider.type": "memory", "skip.messages.without.change": "false", "converters": "",
             "snapshot.query.mode": "SELECT_ALL"}
    assert not [r for r in mongo_config.validate(props) if r.errors]


def test_ignored_keys_are_named_in_a_warning_at_start(caplog: pytest.LogCaptureFixture) -> None:
    props = {**BASE, "custom.metric.tags": "env=prod", "guardrail.collections.max": "5",
             "openlineage.integration.enabled": "true",
             "binary.handling.mode": "base64", "statistics.metrics.enabled": "true", "max.queue.size.in.bytes": "9"}
    with caplog.at_level(logging.WARNING, logger="connectors.mongodb.debezium_keys"):
        named = debezium_keys.warn_ignored(props, "c")
    assert named == ["guardrail.collections.max", "openlineage.integration.enabled", "binary.handling.mode"]
    assert "The Debezium key guardrail.collections.max is ignored by this connector" in caplog.text
    assert "The Debezium key binary.handling.mode has no effect" in caplog.text


def test_honoured_keys_are_parsed() -> None:
    parsed = mongo_config.MongoDbConfig.parse({
        **BASE, "event.processing.failure.handling.mode": "WARN", "max.queue.size.in.bytes": "1048576",
        "streaming.delay.ms": "250", "poll.interval.ms": "100", "signal.enabled.channels": "kafka",
        "signal.kafka.bootstrap.servers": "127.0.0.1:9092", "signal.kafka.poll.timeout.ms": "20",
        "incremental.snapshot.watermarking.strategy": "insert_delete", "mongodb.ssl.truststore.type": "jks"})
    honoured = parsed.honoured
    assert (honoured.failure_mode, honoured.max_queue_bytes, honoured.streaming_delay_ms, honoured.poll_interval_ms,
            honoured.signal_channels, honoured.signal_kafka_poll_timeout_ms, honoured.watermarking,
            honoured.truststore_type) == ("warn", 1048576, 250, 100, ("kafka",), 20, "INSERT_DELETE", "JKS")
    assert mongo_config.MongoDbConfig.parse(BASE).honoured == debezium_keys.HonouredOptions()


def test_bad_honoured_values_name_the_key() -> None:
    props = {**BASE, "event.processing.failure.handling.mode": "explode",
             "incremental.snapshot.watermarking.strategy": "X"}
    errors = {r.name: r.errors for r in mongo_config.validate(props) if r.errors}
    assert errors == {"event.processing.failure.handling.mode": ["Value must be one of fail, warn, skip, ignore"],
                      "incremental.snapshot.watermarking.strategy": [
                          "Value must be one of INSERT_INSERT, INSERT_DELETE"]}


def readme_table() -> str:
    """README's key table as it should be: every key recorded from Debezium, with its status here."""
    desc = plugins.find(plugins.CONNECTORS, BASE["connector.class"])
    assert desc is not None
    framework = {key.name: key for key in connector_config.source_connector_keys(desc)}
    connector = {key.name: key for key in mongo_config.CONFIG_DEF.keys}
    return debezium_keys.markdown_table([key["name"] for key in _recorded()["keys"]], connector, framework)


def test_every_status_is_in_the_readme_table() -> None:
    recorded = {key["name"] for key in _recorded()["keys"]}
    assert set(debezium_keys.BY_NAME) <= recorded  # no status for a key Debezium does not have
    table = readme_table()
    rows = table.splitlines()[2:]
    assert [row.split("`")[1] for row in rows] == sorted(recorded)  # one row per key, none left to prose
    assert table in README.read_text(), \
        f"README's Debezium key table is out of date; paste this:\n{table}"


def test_every_support_level_is_used() -> None:
    assert {key.support for key in KEYS} == set(Support)


def test_unknown_keys_are_named_in_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    props = {**BASE, "colection.include.list": "db.c", "transforms": "x", "transforms.x.type": "Filter",
             "producer.override.acks": "all", "snapshot.collection.filter.overrides.db.c": "{}",
             "key.converter.schemas.enable": "false", "errors.tolerance": "all", "tasks.max": "1"}
    defined = frozenset(mongo_config.CONFIG_DEF.names())
    with caplog.at_level(logging.WARNING, logger="connectors.mongodb.debezium_keys"):
        assert debezium_keys.warn_unknown(props, defined, "c") == ["colection.include.list"]
    assert "The key colection.include.list is neither a Debezium MongoDB connector key nor a Kafka Connect one" \
        in caplog.text

"""Java producer settings translated for librdkafka: same-named keys kept, renamed keys converted, and nothing
dropped in silence."""

from __future__ import annotations

import logging

import pytest

from connect import clients
from connect.api.errors import ConnectError
from connect.runtime.rdkafka_producer import rdkafka_config


def test_connects_source_task_defaults_translate() -> None:
    config, max_block = rdkafka_config(clients.source_task_producer_settings("k:9092", "connector-producer-x-0", {}))
    assert config["bootstrap.servers"] == "k:9092" and config["client.id"] == "connector-producer-x-0"
    assert config["acks"] == "all" and config["enable.idempotence"] == "false"
    assert config["max.in.flight.requests.per.connection"] == "1"
    assert config["partitioner"] == "murmur2_random", "keyed records land where Java's partitioner puts them"
    assert int(config["batch.size"]) <= int(config["message.max.bytes"])
    assert config["queue.buffering.max.kbytes"] == "32768", "buffer.memory's 32 MiB bound, as Java's producer"
    assert max_block == 60.0


def test_renamed_and_unit_converted_keys() -> None:
    config, max_block = rdkafka_config({"max.request.size": "2097152", "buffer.memory": "33554432",
                                        "send.buffer.bytes": "-1", "max.block.ms": "5000",
                                        "compression.type": "zstd", "linger.ms": "20"})
    assert config["message.max.bytes"] == "2097152" and config["queue.buffering.max.kbytes"] == "32768"
    assert config["socket.send.buffer.bytes"] == "0" and max_block == 5.0
    assert config["compression.type"] == "zstd" and config["linger.ms"] == "20"


def test_security_settings_are_translated_by_the_kafka_clients_package() -> None:
    config, _ = rdkafka_config({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
                                "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule '
                                                    'required username="bob" password="pw";'})
    assert (config["sasl.username"], config["sasl.password"], config["sasl.mechanism"]) == ("bob", "pw",
                                                                                            "SCRAM-SHA-512")
    assert "sasl.jaas.config" not in config, "stores and JAAS: tests/unit/connect/test_kafka_security.py"


@pytest.mark.parametrize("key, value", [("sasl.jaas.config", "x required;"), ("ssl.truststore.location", "/t.jks"),
                                        ("partitioner.class", "com.example.MyPartitioner")])
def test_settings_it_cannot_honour_are_refused_naming_the_key(key: str, value: str) -> None:
    with pytest.raises(ConnectError, match=key.replace(".", r"\.")):
        rdkafka_config({key: value})


def test_unknown_tuning_is_warned_once(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="connect.runtime.rdkafka_producer"):
        rdkafka_config({"some.unknown.tuning": "1"})
        rdkafka_config({"some.unknown.tuning": "2"})
    assert [r.getMessage() for r in caplog.records].count(
        "Producer setting some.unknown.tuning is not a Kafka producer setting librdkafka knows: ignored") == 1


def test_an_unreadable_key_store_is_refused_naming_the_key() -> None:
    with pytest.raises(ConnectError, match=r"ssl\.keystore\.location"):
        rdkafka_config({"security.protocol": "SSL", "ssl.keystore.location": "/nonexistent/k.jks"})

"""Worker properties from the environment (the Confluent and Debezium images' conventions)."""

from __future__ import annotations

import pytest

from connect.config.environment import environment_properties, property_name, variable_name, with_environment


@pytest.mark.parametrize(("variable", "prop"), [
    ("CONNECT_BOOTSTRAP_SERVERS", "bootstrap.servers"),
    ("CONNECT_PRODUCER_COMPRESSION_TYPE", "producer.compression.type"),
    ("CONNECT_CONFIG_PROVIDERS_FILE_CLASS", "config.providers.file.class"),
    ("CONNECT_SOME__UNDERSCORED_KEY", "some_underscored.key"),
    ("CONNECT_A___DASH", "a-dash"),
])
def test_confluent_names(variable: str, prop: str) -> None:
    assert property_name(variable) == prop
    assert variable_name(prop) == variable


def test_precedence_and_exclusions() -> None:
    env = {"BOOTSTRAP_SERVERS": "short:9092", "GROUP_ID": "g", "CONNECT_BOOTSTRAP_SERVERS": "long:9092",
           "CONFIG_STORAGE_TOPIC": "c", "CONNECT_LOG4J_ROOT_LOGLEVEL": "DEBUG", "CONNECT_LOG_FORMAT": "json",
           "CONNECT_JAAS_CONFIG": "/x", "CONNECT_REST_PASSWORD": "p", "CONNECT_": "", "HOME": "/root"}
    assert environment_properties(env) == {"bootstrap.servers": "long:9092", "group.id": "g",
                                           "config.storage.topic": "c"}
    merged, names = with_environment({"group.id": "file", "listeners": "http://:8083"}, env)
    assert merged["group.id"] == "g" and merged["listeners"] == "http://:8083"
    assert names == ["bootstrap.servers", "config.storage.topic", "group.id"]

"""Converters declare their settings (``config_def()``, Java's ``Converter.config()``), and the runtime finds them by
loading the converter class through the plugin registry: ``GET /connector-plugins/<converter>/config`` and the
``<kind>.converter.*`` entries of a validation report come from there."""

from __future__ import annotations

import pytest

from connect.api.config import ConfigDef
from connect.runtime import plugins, validation
from converters.bytearray import ByteArrayConverter
from converters.cloudevents import CloudEventsConverter
from converters.header import SimpleHeaderConverter
from converters.json import JsonConverter
from converters.number import BooleanConverter, DoubleConverter, LongConverter
from converters.string import StringConverter

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"


@pytest.mark.parametrize(("cls", "names"), [
    (JsonConverter, ["converter.type", "schemas.enable", "schemas.cache.size", "schema.content", "decimal.format",
                     "replace.null.with.default"]),
    (StringConverter, ["converter.type", "converter.encoding"]),
    (ByteArrayConverter, ["converter.type"]),
    (LongConverter, ["converter.type"]),  # as Java's NumberConverterConfig
    (DoubleConverter, ["converter.type"]),
    (BooleanConverter, ["converter.type"]),  # as Java's BooleanConverterConfig
    (SimpleHeaderConverter, []),
    (CloudEventsConverter, ["serializer.type", "data.serializer.type", "metadata.source",
                            "extension.attributes.enable", "schema.cloudevents.name", "schema.name.adjustment.mode"]),
])
def test_converters_declare_their_settings(cls: type, names: list[str]) -> None:
    definition = cls.config_def()  # type: ignore[attr-defined]
    assert isinstance(definition, ConfigDef) and list(definition.names()) == names


@pytest.mark.parametrize("desc", plugins.CONVERTERS + plugins.HEADER_CONVERTERS, ids=lambda d: d.python_path)
def test_the_registry_loads_each_converters_settings_by_class_path(desc: plugins.PluginDesc) -> None:
    declared = getattr(plugins.load(desc), "config_def", None)
    expected = declared().keys if declared is not None else ()
    assert plugins.converter_config_def(desc).keys == expected


def test_validation_checks_the_settings_a_converter_declares() -> None:
    desc = plugins.find(plugins.CONNECTORS, FILE_SOURCE)
    assert desc is not None
    report = validation.validate_connector_config(
        {"connector.class": FILE_SOURCE, "name": "n", "topic": "t", "value.converter": "CloudEvents",
         "value.converter.metadata.source": "bogus", "value.converter.serializer.type": "avro",
         "key.converter": "StringConverter", "key.converter.converter.encoding": "latin1"}, desc)
    entries = {e["value"]["name"]: e for e in report["configs"]}
    assert entries["value.converter.metadata.source"]["value"]["errors"] == [
        "Invalid value bogus for configuration metadata.source: The first element must be 'value' or 'header'"]
    assert entries["value.converter.serializer.type"]["value"]["errors"] == [
        "Invalid value avro for configuration serializer.type: Avro CloudEvents need a schema registry, which this "
        "worker does not support; use json"]
    assert entries["key.converter.converter.type"]["value"]["value"] == "key"
    assert entries["key.converter.converter.encoding"]["definition"]["display_name"] == "Encoding"
    assert report["error_count"] == 2


def test_a_number_converter_lists_converter_type_as_connect_does() -> None:
    desc = plugins.find(plugins.CONVERTERS, "LongConverter")
    assert desc is not None
    assert [k["name"] for k in validation.plugin_config(desc)] == ["converter.type"]
    connector = plugins.find(plugins.CONNECTORS, FILE_SOURCE)
    assert connector is not None
    report = validation.validate_connector_config(
        {"connector.class": FILE_SOURCE, "name": "n", "topic": "t", "key.converter": "LongConverter"}, connector)
    entries = {e["value"]["name"]: e["value"] for e in report["configs"]}
    assert entries["key.converter.converter.type"] == {"name": "key.converter.converter.type", "value": "key",
                                                       "recommended_values": [], "errors": [], "visible": True}

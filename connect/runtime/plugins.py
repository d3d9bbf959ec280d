"""Plugin discovery and aliases (Connect's ``Plugins`` without class-loader isolation: one Python
process has one ``sys.modules``).

A plugin is named by its Java class name (so Debezium and Kafka configs work unchanged), by our
dotted Python path, by its simple class name, or by its simple name with the type suffix pruned.
Plugin modules are imported lazily, on first use, by their Python path: the runtime names no plugin module in
its imports.

A plugin declares its settings as Connect's do: connectors, transformations and predicates through an instance's
``config()``, converters through the class's ``config_def()`` (Java's ``Converter.config()``; a converter without
one has no settings).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from connect.api.config import ConfigDef
from connect.api.errors import ConnectError
from connect.config.validators import invalid

VERSION = "4.3.1"
DEBEZIUM_VERSION = "3.6.1.Final"
_NUMBERS = ("Boolean", "Double", "Float", "Integer", "Long", "Short")


@dataclass(frozen=True, slots=True)
class PluginDesc:
    """One installed plugin: its canonical class name, our implementation path and its type."""

    class_name: str
    python_path: str
    type: str
    version: str = VERSION


CONNECTORS = (
    PluginDesc("io.debezium.connector.mongodb.MongoDbConnector", "connectors.mongodb.connector.MongoDbConnector",
               "source", DEBEZIUM_VERSION),
    PluginDesc("org.apache.kafka.connect.file.FileStreamSourceConnector",
               "connectors.file.FileStreamSourceConnector", "source"),
)
CONVERTERS = (
    PluginDesc("org.apache.kafka.connect.json.JsonConverter", "converters.json.JsonConverter", "converter"),
    PluginDesc("org.apache.kafka.connect.storage.StringConverter", "converters.string.StringConverter",
               "converter"),
    PluginDesc("org.apache.kafka.connect.converters.ByteArrayConverter",
               "converters.bytearray.ByteArrayConverter", "converter"),
    *(PluginDesc(f"org.apache.kafka.connect.converters.{n}Converter", f"converters.number.{n}Converter", "converter")
      for n in _NUMBERS),
    PluginDesc("io.debezium.converters.CloudEventsConverter", "converters.cloudevents.CloudEventsConverter",
               "converter", DEBEZIUM_VERSION),
)
HEADER_CONVERTERS = (
    PluginDesc("org.apache.kafka.connect.storage.SimpleHeaderConverter", "converters.header.SimpleHeaderConverter",
               "header_converter"),
    PluginDesc("org.apache.kafka.connect.json.JsonConverter", "converters.json.JsonConverter", "header_converter"),
    PluginDesc("org.apache.kafka.connect.storage.StringConverter", "converters.string.StringConverter",
               "header_converter"),
    PluginDesc("org.apache.kafka.connect.converters.ByteArrayConverter", "converters.bytearray.ByteArrayConverter",
               "header_converter"),
    *(PluginDesc(f"org.apache.kafka.connect.converters.{n}Converter", f"converters.number.{n}Converter",
                 "header_converter") for n in _NUMBERS),
)
_SMT = "org.apache.kafka.connect.transforms"
_KEY_VALUE_SMTS = {  # Java class -> our module (both $Key and $Value)
    "Cast": "cast", "ExtractField": "fields", "Flatten": "flatten", "HeaderFrom": "headers", "HoistField": "fields",
    "InsertField": "fields", "MaskField": "fields", "ReplaceField": "fields", "SetSchemaMetadata": "fields",
    "TimestampConverter": "timestamp_converter",
}
TRANSFORMATIONS = (
    *(PluginDesc(f"{_SMT}.{name}${half}", f"connect.transforms.{module}.{name}{half}", "transformation")
      for name, module in _KEY_VALUE_SMTS.items() for half in ("Key", "Value")),
    PluginDesc(f"{_SMT}.DropHeaders", "connect.transforms.headers.DropHeaders", "transformation"),
    PluginDesc(f"{_SMT}.Filter", "connect.transforms.headers.Filter", "transformation"),
    PluginDesc(f"{_SMT}.InsertHeader", "connect.transforms.headers.InsertHeader", "transformation"),
    PluginDesc(f"{_SMT}.RegexRouter", "connect.transforms.routers.RegexRouter", "transformation"),
    PluginDesc(f"{_SMT}.TimestampRouter", "connect.transforms.routers.TimestampRouter", "transformation"),
    PluginDesc(f"{_SMT}.ValueToKey", "connect.transforms.fields.ValueToKey", "transformation"),
    PluginDesc("io.debezium.connector.mongodb.transforms.ExtractNewDocumentState",
               "connectors.mongodb.transforms.extract_new_document_state.ExtractNewDocumentState", "transformation",
               DEBEZIUM_VERSION),
)
PREDICATES = tuple(PluginDesc(f"{_SMT}.predicates.{name}", f"connect.transforms.predicates.{name}", "predicate")
                   for name in ("HasHeaderKey", "RecordIsTombstone", "TopicNameMatches"))

ALL = CONNECTORS + CONVERTERS + HEADER_CONVERTERS + TRANSFORMATIONS + PREDICATES
"""Every installed plugin: connectors, converters, header converters, transformations, predicates."""

TASK_CLASSES = {
    "io.debezium.connector.mongodb.MongoDbConnectorTask": "connectors.mongodb.task.MongoDbConnectorTask",
    "org.apache.kafka.connect.file.FileStreamSourceTask": "connectors.file.source.FileStreamSourceTask",
}
"""Java task class names (what ``task.class`` holds in the config topic, as Java workers write it) -> ours."""
_JAVA_TASK_NAMES = {python: java for java, python in TASK_CLASSES.items()}


def task_class_name(python_path: str) -> str:
    """The ``task.class`` to store for one of our task classes: the Java name when it has one."""
    return _JAVA_TASK_NAMES.get(python_path, python_path)


_SUFFIXES = {"source": "Connector", "converter": "Converter", "header_converter": "Converter",
             "transformation": "Transformation", "predicate": "Predicate"}


def _aliases(desc: PluginDesc) -> set[str]:
    simple = desc.class_name.rsplit(".", 1)[-1]
    names = {desc.class_name, desc.python_path}
    if "$" in simple:  # Java's simple name of a nested class ($Key, $Value) is ambiguous: full name only
        return names
    names |= {simple, desc.python_path.rsplit(".", 1)[-1]}
    suffix = _SUFFIXES.get(desc.type, "")
    if suffix and simple.endswith(suffix) and simple != suffix:
        names.add(simple[: -len(suffix)])
    return names


def find(kind: tuple[PluginDesc, ...], name: str) -> PluginDesc | None:
    """The plugin of ``kind`` that ``name`` designates, or None."""
    name = name.strip()
    for desc in kind:
        if name in _aliases(desc):
            return desc
    return None


def find_any(name: str) -> PluginDesc | None:
    """Any installed plugin ``name`` designates (connector first, then converter, header converter,
    transformation, predicate)."""
    return find(ALL, name)


def resolve_class(kind: tuple[PluginDesc, ...], interface: str, name: str, raw: str
                  ) -> tuple[PluginDesc | None, str | None, str | None]:
    """The CLASS value ``raw`` of the key ``name``, which must name a plugin of ``kind``: (the plugin, the value
    as reported, the error). A plugin of another kind is reported by its class name with Connect's "does not
    implement" error, an unknown class as null with ``ConfigDef``'s "could not be found"."""
    desc = find(kind, raw)
    if desc is not None:
        return desc, desc.class_name, None
    other = find_any(raw)
    if other is not None:
        return None, other.class_name, f"Class class {other.class_name} does not implement the {interface} interface"
    return None, None, invalid(name, raw, f"Class {raw.strip()} could not be found.")


def load(desc: PluginDesc) -> Any:
    """Import and return the plugin's class."""
    module_name, _, attr = desc.python_path.rpartition(".")
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ConnectError(f"Cannot load plugin {desc.class_name} from {desc.python_path}: {exc}") from exc


def converter_config_def(desc: PluginDesc) -> ConfigDef:
    """The settings the converter (or header converter) ``desc`` declares with its class's ``config_def()``."""
    declared = getattr(load(desc), "config_def", None)
    if declared is None:
        return ConfigDef()
    definition: ConfigDef = declared()
    return definition


def connector_not_found(name: str) -> str:
    """Connect's message for an unknown ``connector.class``."""
    available = ", ".join(d.class_name for d in CONNECTORS)
    return (f"Failed to find any class that implements Connector and which name matches {name}, "
            f"available connectors are: {available}")


def new_converter(name: str, *, header: bool = False) -> Any:
    """A new, unconfigured converter instance."""
    desc = find(HEADER_CONVERTERS if header else CONVERTERS, name)
    if desc is None:
        kind = "HeaderConverter" if header else "Converter"
        raise ConnectError(f"Failed to find any class that implements {kind} and which name matches {name}")
    return load(desc)()

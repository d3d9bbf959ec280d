"""The keys every connector config has besides the connector's own (Connect's ``ConnectorConfig`` and
``SourceConnectorConfig``): groups Common, Transforms, Predicates, Error Handling, Topic Creation, Exactly Once
Support and offsets.topic, with Connect's names, types, defaults, importance, groups, order, width, display names
and validators (KIP-891's plugin versions included).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from connect.api.config import ConfigKey, ConfigType
from connect.config.definition import Spec
from connect.config.validators import (
    at_least,
    invalid,
    non_empty,
    non_empty_without_controls,
    one_of,
    one_of_ignoring_case,
)
from connect.config.values import parse
from connect.runtime.plugins import PluginDesc

COMMON, TRANSFORMS, PREDICATES, ERRORS = "Common", "Transforms", "Predicates", "Error Handling"
TOPIC_CREATION, EXACTLY_ONCE, OFFSETS_TOPIC = "Topic Creation", "Exactly Once Support", "offsets.topic"
ALIAS_LISTS = ("transforms", "predicates")
"""The keys listing the aliases of transformations and predicates."""


def _k(name: str, type_: ConfigType, default: str | None, importance: str, group: str | None, order: int, width: str,
       display: str, doc: str, *, required: bool = False) -> ConfigKey:
    return ConfigKey(name, type_, default, required, importance, doc, group, order, width, display)


def _unique_aliases(name: str, value: Any) -> str | None:
    if value is not None and len(set(value)) != len(value):
        return invalid(name, value, "Duplicate alias provided.")
    return None


def _non_null_unique(name: str, value: Any) -> str | None:
    if value is None:
        return invalid(name, None, "entry must be non null")
    return _unique_aliases(name, value)


def _converter_keys(kind: str, interface: str, order: int) -> tuple[Spec, Spec]:
    doc = "class used to convert between Kafka Connect format and the serialized form that is written to Kafka."
    return (Spec(_k(f"{kind}.converter", ConfigType.CLASS, None, "LOW", COMMON, order, "SHORT",
                    f"{kind.capitalize()} converter class", f"{interface} {doc}")),
            Spec(_k(f"{kind}.converter.plugin.version", ConfigType.STRING, None, "LOW", COMMON, order + 1, "SHORT",
                    f"{kind.capitalize()} converter version", f"Version of the {kind} converter.")))


CONNECTOR_GROUP_KEYS: tuple[Spec, ...] = (
    Spec(_k("name", ConfigType.STRING, None, "HIGH", COMMON, 1, "MEDIUM", "Connector name",
            "Globally unique name to use for this connector.", required=True), (non_empty_without_controls,)),
    Spec(_k("connector.class", ConfigType.STRING, None, "HIGH", COMMON, 2, "LONG", "Connector class",
            "Name or alias of the class for this connector.", required=True)),
    Spec(_k("connector.plugin.version", ConfigType.STRING, None, "MEDIUM", COMMON, 3, "MEDIUM", "Connector version",
            "Version of the connector.")),
    Spec(_k("tasks.max", ConfigType.INT, "1", "HIGH", COMMON, 4, "SHORT", "Tasks max",
            "Maximum number of tasks to use for this connector."), (at_least(1),)),
    Spec(_k("tasks.max.enforce", ConfigType.BOOLEAN, "true", "LOW", COMMON, 5, "SHORT", "Enforce tasks max",
            "(Deprecated) Whether to fail a connector that generates more task configs than tasks.max.")),
    *_converter_keys("key", "Converter", 6),
    *_converter_keys("value", "Converter", 8),
    *_converter_keys("header", "HeaderConverter", 10),
    Spec(_k("transforms", ConfigType.LIST, "", "LOW", TRANSFORMS, 12, "LONG", "Transforms",
            "Aliases for the transformations to be applied to records."), (_unique_aliases,)),
    Spec(_k("predicates", ConfigType.LIST, "", "LOW", PREDICATES, 13, "LONG", "Predicates",
            "Aliases for the predicates used by transformations."), (_unique_aliases,)),
    Spec(_k("config.action.reload", ConfigType.STRING, "restart", "LOW", COMMON, 14, "MEDIUM", "Reload Action",
            "What to do when a config provider reports a changed value: 'restart' the connector or 'none'."),
         (one_of("none", "restart"),)),
    Spec(_k("errors.retry.timeout", ConfigType.LONG, "0", "MEDIUM", ERRORS, 1, "MEDIUM", "Retry Timeout for Errors",
            "Maximum milliseconds a failed operation is retried; 0 means no retries, -1 retries forever.")),
    Spec(_k("errors.retry.delay.max.ms", ConfigType.LONG, "60000", "MEDIUM", ERRORS, 2, "MEDIUM",
            "Maximum Delay Between Retries for Errors",
            "Maximum milliseconds between two retries (jitter is added once it is reached).")),
    Spec(_k("errors.tolerance", ConfigType.STRING, "none", "MEDIUM", ERRORS, 3, "SHORT", "Error Tolerance",
            "'none': an error fails the task at once; 'all': problematic records are skipped."),
         (one_of("none", "all"),)),
    Spec(_k("errors.log.enable", ConfigType.BOOLEAN, "false", "MEDIUM", ERRORS, 4, "SHORT", "Log Errors",
            "Whether to log each error with the failed operation and the problematic record.")),
    Spec(_k("errors.log.include.messages", ConfigType.BOOLEAN, "false", "MEDIUM", ERRORS, 5, "SHORT",
            "Log Error Details", "Whether the error log also includes the record's key, value and headers.")),
)
"""``ConnectorConfig``'s keys, in Connect's order."""

SOURCE_GROUP_KEYS: tuple[Spec, ...] = (
    Spec(_k("topic.creation.groups", ConfigType.LIST, "", "LOW", TOPIC_CREATION, 1, "LONG", "Topic Creation Groups",
            "Groups of configurations for topics created by source connectors."), (_non_null_unique,)),
    Spec(_k("exactly.once.support", ConfigType.STRING, "requested", "MEDIUM", EXACTLY_ONCE, 2, "SHORT",
            "Exactly once support",
            "'requested' or 'required'; 'required' makes validation fail when exactly-once cannot be provided."),
         (one_of_ignoring_case("REQUIRED", "REQUESTED"),)),
    Spec(_k("transaction.boundary", ConfigType.STRING, "poll", "MEDIUM", EXACTLY_ONCE, 3, "SHORT",
            "Transaction Boundary", "Where producer transactions end: 'poll', 'interval' or 'connector'."),
         (one_of_ignoring_case("INTERVAL", "POLL", "CONNECTOR"),)),
    Spec(_k("transaction.boundary.interval.ms", ConfigType.LONG, None, "LOW", EXACTLY_ONCE, 4, "SHORT",
            "Transaction boundary interval",
            "Commit interval of transactions when transaction.boundary is 'interval'."),
         (at_least(0, allow_null=True),)),
    Spec(_k("offsets.storage.topic", ConfigType.STRING, None, "LOW", OFFSETS_TOPIC, 1, "LONG", "Offsets topic",
            "A separate offsets topic for this connector; empty means the worker's offsets topic."), (non_empty,)),
)
"""``SourceConnectorConfig``'s own keys."""


def source_connector_keys(desc: PluginDesc) -> list[ConfigKey]:
    """The framework keys of the source connector ``desc`` as ``GET .../config`` lists them (the connector's version
    as ``connector.plugin.version``'s default)."""
    keys = [s.key for s in CONNECTOR_GROUP_KEYS + SOURCE_GROUP_KEYS]
    return [replace(k, default=desc.version) if k.name == "connector.plugin.version" else k for k in keys]


def aliases(props: Mapping[str, str | None]) -> dict[str, list[str]]:
    """The unique aliases of ``transforms`` and ``predicates`` that ``props`` sets, in order."""
    out: dict[str, list[str]] = {}
    for list_key in ALIAS_LISTS:
        raw = props.get(list_key)
        if raw is not None:
            out[list_key] = list(dict.fromkeys(parse(list_key, ConfigType.LIST, raw)))
    return out

"""Plugin config descriptions and connector config validation, as Connect's REST API reports them
(``GET /connector-plugins/{p}/config`` and ``PUT /connector-plugins/{p}/config/validate``).

Everything here is a pure function of plugin descriptions and a raw config map; the results are
plain dicts whose key order is the JSON key order Kafka Connect 4.3 writes:

* ConfigKeyInfo: ``name, type, required, default_value, importance, documentation, group,
  order_in_group, width, display_name, dependents`` (4.x serialises ``order_in_group`` right after
  ``group``; 3.x wrote ``order`` last);
* ConfigValueInfo: ``name, value, recommended_values, errors, visible``;
* ConfigInfos: ``name, error_count, groups, configs`` with ``configs`` items ``{definition, value}``.

Validation follows Java's ``ConfigDef.validate`` semantics: a value is parsed by its type (strings
are trimmed, lists split on commas), a value that does not parse is reported as ``null``, and a
key's validator also runs on the parsed value (``null`` included) so one key can carry several
errors. Every error is reported; a wrong config never raises.

The framework keys (``ConnectorConfig`` and ``SourceConnectorConfig``: groups Common, Transforms,
Predicates, Error Handling, Topic Creation, Exactly Once Support, offsets.topic) are defined here with
Connect's names, types, defaults, importance, groups, order, width and display names.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from connect.api.config import ConfigDef, ConfigKey, ConfigType, ConfigValue
from connect.api.errors import ConfigError
from connect.runtime import plugins
from connect.runtime.alias_validation import alias_entries
from connect.runtime.plugins import PluginDesc
from connect.runtime.rest_errors import BadRequestError
from connect.runtime.worker_config import CONNECTOR_CONFIG_DEF

log = logging.getLogger(__name__)

Check = Callable[[str, Any], str | None]
"""A Java-style validator: ``(key name, parsed value or None)`` → a full error message or None."""

NULL_VALUE_ERROR = "Null value can not be supplied as the configuration value."


@dataclass(frozen=True, slots=True)
class Spec:
    """A key the framework validates itself: its definition and its (parsed-value) check."""

    key: ConfigKey
    check: Check | None = None


def invalid(name: str, value: Any, reason: str) -> str:
    """Java's ``ConfigException(name, value, message)`` text."""
    return f"Invalid value {java_str(value)} for configuration {name}: {reason}"


def java_str(value: Any) -> str:
    """``String.valueOf`` of a parsed config value (lists as ``[a, b]``, null as ``null``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(java_str(v) for v in value) + "]"
    if isinstance(value, float):
        return _java_double(value)
    return str(value)


def _java_double(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == int(value) and abs(value) < 1e7:
        return f"{int(value)}.0"
    return repr(value)


# --- parsing (Java's ConfigDef.parseType) -------------------------------------------------------
_INT_RE = re.compile(r"^[+-]?[0-9]+$")
_BOUNDS = {ConfigType.SHORT: 2 ** 15, ConfigType.INT: 2 ** 31, ConfigType.LONG: 2 ** 63}
_COMMA = re.compile(r"\s*,\s*")


class ParseError(ValueError):
    """A raw value that does not parse as its key's type; ``str()`` is Java's message."""


def parse(name: str, type_: ConfigType, raw: str) -> Any:
    """The typed value of ``raw`` (CLASS stays a trimmed name); raises :class:`ParseError`."""
    trimmed = raw.strip()
    if type_ is ConfigType.BOOLEAN:
        if trimmed.lower() in ("true", "false"):
            return trimmed.lower() == "true"
        raise ParseError(invalid(name, raw, "Expected value to be either true or false"))
    if type_ in _BOUNDS:
        bound = _BOUNDS[type_]
        if _INT_RE.match(trimmed) and -bound <= int(trimmed) < bound:
            return int(trimmed)
        raise ParseError(invalid(name, raw, f"Not a number of type {type_.value}"))
    if type_ is ConfigType.DOUBLE:
        try:
            return float(trimmed.rstrip("dDfF") if trimmed[-1:] in "dDfF" and trimmed[:-1] else trimmed)
        except ValueError:
            raise ParseError(invalid(name, raw, "Not a number of type DOUBLE")) from None
    if type_ is ConfigType.LIST:
        return [] if not trimmed else _COMMA.split(trimmed)
    return trimmed


def render(type_: ConfigType, value: Any) -> str | None:
    """A parsed value as ConfigValueInfo shows it (``ConfigDef.convertToString``; passwords hidden)."""
    if value is None:
        return None
    if type_ is ConfigType.PASSWORD:
        return "[hidden]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    if isinstance(value, float):
        return _java_double(value)
    return str(value)


def _default(key: ConfigKey) -> Any:
    if key.default is None:
        return None
    try:
        return parse(key.name, key.type, key.default)
    except ParseError:
        return key.default


# --- entity dicts ----------------------------------------------------------------------------------
def config_key_info(key: ConfigKey) -> dict[str, Any]:
    """Connect's ConfigKeyInfo for ``key`` (``default_value`` null when the key is required)."""
    return {
        "name": key.name,
        "type": key.type.value,
        "required": key.required,
        "default_value": None if key.required else key.default,
        "importance": key.importance,
        "documentation": key.documentation,
        "group": key.group,
        "order_in_group": key.order,
        "width": key.width,
        "display_name": key.display_name if key.display_name is not None else key.name,
        "dependents": [],
    }


def config_value_info(value: ConfigValue) -> dict[str, Any]:
    """Connect's ConfigValueInfo for ``value``."""
    return {
        "name": value.name,
        "value": value.value,
        "recommended_values": list(value.recommended_values),
        "errors": list(value.errors),
        "visible": value.visible,
    }


def config_infos(name: str, groups: Iterable[str], entries: Sequence[tuple[ConfigKey | None, ConfigValue]]
                 ) -> dict[str, Any]:
    """Connect's ConfigInfos: ``error_count`` sums the error messages of every entry."""
    return {
        "name": name,
        "error_count": sum(len(value.errors) for _key, value in entries),
        "groups": list(groups),
        "configs": [{"definition": None if key is None else config_key_info(key), "value": config_value_info(value)}
                    for key, value in entries],
    }


def groups_of(keys: Iterable[ConfigKey]) -> list[str]:
    """The groups in order of first definition (``ConfigDef.groups()``)."""
    return list(dict.fromkeys(k.group for k in keys if k.group))


# --- checks -----------------------------------------------------------------------------------------
def _non_empty_no_controls(name: str, value: Any) -> str | None:
    if value is None:
        return None
    if not str(value):
        return invalid(name, value, "String may not be empty")
    controls = [str(ord(c)) for c in str(value) if ord(c) < 32 or 127 <= ord(c) < 160]
    if controls:
        return invalid(name, value, "String may not contain control sequences but had the following ASCII "
                                    f"chars: {', '.join(controls)}")
    return None


def _at_least(minimum: int, *, allow_null: bool = False) -> Check:
    def check(name: str, value: Any) -> str | None:
        if value is None:
            return None if allow_null else invalid(name, None, "Value must be non-null")
        return None if value >= minimum else invalid(name, value, f"Value must be at least {minimum}")
    return check


def _one_of(*allowed: str) -> Check:
    def check(name: str, value: Any) -> str | None:
        return None if value in allowed else invalid(name, value, f"String must be one of: {', '.join(allowed)}")
    return check


def _one_of_ignoring_case(*allowed: str) -> Check:
    def check(name: str, value: Any) -> str | None:
        if value is not None and str(value).upper() in allowed:
            return None
        return invalid(name, value, f"String must be one of (case insensitive): {', '.join(allowed)}")
    return check


def _unique_aliases(name: str, value: Any) -> str | None:
    if value is not None and len(set(value)) != len(value):
        return invalid(name, value, "Duplicate alias provided.")
    return None


def _non_null_unique(name: str, value: Any) -> str | None:
    if value is None:
        return invalid(name, None, "entry must be non null")
    return _unique_aliases(name, value)


def _non_empty(name: str, value: Any) -> str | None:
    return None if value is None or str(value) else invalid(name, value, "String must be non-empty")


# --- framework keys (ConnectorConfig, SourceConnectorConfig) ---------------------------------------
_BASE = {k.name: k for k in CONNECTOR_CONFIG_DEF.keys}
COMMON, TRANSFORMS, PREDICATES, ERRORS = "Common", "Transforms", "Predicates", "Error Handling"
TOPIC_CREATION, EXACTLY_ONCE, OFFSETS_TOPIC = "Topic Creation", "Exactly Once Support", "offsets.topic"


def _k(name: str, type_: ConfigType, default: str | None, importance: str, group: str | None, order: int, width: str,
       display: str, doc: str, *, required: bool = False) -> ConfigKey:
    return ConfigKey(name, type_, default, required, importance, doc, group, order, width, display)


def _converter_version_key(kind: str, order: int) -> ConfigKey:
    return _k(f"{kind}.converter.plugin.version", ConfigType.STRING, None, "LOW", COMMON, order, "SHORT",
              f"{kind.capitalize()} converter version", f"Version of the {kind} converter.")


CONNECTOR_GROUP_KEYS: tuple[Spec, ...] = (
    Spec(replace(_BASE["name"], order=1), _non_empty_no_controls),
    Spec(replace(_BASE["connector.class"], order=2)),
    Spec(_k("connector.plugin.version", ConfigType.STRING, None, "MEDIUM", COMMON, 3, "MEDIUM", "Connector version",
            "Version of the connector.")),
    Spec(replace(_BASE["tasks.max"], order=4), _at_least(1)),
    Spec(_k("tasks.max.enforce", ConfigType.BOOLEAN, "true", "LOW", COMMON, 5, "SHORT", "Enforce tasks max",
            "(Deprecated) Whether to fail a connector that generates more task configs than tasks.max.")),
    Spec(replace(_BASE["key.converter"], order=6)),
    Spec(_converter_version_key("key", 7)),
    Spec(replace(_BASE["value.converter"], order=8)),
    Spec(_converter_version_key("value", 9)),
    Spec(replace(_BASE["header.converter"], order=10)),
    Spec(_converter_version_key("header", 11)),
    Spec(_k("transforms", ConfigType.LIST, "", "LOW", TRANSFORMS, 12, "LONG", "Transforms",
            "Aliases for the transformations to be applied to records."), _unique_aliases),
    Spec(_k("predicates", ConfigType.LIST, "", "LOW", PREDICATES, 13, "LONG", "Predicates",
            "Aliases for the predicates used by transformations."), _unique_aliases),
    Spec(_k("config.action.reload", ConfigType.STRING, "restart", "LOW", COMMON, 14, "MEDIUM", "Reload Action",
            "What to do when a config provider reports a changed value: 'restart' the connector or 'none'."),
         _one_of("none", "restart")),
    Spec(_k("errors.retry.timeout", ConfigType.LONG, "0", "MEDIUM", ERRORS, 1, "MEDIUM", "Retry Timeout for Errors",
            "Maximum milliseconds a failed operation is retried; 0 means no retries, -1 retries forever.")),
    Spec(_k("errors.retry.delay.max.ms", ConfigType.LONG, "60000", "MEDIUM", ERRORS, 2, "MEDIUM",
            "Maximum Delay Between Retries for Errors",
            "Maximum milliseconds between two retries (jitter is added once it is reached).")),
    Spec(_k("errors.tolerance", ConfigType.STRING, "none", "MEDIUM", ERRORS, 3, "SHORT", "Error Tolerance",
            "'none': an error fails the task at once; 'all': problematic records are skipped."),
         _one_of("none", "all")),
    Spec(_k("errors.log.enable", ConfigType.BOOLEAN, "false", "MEDIUM", ERRORS, 4, "SHORT", "Log Errors",
            "Whether to log each error with the failed operation and the problematic record.")),
    Spec(_k("errors.log.include.messages", ConfigType.BOOLEAN, "false", "MEDIUM", ERRORS, 5, "SHORT",
            "Log Error Details", "Whether the error log also includes the record's key, value and headers.")),
)
"""``ConnectorConfig``'s keys, in Connect's order (KIP-891 plugin versions included)."""

SOURCE_GROUP_KEYS: tuple[Spec, ...] = (
    Spec(_k("topic.creation.groups", ConfigType.LIST, "", "LOW", TOPIC_CREATION, 1, "LONG", "Topic Creation Groups",
            "Groups of configurations for topics created by source connectors."), _non_null_unique),
    Spec(_k("exactly.once.support", ConfigType.STRING, "requested", "MEDIUM", EXACTLY_ONCE, 2, "SHORT",
            "Exactly once support",
            "'requested' or 'required'; 'required' makes validation fail when exactly-once cannot be provided."),
         _one_of_ignoring_case("REQUIRED", "REQUESTED")),
    Spec(_k("transaction.boundary", ConfigType.STRING, "poll", "MEDIUM", EXACTLY_ONCE, 3, "SHORT",
            "Transaction Boundary", "Where producer transactions end: 'poll', 'interval' or 'connector'."),
         _one_of_ignoring_case("INTERVAL", "POLL", "CONNECTOR")),
    Spec(_k("transaction.boundary.interval.ms", ConfigType.LONG, None, "LOW", EXACTLY_ONCE, 4, "SHORT",
            "Transaction boundary interval",
            "Commit interval of transactions when transaction.boundary is 'interval'."),
         _at_least(0, allow_null=True)),
    Spec(_k("offsets.storage.topic", ConfigType.STRING, None, "LOW", OFFSETS_TOPIC, 1, "LONG", "Offsets topic",
            "A separate offsets topic for this connector; empty means the worker's offsets topic."), _non_empty),
)
"""``SourceConnectorConfig``'s own keys."""


# --- converters -------------------------------------------------------------------------------------
_CONVERTER_TYPE = _k("converter.type", ConfigType.STRING, None, "LOW", None, -1, "NONE", "converter.type",
                     "How this converter will be used.", required=True)
_JSON_KEYS = (
    _CONVERTER_TYPE,
    _k("schemas.enable", ConfigType.BOOLEAN, "true", "HIGH", "Schemas", 0, "MEDIUM", "Enable Schemas",
       "Include schemas within each of the serialized values and keys."),
    _k("schemas.cache.size", ConfigType.INT, "1000", "HIGH", "Schemas", 1, "MEDIUM", "Schema Cache Size",
       "The maximum number of schemas that can be cached in this converter instance."),
    _k("schema.content", ConfigType.STRING, None, "HIGH", "Schemas", 2, "MEDIUM", "Schema Content",
       "A schema used for every message instead of the schemas within the messages (sink side only)."),
    _k("decimal.format", ConfigType.STRING, "BASE64", "LOW", "Serialization", 0, "MEDIUM", "Decimal Format",
       "How decimals are serialized: 'BASE64' (default) or 'NUMERIC', case insensitive."),
    _k("replace.null.with.default", ConfigType.BOOLEAN, "true", "LOW", "Serialization", 1, "MEDIUM",
       "Replace null with default", "Whether a null field with a default value is written as that default."),
)
_STRING_KEYS = (
    _CONVERTER_TYPE,
    _k("converter.encoding", ConfigType.STRING, "UTF-8", "HIGH", None, -1, "MEDIUM", "Encoding",
       "The character set used to encode strings as bytes."),
)
def _metadata_source(name: str, value: Any) -> str | None:
    from converters.cloudevents import parse_metadata_source  # a plugin module, imported when needed

    try:
        parse_metadata_source(str(value))
    except ConfigError as exc:
        return invalid(name, value, exc.reason)
    return None


def _json_only(name: str, value: Any) -> str | None:
    if str(value).lower() == "avro":
        return invalid(name, value, "Avro CloudEvents need a schema registry, which this worker does not support; "
                                    "use json")
    return _one_of("json", "avro")(name, value)


_CLOUDEVENTS_KEYS = (
    _k("serializer.type", ConfigType.STRING, "json", "MEDIUM", None, -1, "SHORT", "serializer.type",
       "Serialization of the CloudEvents envelope: json (avro needs a schema registry)."),
    _k("data.serializer.type", ConfigType.STRING, "json", "MEDIUM", None, -1, "SHORT", "data.serializer.type",
       "Serialization of the data attribute: json (avro needs a schema registry)."),
    _k("metadata.source", ConfigType.STRING, "value,id:generate,type:generate,traceparent:header,"
       "dataSchemaName:generate", "MEDIUM", None, -1, "MEDIUM", "metadata.source",
       "Where source, op and transaction come from (value or header), then id:generate|header, "
       "type:generate|header."),
    _k("extension.attributes.enable", ConfigType.BOOLEAN, "true", "MEDIUM", None, -1, "SHORT",
       "extension.attributes.enable", "Whether the iodebezium* extension attributes are written."),
    _k("schema.cloudevents.name", ConfigType.STRING, None, "LOW", None, -1, "MEDIUM", "schema.cloudevents.name",
       "The CloudEvents schema name (Avro only)."),
    _k("schema.name.adjustment.mode", ConfigType.STRING, "avro", "LOW", None, -1, "SHORT",
       "schema.name.adjustment.mode", "Schema name adjustment: none, avro or avro_unicode (Avro only)."),
)
_CONVERTER_CHECKS: dict[str, Check] = {
    "converter.type": _one_of("key", "value", "header"),
    "decimal.format": _one_of_ignoring_case("NUMERIC", "BASE64"),
    "metadata.source": _metadata_source,
    "serializer.type": _json_only,
    "data.serializer.type": _json_only,
    "schema.name.adjustment.mode": _one_of("none", "avro", "avro_unicode"),
}
CONVERTER_KEYS: dict[str, tuple[ConfigKey, ...]] = {
    "org.apache.kafka.connect.json.JsonConverter": _JSON_KEYS,
    "org.apache.kafka.connect.storage.StringConverter": _STRING_KEYS,
    "org.apache.kafka.connect.converters.ByteArrayConverter": (_CONVERTER_TYPE,),
    "org.apache.kafka.connect.storage.SimpleHeaderConverter": (),
    "io.debezium.converters.CloudEventsConverter": _CLOUDEVENTS_KEYS,
}
"""The config keys of each installed converter, in definition order (``GET .../config``)."""

_VALIDATE_ORDER = {  # the order Connect lists a converter's keys in a validation report
    "org.apache.kafka.connect.json.JsonConverter": ("decimal.format", "converter.type", "schemas.cache.size",
                                                    "replace.null.with.default", "schemas.enable", "schema.content"),
}


def _all_plugins() -> tuple[PluginDesc, ...]:
    return plugins.CONNECTORS + plugins.CONVERTERS + plugins.HEADER_CONVERTERS + _transformations() + _predicates()


def _transformations() -> tuple[PluginDesc, ...]:
    return tuple(getattr(plugins, "TRANSFORMATIONS", ()))


def _predicates() -> tuple[PluginDesc, ...]:
    return tuple(getattr(plugins, "PREDICATES", ()))


def find_plugin(name: str) -> PluginDesc | None:
    """Any installed plugin (connector first, then converter, header converter, transformation, predicate)."""
    for kind in (plugins.CONNECTORS, plugins.CONVERTERS, plugins.HEADER_CONVERTERS, _transformations(),
                 _predicates()):
        if (desc := plugins.find(kind, name)) is not None:
            return desc
    return None


# --- GET /connector-plugins/{plugin}/config ---------------------------------------------------------
def connector_static_keys(desc: PluginDesc) -> list[ConfigKey]:
    """The framework keys of a source connector as ``GET .../config`` lists them."""
    keys = [s.key for s in CONNECTOR_GROUP_KEYS + SOURCE_GROUP_KEYS]
    return [replace(k, default=desc.version) if k.name == "connector.plugin.version" else k for k in keys]


def plugin_config(desc: PluginDesc) -> list[dict[str, Any]]:
    """``GET /connector-plugins/{plugin}/config``: the plugin's own keys, then (connectors) the framework
    keys it does not define itself."""
    if desc in plugins.CONNECTORS:
        own = list(plugins.load(desc)().config().keys)
        names = {k.name for k in own}
        keys = own + [k for k in connector_static_keys(desc) if k.name not in names]
    elif desc.type in ("transformation", "predicate"):
        keys = list(plugins.load(desc)().config().keys)
    else:
        keys = list(CONVERTER_KEYS.get(desc.class_name, ()))
    return [config_key_info(k) for k in keys]


# --- PUT /connector-plugins/{plugin}/config/validate -------------------------------------------------
def _normalized(name: str) -> str:
    suffix = "Connector"
    return name[: -len(suffix)] if name.endswith(suffix) and len(name) > len(suffix) else name


def java_map(props: Mapping[str, str | None]) -> str:
    """A map as Java's ``AbstractMap.toString`` writes it."""
    return "{" + ", ".join(f"{k}={'null' if v is None else v}" for k, v in props.items()) + "}"


def resolve_validate_request(path_plugin: str, props: Mapping[str, str | None]) -> PluginDesc:
    """The connector a validate request is about, or a 400 (Connect's checks, in Connect's order)."""
    included = props.get("connector.class")
    if included is not None and not _normalized(included).endswith(_normalized(path_plugin)):
        raise BadRequestError(f"Included connector type {included} does not match request type {path_plugin}")
    if included is None:
        raise BadRequestError(f"Connector config {java_map(props)} contains no connector type")
    desc = plugins.find(plugins.CONNECTORS, included)
    if desc is None:
        raise BadRequestError(plugins.connector_not_found(included))
    return desc


def validate_specs(specs: Sequence[Spec], props: Mapping[str, str | None]) -> list[ConfigValue]:
    """Java's ``ConfigDef.validateAll`` over ``specs``: one value per key, with every error."""
    results = []
    for spec in specs:
        key, value = spec.key, ConfigValue(spec.key.name, None)
        parsed: Any = None
        if key.name in props:
            raw = props[key.name]
            if raw is not None:
                try:
                    parsed = parse(key.name, key.type, raw)
                except ParseError as exc:
                    value.errors.append(str(exc))
        elif key.required:
            value.errors.append(f'Missing required configuration "{key.name}" which has no default value.')
        else:
            parsed = _default(key)
        if spec.check is not None and (message := spec.check(key.name, parsed)) is not None:
            value.errors.append(message)
        value.value = render(key.type, parsed)
        results.append(value)
    return results


@dataclass
class _Report:
    keys: dict[str, ConfigKey]
    values: dict[str, ConfigValue]
    groups: list[str]
    undefined: dict[str, ConfigValue]

    def add(self, keys: Iterable[ConfigKey], values: Iterable[ConfigValue]) -> None:
        for key in keys:
            self.keys[key.name] = key
            if key.group and key.group not in self.groups:
                self.groups.append(key.group)
        for value in values:
            self.values[value.name] = value

    def entries(self) -> list[tuple[ConfigKey | None, ConfigValue]]:
        undefined = [v for name, v in {**self.undefined, **self.values}.items() if name not in self.keys]
        return [(None, v) for v in undefined] + [(k, self.values.get(n, ConfigValue(n, None)))
                                                 for n, k in self.keys.items()]


def _class_check(kind: tuple[PluginDesc, ...], interface: str) -> Callable[[str, str], tuple[str | None, str | None]]:
    """Resolve a CLASS value among ``kind``: (rendered value, error)."""
    def resolve(name: str, raw: str) -> tuple[str | None, str | None]:
        desc = plugins.find(kind, raw)
        if desc is not None:
            return desc.class_name, None
        other = next((d for d in _all_plugins() if plugins.find((d,), raw) is not None), None)
        if other is not None:
            return other.class_name, f"Class class {other.class_name} does not implement the {interface} interface"
        return None, invalid(name, raw, f"Class {raw.strip()} could not be found.")
    return resolve


_CONVERTER_KINDS = {"key": (plugins.CONVERTERS, "Converter"), "value": (plugins.CONVERTERS, "Converter"),
                    "header": (plugins.HEADER_CONVERTERS, "HeaderConverter")}


def _framework_values(specs: Sequence[Spec], props: Mapping[str, str | None], desc: PluginDesc,
                      worker_defaults: Mapping[str, str] | None) -> tuple[list[ConfigKey], list[ConfigValue],
                                                                         dict[str, PluginDesc]]:
    """Validate the framework keys; converter classes and plugin versions are resolved against the
    installed plugins (defaults from the worker when ``worker_defaults`` is given)."""
    keys = [s.key for s in specs]
    values = validate_specs(specs, props)
    by_name = {v.name: v for v in values}
    key_index = {k.name: i for i, k in enumerate(keys)}
    chosen: dict[str, PluginDesc] = {}

    version = by_name["connector.plugin.version"]
    keys[key_index["connector.plugin.version"]] = replace(keys[key_index["connector.plugin.version"]],
                                                          default=desc.version)
    version.recommended_values = [desc.version]
    if version.value is None and "connector.plugin.version" not in props:
        version.value = desc.version

    for kind, (candidates, interface) in _CONVERTER_KINDS.items():
        name = f"{kind}.converter"
        value = by_name[name]
        version_name = f"{name}.plugin.version"
        if worker_defaults is not None:  # Connect's recommenders are part of the worker-enriched definitions
            value.recommended_values = sorted({d.class_name for d in candidates})
        default = (worker_defaults or {}).get(name)
        if worker_defaults is not None:
            keys[key_index[name]] = replace(keys[key_index[name]], default=default)
        raw = props.get(name)
        explicit = raw is not None
        if raw is None and name not in props:
            raw = default
        resolved: PluginDesc | None = None
        if raw is not None:
            value.value, error = _class_check(candidates, interface)(name, raw)
            if error is not None:
                value.errors.append(error)
                if error.startswith("Invalid value"):
                    by_name[version_name].visible = False
            else:
                resolved = plugins.find(candidates, raw)
        if resolved is None:
            continue
        if explicit:
            chosen[kind] = resolved
        if worker_defaults is not None:
            keys[key_index[version_name]] = replace(keys[key_index[version_name]], default=resolved.version)
            by_name[version_name].recommended_values = [resolved.version]
            if by_name[version_name].value is None and version_name not in props:
                by_name[version_name].value = resolved.version
    return keys, values, chosen


def _aliases(props: Mapping[str, str | None]) -> dict[str, list[str]]:
    """The unique aliases of ``transforms`` and ``predicates``, in order."""
    out: dict[str, list[str]] = {}
    for prefix in ("transforms", "predicates"):
        raw = props.get(prefix)
        if raw is not None:
            out[prefix] = list(dict.fromkeys(parse(prefix, ConfigType.LIST, raw)))
    return out


def _connector_values(connector: Any, definition: ConfigDef, props: Mapping[str, str | None]) -> list[ConfigValue]:
    """The connector's own validation, with values and type errors shown the way Java's ConfigDef does."""
    try:
        results: list[ConfigValue] = list(connector.validate(props))
    except Exception as exc:  # a connector bug must not turn a report into a 500
        log.warning("Connector validation raised", exc_info=exc)
        return [ConfigValue("connector.class", props.get("connector.class"),
                            [f"The connector's validation failed: {type(exc).__name__}: {exc}"])]
    keys = {k.name: k for k in definition.keys}
    for value in results:
        key = keys.get(value.name)
        if key is None:
            continue
        raw = props.get(key.name)
        if key.name not in props:
            value.value = render(key.type, _default(key))
        elif raw is None:
            value.value = None
        else:
            try:
                value.value = render(key.type, parse(key.name, key.type, raw))
            except ParseError as exc:
                value.value = None
                type_error = f"Invalid value {raw} for configuration {key.name}: "
                kept = [e for e in value.errors if not (e.startswith(type_error) and (
                    e[len(type_error):].startswith(("Not a", "Expected value"))))]
                value.errors = [str(exc), *kept]
    return results


def _converter_entries(kind: str, desc: PluginDesc, props: Mapping[str, str | None]
                       ) -> tuple[list[ConfigKey], list[ConfigValue]]:
    prefix = f"{kind}.converter."
    own = {k.name: k for k in CONVERTER_KEYS.get(desc.class_name, ())}
    order = _VALIDATE_ORDER.get(desc.class_name, tuple(own))
    specs = [Spec(own[n], _CONVERTER_CHECKS.get(n)) for n in order]
    sub = {k[len(prefix):]: v for k, v in props.items() if k.startswith(prefix)}
    sub["converter.type"] = kind
    values = validate_specs(specs, sub)
    for value in values:
        value.name = prefix + value.name
    return [replace(s.key, name=prefix + s.key.name) for s in specs], values


_CLIENT_PREFIXES = ("producer.override.", "consumer.override.", "admin.override.")
_PRINCIPAL_KEYS = frozenset({"sasl.jaas.config", "sasl.mechanism", "security.protocol"})


def client_override_error(key: str, worker: Mapping[str, str]) -> str | None:
    """Connect's ``connector.client.config.override.policy`` check of one ``*.override.*`` key."""
    prefix = next((p for p in _CLIENT_PREFIXES if key.startswith(p)), None)
    if prefix is None:
        return None
    policy = worker.get("connector.client.config.override.policy", "All")
    name = key[len(prefix):]
    allowed = {"All": True, "None": False, "Principal": name in _PRINCIPAL_KEYS,
               "Allowlist": name in {n.strip() for n in worker.get(
                   "connector.client.config.override.allowlist", "").split(",") if n.strip()}}.get(policy, True)
    if allowed:
        return None
    return f"The '{policy}' policy does not allow '{name}' to be overridden in the connector configuration."


def validate_connector_config(props: Mapping[str, str | None], desc: PluginDesc, *,
                              worker_defaults: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``PUT /connector-plugins/{plugin}/config/validate`` for the connector ``desc``: ConfigInfos with
    every error of the framework keys, the connector's own keys and the explicitly chosen converters.

    ``worker_defaults`` maps ``key.converter``/``value.converter``/``header.converter`` to the worker's
    classes (what a connector that does not set them gets).
    """
    name = props.get("connector.class") or desc.class_name
    requested = props.get("connector.plugin.version")
    if requested is not None and requested.strip() != desc.version:
        spec = requested.strip()
        window = spec if spec[:1] in "[(" else f"[{spec},{spec}]"
        message = (f"Plugin {desc.class_name} not found that matches the version range {window}, "
                   f"available versions: [{desc.version}]")
        keys, values, _ = _framework_values(CONNECTOR_GROUP_KEYS, props, desc, None)
        for value in values:
            if value.name in ("connector.class", "connector.plugin.version"):
                value.errors.append(message)
        report = _Report({}, {}, [], {})
        report.add(keys, values)
        return config_infos(name, report.groups, report.entries())

    report = _Report({}, {}, [], {})
    keys, values, converters = _framework_values(CONNECTOR_GROUP_KEYS + SOURCE_GROUP_KEYS, props, desc,
                                                 worker_defaults)
    base = {v.name: v for v in values}
    alias_keys, alias_values = alias_entries(props, _aliases(props))
    for key_name, raw in props.items():
        if raw is None:
            target = base.get(key_name) or next((v for v in alias_values if v.name == key_name), None)
            if target is None:
                target = report.undefined.setdefault(key_name, ConfigValue(key_name, None))
            target.errors.append(NULL_VALUE_ERROR)
    for key_name, raw in props.items():
        error = client_override_error(key_name, worker_defaults or {})
        if error is not None:
            target = base.get(key_name) or report.undefined.setdefault(key_name, ConfigValue(key_name, raw))
            target.errors.append(error)
    report.add(keys + alias_keys, values + alias_values)

    connector = plugins.load(desc)()
    definition: ConfigDef = connector.config()
    report.add(definition.keys, _connector_values(connector, definition, props))
    entries = report.entries()
    groups = list(report.groups)
    for kind in ("header", "key", "value"):
        if kind in converters:
            conv_keys, conv_values = _converter_entries(kind, converters[kind], props)
            entries += list(zip(conv_keys, conv_values, strict=True))
            groups += [g for g in groups_of(conv_keys) if g not in groups]
    return config_infos(name, groups, entries)

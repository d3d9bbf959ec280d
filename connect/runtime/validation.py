"""Connector config validation as Connect's ``PUT /connector-plugins/{plugin}/config/validate`` reports it, and
the plugin config descriptions of ``GET /connector-plugins/{plugin}/config`` (Connect's
``AbstractHerder.validateConnectorConfig``).

A report (:mod:`connect.runtime.config_infos`' shapes) is assembled in Connect's order: the framework keys
(:mod:`connect.runtime.connector_config`) with the converter classes and plugin versions resolved among the
installed plugins, the keys of each transform and predicate alias (:mod:`connect.runtime.alias_validation`), the
connector's own validation, then the keys each explicitly chosen converter declares (its ``config_def()``, in the
order ``ConfigDef.validate`` returns them). Null values, and client overrides the worker's policy refuses
(:mod:`connect.runtime.client_config_override`), are errors too. Values are parsed and checked by the ConfigDef
kernel (:mod:`connect.config`). Every error is reported; a wrong config never raises.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from connect.api.config import ConfigDef, ConfigKey, ConfigValue
from connect.api.connector import ConnectorTransactionBoundaries, ExactlyOnceSupport
from connect.config.definition import Spec, groups_of, spec_of, validate_all, validate_order
from connect.config.values import NULL_VALUE_ERROR, ParseError, default_value, parse, render
from connect.javalang import hash_map_to_string
from connect.runtime import plugins
from connect.runtime.alias_validation import alias_entries
from connect.runtime.client_config_override import client_override_error
from connect.runtime.config_infos import config_infos, config_key_info
from connect.runtime.connector_config import CONNECTOR_GROUP_KEYS, SOURCE_GROUP_KEYS, aliases, source_connector_keys
from connect.runtime.plugins import PluginDesc
from connect.runtime.rest_errors import BadRequestError

log = logging.getLogger(__name__)


# --- GET /connector-plugins/{plugin}/config ---------------------------------------------------------
def plugin_config(desc: PluginDesc) -> list[dict[str, Any]]:
    """``GET /connector-plugins/{plugin}/config``: the plugin's own keys, then (connectors) the framework
    keys it does not define itself."""
    if desc in plugins.CONNECTORS:
        own = list(plugins.load(desc)().config().keys)
        names = {k.name for k in own}
        keys = own + [k for k in source_connector_keys(desc) if k.name not in names]
    elif desc.type in ("transformation", "predicate"):
        keys = list(plugins.load(desc)().config().keys)
    else:
        keys = list(plugins.converter_config_def(desc).keys)
    return [config_key_info(k) for k in keys]


# --- PUT /connector-plugins/{plugin}/config/validate -------------------------------------------------
def _normalized(name: str) -> str:
    suffix = "Connector"
    return name[: -len(suffix)] if name.endswith(suffix) and len(name) > len(suffix) else name


def resolve_validate_request(path_plugin: str, props: Mapping[str, str | None]) -> PluginDesc:
    """The connector a validate request is about, or a 400 (Connect's checks, in Connect's order)."""
    included = props.get("connector.class")
    if included is not None and not _normalized(included).endswith(_normalized(path_plugin)):
        raise BadRequestError(f"Included connector type {included} does not match request type {path_plugin}")
    if included is None:
        raise BadRequestError(f"Connector config {hash_map_to_string(props)} contains no connector type")
    desc = plugins.find(plugins.CONNECTORS, included)
    if desc is None:
        raise BadRequestError(plugins.connector_not_found(included))
    return desc


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


_CONVERTER_KINDS = {"key": (plugins.CONVERTERS, "Converter"), "value": (plugins.CONVERTERS, "Converter"),
                    "header": (plugins.HEADER_CONVERTERS, "HeaderConverter")}


def _framework_values(specs: Sequence[Spec], props: Mapping[str, str | None], desc: PluginDesc,
                      worker_defaults: Mapping[str, str] | None) -> tuple[list[ConfigKey], list[ConfigValue],
                                                                         dict[str, PluginDesc]]:
    """Validate the framework keys; converter classes and plugin versions are resolved against the
    installed plugins (defaults from the worker when ``worker_defaults`` is given)."""
    keys = [s.key for s in specs]
    values = validate_all(specs, props)
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
            resolved, value.value, error = plugins.resolve_class(candidates, interface, name, raw)
            if error is not None:
                value.errors.append(error)
                if error.startswith("Invalid value"):
                    by_name[version_name].visible = False
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
            value.value = render(key.type, default_value(key))
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
    """The ``<kind>.converter.*`` keys the converter ``desc`` declares, validated and prefixed."""
    prefix = f"{kind}.converter."
    own = {k.name: k for k in plugins.converter_config_def(desc).keys}
    specs = [spec_of(own[n]) for n in validate_order(own)]
    sub = {k[len(prefix):]: v for k, v in props.items() if k.startswith(prefix)}
    sub["converter.type"] = kind
    values = validate_all(specs, sub)
    for value in values:
        value.name = prefix + value.name
    return [replace(s.key, name=prefix + s.key.name) for s in specs], values


def _unexpected(exc: Exception) -> str:
    message = str(exc).strip()
    return ("An unexpected error occurred during validation" +
            (f": {message}" if message else "; please see the worker logs for more details."))


def _check_exactly_once(connector: Any, props: Mapping[str, str | None], value: ConfigValue, eos: bool) -> None:
    """``exactly.once.support=required`` (Connect's ``validateSourceConnectorExactlyOnceSupport``)."""
    if value.errors or str(value.value).strip().lower() != "required":
        return
    if not eos:
        value.errors.append("This worker does not have exactly-once source support enabled.")
    try:
        support = connector.exactly_once_support(props)
    except Exception as exc:
        log.error("Failed while validating connector support for exactly-once semantics", exc_info=exc)
        value.errors.append(_unexpected(exc))
        return
    if support is None:
        value.errors.append(
            "The connector does not implement the API required for preflight validation of exactly-once source "
            "support. Please consult the documentation for the connector to determine whether it supports "
            'exactly-once semantics, and then consider reconfiguring the connector to use the value "requested" for '
            "this property (which will disable this preflight check and allow the connector to be created).")
    elif support is not ExactlyOnceSupport.SUPPORTED:
        value.errors.append("The connector does not support exactly-once semantics with the provided configuration.")


def _check_transaction_boundary(connector: Any, props: Mapping[str, str | None], value: ConfigValue) -> None:
    """``transaction.boundary=connector`` (Connect's ``validateSourceConnectorTransactionBoundary``)."""
    if value.errors or str(value.value).strip().lower() != "connector":
        return
    try:
        support = connector.can_define_transaction_boundaries(props)
    except Exception as exc:
        log.error("Failed while validating connector support for defining its own transaction boundaries",
                  exc_info=exc)
        value.errors.append(_unexpected(exc))
        return
    if support is None:
        value.errors.append(
            "This connector has returned a null value from its canDefineTransactionBoundaries method, which is not "
            "permitted. The connector will be treated as if it cannot define its own transaction boundaries, and "
            "cannot be configured with 'transaction.boundary' set to 'connector'.")
    elif support is not ConnectorTransactionBoundaries.SUPPORTED:
        value.errors.append("The connector does not support connector-defined transaction boundaries with the given "
                            "configuration. Please reconfigure it to use a different transaction boundary definition.")


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
    alias_keys, alias_values = alias_entries(props, aliases(props))
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
    eos = (worker_defaults or {}).get("exactly.once.source.support", "disabled") == "enabled"
    _check_exactly_once(connector, props, base["exactly.once.support"], eos)
    _check_transaction_boundary(connector, props, base["transaction.boundary"])
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

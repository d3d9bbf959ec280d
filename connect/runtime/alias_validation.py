"""Validation of the ``transforms.<alias>.*`` and ``predicates.<alias>.*`` keys of a connector config, as Kafka
Connect 4.3's ``ConnectorConfig.enrich`` reports them in ``PUT /connector-plugins/{p}/config/validate``.

Per alias, in group ``Transforms: <alias>`` (``Predicates: <alias>``): ``type`` (order 0), ``plugin.version``
(order 1), then, when the type resolves to an installed plugin, the plugin's own keys, prefixed, ordered as
Java's ``ConfigDef.embed`` orders them (ungrouped keys first, then by order in group, keys without a default
first, then by importance and name). Transformations also get ``negate`` and ``predicate``. Messages are Java's:
a missing required key names the prefixed key; a validator's message names the key as the plugin knows it.

One check goes beyond Java: ``transforms.<alias>.predicate`` must name an alias of ``predicates`` (Java only
fails the task when it starts).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from connect.api.config import ConfigKey, ConfigType, ConfigValue
from connect.config.definition import sorted_keys
from connect.config.values import ParseError, missing_required, parse, render
from connect.runtime import plugins

_PREDICATE_KEY = ConfigKey("predicate", ConfigType.STRING, None, importance="MEDIUM",
                           documentation="The alias of a predicate used to determine whether to apply this "
                                         "transformation.")
_NEGATE_KEY = ConfigKey("negate", ConfigType.BOOLEAN, "false", importance="MEDIUM",
                        documentation="Whether the configured predicate should be negated.")


def _parse(key: ConfigKey, raw: str) -> tuple[Any, str | None]:
    try:
        return parse(key.name, key.type, raw), None
    except ParseError as exc:
        return None, str(exc)


def _embedded(prefix: str, group: str, start: int, child: Sequence[ConfigKey], props: Mapping[str, str | None]
              ) -> tuple[list[ConfigKey], list[ConfigValue]]:
    keys, values = [], []
    for order, key in enumerate(sorted_keys(child), start):
        full = prefix + key.name
        keys.append(replace(key, name=full, group=group, order=order,
                            display_name=key.display_name or key.name))
        value = ConfigValue(full, None)
        parsed: Any = None
        text: str | None = None
        if full in props:
            raw = props.get(full)
            if raw is not None:
                parsed, error = _parse(replace(key, name=full), raw)
                if error is not None:
                    value.errors.append(error)
                else:
                    text = raw
        elif key.required:
            value.errors.append(missing_required(full))
        elif key.default is not None:
            parsed, _ = _parse(key, key.default)
            text = key.default
        for validator in key.validators:  # as in Java, validators also see a missing or unparsable value (None)
            try:
                message = validator(key.name, text)  # type: ignore[arg-type]
            except (AttributeError, TypeError, ValueError):  # a validator that cannot take None: nothing to add
                message = None
            if message is not None:
                value.errors.append(message)
        value.value = render(key.type, parsed)
        values.append(value)
    return keys, values


def alias_entries(props: Mapping[str, str | None], aliases: Mapping[str, list[str]]
                  ) -> tuple[list[ConfigKey], list[ConfigValue]]:
    """Keys and values of every transform and predicate alias (``aliases``: ``transforms``/``predicates`` -> the
    unique aliases in order)."""
    keys: list[ConfigKey] = []
    values: list[ConfigValue] = []
    predicate_aliases = set(aliases.get("predicates", ()))
    for prefix_root, kind, noun, label, interface in (
        ("transforms", plugins.TRANSFORMATIONS, "transformation", "Transforms", "Transformation"),
        ("predicates", plugins.PREDICATES, "predicate", "Predicates", "Predicate"),
    ):
        for alias in aliases.get(prefix_root, ()):
            prefix, group = f"{prefix_root}.{alias}.", f"{label}: {alias}"
            type_name, version_name = prefix + "type", prefix + "plugin.version"
            type_key = ConfigKey(type_name, ConfigType.CLASS, None, True, "HIGH", f"Class for the '{alias}' {noun}.",
                                 group, 0, "LONG", f"{interface} type for {alias}")
            version_key = ConfigKey(version_name, ConfigType.STRING, None, False, "HIGH",
                                    f"Version of the '{alias}' {noun}.", group, 1, "LONG",
                                    f"{interface} version for {alias}")
            type_value = ConfigValue(type_name, None, recommended_values=sorted(d.class_name for d in kind))
            version_value = ConfigValue(version_name, props.get(version_name))
            raw = props.get(type_name)
            desc = None
            if type_name not in props:
                type_value.errors.append(missing_required(type_name))
            elif raw is not None:  # shown trimmed in the "Invalid value" of an unknown class
                desc, type_value.value, error = plugins.resolve_class(kind, interface, type_name, raw.strip())
                if error is not None:
                    type_value.errors.append(error)
            keys += [type_key, version_key]
            values += [type_value, version_value]
            if desc is None:
                continue
            keys[-1] = replace(version_key, default=desc.version)
            version_value.recommended_values = [desc.version]
            if version_value.value is None:
                version_value.value = desc.version
            child = list(plugins.load(desc)().config().keys)
            if prefix_root == "transforms":
                child += [_NEGATE_KEY, _PREDICATE_KEY]
            child_keys, child_values = _embedded(prefix, group, 2, child, props)
            if prefix_root == "transforms":
                _check_predicate_alias(prefix, props, predicate_aliases, child_values)
            keys += child_keys
            values += child_values
    return keys, values


def _check_predicate_alias(prefix: str, props: Mapping[str, str | None], known: set[str],
                           values: list[ConfigValue]) -> None:
    name = prefix + "predicate"
    alias = props.get(name)
    if alias is None or not alias.strip() or alias.strip() in known:
        return
    for value in values:
        if value.name == name:
            value.errors.append(f"Invalid value {alias} for configuration {name}: The predicate alias must be one of "
                                "the aliases in 'predicates'")

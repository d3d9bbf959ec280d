"""What Java's ``ConfigDef`` does with a list of keys: validate a raw config against them (``validateAll``), list
their groups (``groups``), sort them for embedding (``sortedConfigs``), and the order ``validate`` returns its
values in (a ``HashMap``'s).

Validation follows ``ConfigDef.validate``: a value is parsed by its key's type, a value that does not parse is
reported as null, and the key's checks also run on the parsed value (null included), so one key can carry
several errors. Every error is reported; a wrong config never raises.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from connect.api.config import ConfigKey, ConfigType, ConfigValue, Validator
from connect.config.validators import Check
from connect.config.values import ParseError, default_value, missing_required, parse, render
from connect.javalang import JavaHashMap

_IMPORTANCE = {"HIGH": 0, "MEDIUM": 1, "LOW": 2}


@dataclass(frozen=True, slots=True)
class Spec:
    """A key and the checks its parsed value must pass."""

    key: ConfigKey
    checks: tuple[Check, ...] = ()


def _text_check(type_: ConfigType, validator: Validator) -> Check:
    def check(name: str, value: Any) -> str | None:
        text = value if value is None or isinstance(value, str) else render(type_, value)
        return validator(name, text)  # type: ignore[arg-type]  # a plugin's validators also see a missing value
    return check


def spec_of(key: ConfigKey) -> Spec:
    """A plugin-declared key with its ``validators``, which see the parsed value as text (trimmed, or None)."""
    return Spec(key, tuple(_text_check(key.type, v) for v in key.validators))


def validate_all(specs: Sequence[Spec], props: Mapping[str, str | None]) -> list[ConfigValue]:
    """Java's ``ConfigDef.validateAll`` over ``specs``: one value per key, in ``specs``' order, with every error."""
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
            value.errors.append(missing_required(key.name))
        else:
            parsed = default_value(key)
        value.errors.extend(message for check in spec.checks if (message := check(key.name, parsed)) is not None)
        value.value = render(key.type, parsed)
        results.append(value)
    return results


def validate_order(names: Iterable[str]) -> list[str]:
    """The order ``ConfigDef.validate`` lists the values of keys defined in the order ``names`` (it collects them
    in a ``HashMap``)."""
    table = JavaHashMap()
    table.put_all(names)
    return table.keys()


def groups_of(keys: Iterable[ConfigKey]) -> list[str]:
    """The groups in order of first definition (``ConfigDef.groups()``)."""
    return list(dict.fromkeys(k.group for k in keys if k.group))


def sorted_keys(keys: Sequence[ConfigKey]) -> list[ConfigKey]:
    """``ConfigDef.sortedConfigs``: ungrouped keys first, then by group, order in group, keys without a default
    first, importance and name."""
    groups = groups_of(keys)

    def rank(key: ConfigKey) -> tuple[int, int, int, int, str]:
        group = -1 if key.group is None else groups.index(key.group)
        no_default = 0 if key.required else 1
        return group, key.order, no_default, _IMPORTANCE.get(key.importance, 1), key.name

    return sorted(keys, key=rank)

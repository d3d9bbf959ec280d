"""Configuration definitions and validation results (Connect's ``ConfigDef`` and ``ConfigValue``).

A :class:`ConfigDef` lists the keys a plugin understands; :meth:`ConfigDef.validate` checks a raw
``dict[str, str]`` and reports *every* problem, never only the first one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

Validator = Callable[[str, str], str | None]
"""A validator gets ``(name, raw value)`` and returns an error message or None."""


class ConfigType(StrEnum):
    """Config value types as Connect names them in ``ConfigKeyInfo.type``."""

    BOOLEAN = "BOOLEAN"
    STRING = "STRING"
    INT = "INT"
    SHORT = "SHORT"
    LONG = "LONG"
    DOUBLE = "DOUBLE"
    LIST = "LIST"
    CLASS = "CLASS"
    PASSWORD = "PASSWORD"


@dataclass(frozen=True, slots=True)
class ConfigKey:
    """One configuration key: its type, default, documentation and validators."""

    name: str
    type: ConfigType = ConfigType.STRING
    default: str | None = None
    required: bool = False
    importance: str = "MEDIUM"
    documentation: str = ""
    group: str | None = None
    order: int = -1
    width: str = "NONE"
    display_name: str | None = None
    validators: tuple[Validator, ...] = ()


@dataclass(slots=True)
class ConfigValue:
    """The validation result for one key: its value and every error found."""

    name: str
    value: str | None
    errors: list[str] = field(default_factory=list)
    recommended_values: list[str] = field(default_factory=list)
    visible: bool = True


def _type_error(key: ConfigKey, value: str) -> str | None:
    if key.type is ConfigType.BOOLEAN and value.strip().lower() not in ("true", "false"):
        return f"Invalid value {value} for configuration {key.name}: Expected value to be either true or false"
    if key.type in (ConfigType.INT, ConfigType.SHORT, ConfigType.LONG):
        try:
            int(value.strip())
        except ValueError:
            kind = "a 32-bit integer" if key.type is ConfigType.INT else "a number"
            return f"Invalid value {value} for configuration {key.name}: Not {kind}"
    if key.type is ConfigType.DOUBLE:
        try:
            float(value.strip())
        except ValueError:
            return f"Invalid value {value} for configuration {key.name}: Not a number of type DOUBLE"
    return None


@dataclass(frozen=True)
class ConfigDef:
    """An ordered collection of :class:`ConfigKey`."""

    keys: tuple[ConfigKey, ...] = ()

    def __add__(self, other: ConfigDef) -> ConfigDef:
        return ConfigDef(self.keys + other.keys)

    def names(self) -> Iterable[str]:
        """The key names, in definition order."""
        return (k.name for k in self.keys)

    def validate(self, props: Mapping[str, str | None]) -> list[ConfigValue]:
        """Validate ``props`` against every key; the result has one entry per key."""
        results = []
        for key in self.keys:
            raw = props.get(key.name)
            value = ConfigValue(key.name, raw if raw is not None else key.default)
            if raw is None and key.name in props:
                value.errors.append("Null value can not be supplied as the configuration value.")
            elif raw is None and key.required:
                value.errors.append(f'Missing required configuration "{key.name}" which has no default value.')
            elif raw is not None:
                if (error := _type_error(key, raw)) is not None:
                    value.errors.append(error)
                else:
                    value.errors.extend(msg for v in key.validators if (msg := v(key.name, raw)) is not None)
            results.append(value)
        return results


def parse_bool(value: Any, default: bool = False) -> bool:
    """A Connect boolean: ``true``/``false`` in any case."""
    if value is None:
        return default
    return str(value).strip().lower() == "true"


def parse_list(value: str | None) -> list[str]:
    """A Connect LIST value: comma-separated, items trimmed, empty items dropped."""
    if not value:
        return []
    return [item.strip() for item in value.split(",") if item.strip()]

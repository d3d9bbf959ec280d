"""Typed config values, as Java's ``ConfigDef`` parses and shows them (``parseType`` and ``convertToString``).

A raw value is parsed by its key's type: strings are trimmed, booleans are ``true``/``false`` in any case, integers
are range-checked for their width, lists split on commas; a CLASS value stays its trimmed name (which plugin it
names is the plugin registry's business). A value that does not parse raises :class:`ParseError` with Java's
message. :func:`render` is the other way round: the text ``ConfigValueInfo.value`` shows.
"""

from __future__ import annotations

import re
from typing import Any

from connect.api.config import ConfigKey, ConfigType
from connect.config.validators import invalid
from connect.javalang import double_to_string

NULL_VALUE_ERROR = "Null value can not be supplied as the configuration value."
"""Connect's error for a key given as JSON null."""

_INT_RE = re.compile(r"^[+-]?[0-9]+$")
_BOUNDS = {ConfigType.SHORT: 2 ** 15, ConfigType.INT: 2 ** 31, ConfigType.LONG: 2 ** 63}
_COMMA = re.compile(r"\s*,\s*")


class ParseError(ValueError):
    """A raw value that does not parse as its key's type; ``str()`` is Java's message."""


def missing_required(name: str) -> str:
    """Java's error for a required key that is not set."""
    return f'Missing required configuration "{name}" which has no default value.'


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
        return double_to_string(value)
    return str(value)


def default_value(key: ConfigKey) -> Any:
    """The parsed default of ``key`` (None without one; a default that does not parse is kept as written)."""
    if key.default is None:
        return None
    try:
        return parse(key.name, key.type, key.default)
    except ParseError:
        return key.default

"""The shapes Connect's REST API reports config keys and validation results in (``rest.entities.ConfigInfos``,
``ConfigKeyInfo``, ``ConfigValueInfo``), as plain dicts whose key order is the JSON key order Kafka Connect 4.3
writes:

* ConfigKeyInfo: ``name, type, required, default_value, importance, documentation, group, order_in_group, width,
  display_name, dependents`` (4.x serialises ``order_in_group`` right after ``group``; 3.x wrote ``order`` last);
* ConfigValueInfo: ``name, value, recommended_values, errors, visible``;
* ConfigInfos: ``name, error_count, groups, configs`` with ``configs`` items ``{definition, value}``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from connect.api.config import ConfigKey, ConfigValue


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

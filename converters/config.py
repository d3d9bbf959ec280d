"""What every converter's settings start with (Connect's ``ConverterConfig``): ``converter.type``, which the worker
sets to ``key``, ``value`` or ``header`` for the converter it configures. A converter class declares its settings
with a ``config_def()`` class method (Java's ``Converter.config()``), built with :func:`converter_config_def`.
"""

from __future__ import annotations

from connect.api.config import ConfigDef, ConfigKey, ConfigType
from connect.config.validators import one_of

CONVERTER_TYPE = ConfigKey("converter.type", ConfigType.STRING, None, True, "LOW", "How this converter will be used.",
                           None, -1, "NONE", "converter.type", validators=(one_of("key", "value", "header"),))
"""``converter.type``: required, one of ``key``, ``value``, ``header``."""


def converter_config_def(*keys: ConfigKey) -> ConfigDef:
    """``ConverterConfig.newConfigDef()`` followed by ``keys``."""
    return ConfigDef((CONVERTER_TYPE, *keys))

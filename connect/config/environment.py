"""Worker properties from the environment, as the Confluent and Debezium container images take them.

- Confluent's ``cp-kafka-connect``: every ``CONNECT_<NAME>`` variable is the property ``<name>`` in lower case
  with ``_`` read as ``.``, ``__`` as ``_`` and ``___`` as ``-`` (``CONNECT_BOOTSTRAP_SERVERS`` ->
  ``bootstrap.servers``, ``CONNECT_PRODUCER_COMPRESSION_TYPE`` -> ``producer.compression.type``). The logging
  variables (``CONNECT_LOG4J_*``, ``CONNECT_LOG_FORMAT``) and the ones that are not worker settings
  (``CONNECT_JAAS_CONFIG``, ``CONNECT_REST_PASSWORD``, ``CONNECT_OPTS``, ``CONNECT_JMX_*``) are left out.
- Debezium's ``debezium/connect``: ``BOOTSTRAP_SERVERS``, ``GROUP_ID``, ``CONFIG_STORAGE_TOPIC``,
  ``OFFSET_STORAGE_TOPIC``, ``STATUS_STORAGE_TOPIC``, ``KEY_CONVERTER``, ``VALUE_CONVERTER``,
  ``OFFSET_FLUSH_INTERVAL_MS``, ``OFFSET_FLUSH_TIMEOUT_MS``, ``ADVERTISED_HOST_NAME``, ``ADVERTISED_PORT``.

Precedence, lowest first: the properties file, Debezium's short names, ``CONNECT_*`` (the Debezium image, too, lets
``CONNECT_*`` win over its short names).
"""

from __future__ import annotations

from collections.abc import Mapping

PREFIX = "CONNECT_"
EXCLUDED_PREFIXES = ("CONNECT_LOG4J_", "CONNECT_JMX_")
EXCLUDED = frozenset({"CONNECT_LOG_FORMAT", "CONNECT_JAAS_CONFIG", "CONNECT_REST_PASSWORD", "CONNECT_OPTS"})

DEBEZIUM_NAMES = {
    "BOOTSTRAP_SERVERS": "bootstrap.servers",
    "GROUP_ID": "group.id",
    "CONFIG_STORAGE_TOPIC": "config.storage.topic",
    "OFFSET_STORAGE_TOPIC": "offset.storage.topic",
    "STATUS_STORAGE_TOPIC": "status.storage.topic",
    "KEY_CONVERTER": "key.converter",
    "VALUE_CONVERTER": "value.converter",
    "OFFSET_FLUSH_INTERVAL_MS": "offset.flush.interval.ms",
    "OFFSET_FLUSH_TIMEOUT_MS": "offset.flush.timeout.ms",
    "ADVERTISED_HOST_NAME": "rest.advertised.host.name",
    "ADVERTISED_PORT": "rest.advertised.port",
}


def property_name(variable: str) -> str:
    """``CONNECT_A_B__C___D`` -> ``a.b_c-d`` (the Confluent image's rule)."""
    name = variable[len(PREFIX):].lower()
    return name.replace("___", "\0").replace("__", "\1").replace("_", ".").replace("\1", "_").replace("\0", "-")


def variable_name(prop: str) -> str:
    """The ``CONNECT_*`` variable that gives ``prop`` (the inverse of :func:`property_name` for lower-case keys)."""
    return PREFIX + prop.replace("_", "__").replace("-", "___").replace(".", "_").upper()


def environment_properties(env: Mapping[str, str]) -> dict[str, str]:
    """The worker properties the environment sets, ``CONNECT_*`` winning over Debezium's short names."""
    props = {prop: env[var] for var, prop in DEBEZIUM_NAMES.items() if env.get(var)}
    for variable, value in sorted(env.items()):
        if (variable.startswith(PREFIX) and len(variable) > len(PREFIX) and variable not in EXCLUDED
                and not variable.startswith(EXCLUDED_PREFIXES)):
            props[property_name(variable)] = value
    return props


def with_environment(props: Mapping[str, str], env: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """``props`` overridden by the environment, and the names of the properties the environment set."""
    overrides = environment_properties(env)
    return {**props, **overrides}, sorted(overrides)

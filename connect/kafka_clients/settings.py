"""Java client settings (dotted names, as Connect users write them) turned into kafka-python keyword arguments.

* ``security.protocol``, ``sasl.*`` and ``ssl.*`` become ``security_protocol``, the SASL credentials (from
  ``sasl.jaas.config``) or an OAUTHBEARER token provider, and an in-memory ``ssl_context``;
* other keys kafka-python knows under the same name (dots as underscores) are passed on, typed;
* ``compression.type`` is checked against the codecs installed;
* a key no kafka-python client knows is never dropped in silence: a WARN naming it, once per process, for
  tuning; a :class:`ConfigError` for anything that affects security or delivery.

Nothing here logs or raises a setting's value when it may be a secret.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Mapping
from typing import Any

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka import codec as kafka_codec

from connect.api.errors import ConfigError
from connect.kafka_clients import jaas, oauth, tls

log = logging.getLogger(__name__)

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
_LOGIN_MODULES = {"PLAIN": ("PlainLoginModule", "ScramLoginModule"),
                  "SCRAM-SHA-256": ("ScramLoginModule", "PlainLoginModule"),
                  "SCRAM-SHA-512": ("ScramLoginModule", "PlainLoginModule"),
                  "OAUTHBEARER": ("OAuthBearerLoginModule",)}
_CODECS = {"none": None, "gzip": kafka_codec.has_gzip, "snappy": kafka_codec.has_snappy,
           "lz4": kafka_codec.has_lz4, "zstd": kafka_codec.has_zstd}

# Java keys with no kafka-python meaning that are handled elsewhere or mean nothing for a byte-array client.
_HANDLED = {"key.serializer", "value.serializer", "key.deserializer", "value.deserializer"}
_DEFAULT_PARTITIONERS = {"", "org.apache.kafka.clients.producer.internals.DefaultPartitioner",
                         "org.apache.kafka.clients.producer.internals.BuiltInPartitioner"}
# Same name, but kafka-python wants Python objects where Java takes class names: never pass these on.
_OBJECT_KEYS = {"metric.reporters", "partition.assignment.strategy", "partitioner", "selector", "socket.options",
                "kafka.client", "metrics", "default.offset.commit.callback", "sasl.oauth.token.provider",
                "ssl.context"}
_INT_KEYS = {
    "batch_size", "linger_ms", "delivery_timeout_ms", "max_block_ms", "max_request_size", "retries",
    "request_timeout_ms", "max_in_flight_requests_per_connection", "retry_backoff_ms", "metadata_max_age_ms",
    "fetch_max_bytes", "max_partition_fetch_bytes", "max_poll_records", "fetch_min_bytes", "fetch_max_wait_ms",
    "session_timeout_ms", "heartbeat_interval_ms", "connections_max_idle_ms", "bootstrap_timeout_ms",
    "receive_buffer_bytes", "send_buffer_bytes", "reconnect_backoff_ms", "reconnect_backoff_max_ms",
    "max_poll_interval_ms", "auto_commit_interval_ms", "transaction_timeout_ms", "metrics_num_samples",
    "metrics_sample_window_ms", "socket_connection_setup_timeout_ms", "socket_connection_setup_timeout_max_ms",
}
_INT_MAX = 2**31 - 1
# sasl.*/ssl.* keys that only tune (timeouts, refresh, providers): a WARN when they cannot be applied.
_SECURITY_TUNING_PREFIXES = ("sasl.login.refresh.", "sasl.login.retry.", "sasl.login.connect.", "sasl.login.read.",
                             "sasl.oauthbearer.", "sasl.kerberos.", "ssl.keymanager.", "ssl.trustmanager.",
                             "ssl.secure.random.", "ssl.providers")
# Settings read by the translation itself.
_SECURITY_READ = {
    "security.protocol", "sasl.mechanism", "sasl.jaas.config", "sasl.login.callback.handler.class",
    "sasl.oauthbearer.token.endpoint.url", "sasl.oauthbearer.client.credentials.client.id",
    "sasl.oauthbearer.client.credentials.client.secret", "sasl.oauthbearer.scope", "sasl.login.read.timeout.ms",
    "ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.certificates",
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.keystore.key",
    "ssl.keystore.certificate.chain", "ssl.key.password", "ssl.endpoint.identification.algorithm",
    "ssl.enabled.protocols", "ssl.protocol",
}
_SSL_INERT = {"ssl.endpoint.identification.algorithm", "ssl.protocol", "ssl.enabled.protocols"}
KNOWN_KEYS: frozenset[str] = frozenset(
    k for cls in (KafkaProducer, KafkaConsumer, KafkaAdminClient) for k in cls.DEFAULT_CONFIG)

_warned: set[str] = set()
_warned_lock = threading.Lock()


def warn_once(key: str, reason: str) -> None:
    """One WARN per key and process."""
    with _warned_lock:
        if key in _warned:
            return
        _warned.add(key)
    log.warning("Kafka client setting %s is not applied: %s", key, reason)


def _str(settings: Mapping[str, Any], key: str) -> str:
    value = settings.get(key)
    return "" if value is None else str(value).strip()


def security_kwargs(settings: Mapping[str, Any]) -> dict[str, Any]:
    """kafka-python's security arguments for ``security.protocol``, ``sasl.*`` and ``ssl.*``."""
    protocol = (_str(settings, "security.protocol") or "PLAINTEXT").upper()
    if protocol not in PROTOCOLS:
        raise ConfigError("security.protocol", protocol, f"supported: {', '.join(PROTOCOLS)}")
    kwargs: dict[str, Any] = {"security_protocol": protocol}
    uses_ssl, uses_sasl = protocol.endswith("SSL"), protocol.startswith("SASL")
    ssl_keys = sorted(k for k in settings if k.startswith("ssl.") and k not in _SSL_INERT and _str(settings, k))
    oauth_over_https = _str(settings, "sasl.mechanism").upper() == "OAUTHBEARER" and _str(
        settings, "sasl.oauthbearer.token.endpoint.url").lower().startswith("https:")
    if ssl_keys and not uses_ssl and not oauth_over_https:  # (the token endpoint's TLS takes them too)
        raise ConfigError(ssl_keys[0], None, f"security.protocol={protocol} does not use TLS: set "
                                             "security.protocol=SSL or SASL_SSL, or remove the ssl.* settings")
    sasl_keys = sorted(k for k in ("sasl.mechanism", "sasl.jaas.config") if _str(settings, k))
    if sasl_keys and not uses_sasl:
        raise ConfigError(sasl_keys[0], None, f"security.protocol={protocol} does not use SASL: set "
                                              "security.protocol=SASL_SSL or SASL_PLAINTEXT")
    if uses_ssl:
        kwargs["ssl_context"] = tls.ssl_context(settings)
    if uses_sasl:
        kwargs.update(_sasl_kwargs(settings))
    for key in settings:
        if (key.startswith(("ssl.", "sasl.")) and key not in _SECURITY_READ) or (key.startswith("security.") \
                and key != "security.protocol"):
            _unsupported_security_key(key, settings)
    return kwargs


def _unsupported_security_key(key: str, settings: Mapping[str, Any]) -> None:
    if key == "ssl.cipher.suites" and not _str(settings, key):
        return
    if key.startswith(_SECURITY_TUNING_PREFIXES):
        warn_once(key, "kafka-python has no such setting; its default is used")
        return
    if key in ("sasl.client.callback.handler.class", "sasl.login.class", "ssl.engine.factory.class",
               "ssl.cipher.suites", "security.providers") and _str(settings, key):
        raise ConfigError(key, None, "this setting changes how the client authenticates or encrypts and cannot "
                                     "be applied here")
    warn_once(key, "kafka-python has no such setting; its default is used")


def jaas_config(settings: Mapping[str, Any]) -> str:
    """``sasl.jaas.config``, else the static JAAS file's ``KafkaClient`` section, else empty."""
    return _str(settings, "sasl.jaas.config") or _static_jaas_client()


def _static_jaas_client() -> str:
    """Java's fallback when ``sasl.jaas.config`` is not set: the ``KafkaClient`` section of the JAAS file named by
    ``-Djava.security.auth.login.config`` (in ``KAFKA_OPTS``, as Kafka's scripts pass it)."""
    found = re.search(r"-Djava\.security\.auth\.login\.config=(\S+)", os.environ.get("KAFKA_OPTS", ""))
    if not found:
        return ""
    path = found.group(1).strip("\"'")
    try:
        with open(path, encoding="utf-8") as f:
            section = jaas.file_section(f.read(), "KafkaClient")
    except OSError as exc:
        raise ConfigError("java.security.auth.login.config", path, f"cannot read the JAAS file: {exc}") from exc
    except jaas.JaasError as exc:
        raise ConfigError("java.security.auth.login.config", path, str(exc)) from exc
    if section is None:
        raise ConfigError("java.security.auth.login.config", path, "the JAAS file has no KafkaClient section")
    return section


def _sasl_kwargs(settings: Mapping[str, Any]) -> dict[str, Any]:
    mechanism = (_str(settings, "sasl.mechanism") or "GSSAPI").upper()
    if mechanism not in MECHANISMS:
        raise ConfigError("sasl.mechanism", mechanism, f"supported: {', '.join(MECHANISMS)}"
                          + (" (GSSAPI is Kafka's default when sasl.mechanism is not set)"
                             if mechanism == "GSSAPI" else ""))
    text = jaas_config(settings)
    if not text:
        raise ConfigError("sasl.jaas.config", None, f"sasl.mechanism={mechanism} needs sasl.jaas.config (or a "
                                                    "KafkaClient section in the -Djava.security.auth.login.config "
                                                    "file of KAFKA_OPTS)")
    try:
        module = jaas.parse_client(text)
    except jaas.JaasError as exc:
        raise ConfigError("sasl.jaas.config", "[hidden]", str(exc)) from exc
    short_name = module.class_name.rsplit(".", 1)[-1]
    if short_name not in _LOGIN_MODULES[mechanism]:
        raise ConfigError("sasl.jaas.config", "[hidden]", f"login module {module.class_name} does not provide "
                                                          f"{mechanism} credentials")
    handler = _str(settings, "sasl.login.callback.handler.class")
    if handler and mechanism != "OAUTHBEARER":
        raise ConfigError("sasl.login.callback.handler.class", handler, f"cannot run here with {mechanism}")
    if mechanism == "OAUTHBEARER":
        return {"sasl_mechanism": mechanism,
                "sasl_oauth_token_provider": oauth.token_provider(settings, module.options)}
    username, password = module.options.get("username"), module.options.get("password")
    if not username or password is None:
        raise ConfigError("sasl.jaas.config", "[hidden]", f"{short_name} needs the username and password options")
    return {"sasl_mechanism": mechanism, "sasl_plain_username": username, "sasl_plain_password": password}


def _coerce(key: str, value: Any) -> Any:
    if not isinstance(value, str):
        return value
    if key in _INT_KEYS:
        return min(int(value), _INT_MAX)
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    if key == "acks":
        return value if value == "all" else int(value)
    if key == "bootstrap_servers":
        return [s.strip() for s in value.split(",") if s.strip()]
    if key == "compression_type":
        codec = value.strip().lower()
        if codec not in _CODECS:
            raise ConfigError("compression.type", value, f"supported: {', '.join(_CODECS)}")
        check = _CODECS[codec]
        if check is not None and not check():
            raise ConfigError("compression.type", value, f"the {codec} codec package is not installed")
        return None if codec == "none" else codec
    return value


def client_kwargs(settings: Mapping[str, Any], known: Mapping[str, Any]) -> dict[str, Any]:
    """kafka-python arguments for the client whose ``DEFAULT_CONFIG`` is ``known``, from dotted settings.

    A key another kafka-python client knows (a producer key in settings shared with a consumer) is left to that
    client; a key none knows is warned about once or, when it matters, refused."""
    result: dict[str, Any] = security_kwargs(settings)
    for key, value in settings.items():
        if key in _HANDLED or key.startswith(("ssl.", "sasl.", "security.")):
            continue
        py_key = key.replace(".", "_")
        if key == "partitioner.class":
            if _str(settings, key) not in _DEFAULT_PARTITIONERS:
                raise ConfigError(key, value, "only Kafka's default partitioner runs here (murmur2 of the key)")
        elif key in _OBJECT_KEYS:
            warn_once(key, "it names Java classes, which cannot run here")
        elif py_key in known or py_key == "max_in_flight_requests_per_connection":
            result[py_key] = _coerce(py_key, value)
        elif py_key not in KNOWN_KEYS:
            warn_once(key, "kafka-python has no such setting; its default is used")
    return result

"""The connection to MongoDB (Debezium's ``connection`` package): the driver client built from the connector
config, and what a MongoDB failure means for the task: retry with backoff, position lost, or fail now.

Driver options come from the ``mongodb.*`` keys; an option also given in the connection string keeps the
connection string's value, as in Debezium.

* credentials refused (codes 18 AuthenticationFailed, 13 Unauthorized) or a bad TLS/URI setup: fail at once with
  a message naming the problem; retrying cannot help and would hammer the server;
* change-stream history gone (286 ChangeStreamHistoryLost, 280 ChangeStreamFatalError, 136 CappedPositionLost,
  260 InvalidResumeToken): the stored position is lost; ``snapshot.mode=when_needed`` takes a new snapshot,
  every other mode fails with Debezium's message;
* an event over the 16 MB limit (10334 BSONObjectTooLarge) with ``cursor.oversize.handling.mode=fail``: fail;
* everything else (network errors, server selection timeouts, primary step-down, interrupted operations) is
  retried: the change stream is reopened after its last token, waiting 0.25 s, 0.5 s, ... up to
  ``retriable.restart.connector.wait.ms`` between attempts, at most ``errors.max.retries`` times in a row
  (-1: no limit).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from enum import Enum
from typing import Any

import pymongo
from pymongo import uri_parser
from pymongo.errors import ConfigurationError, OperationFailure, PyMongoError

from connect.api.errors import ConfigError, ConnectError
from connect.kafka_clients import tls
from connectors.mongodb.config import MongoDbConfig

AUTH_CODES = frozenset((18, 13))
LOST_CODES = frozenset((286, 280, 136, 260))
TOO_LARGE_CODES = frozenset((10334, 17419))


def client_options(config: MongoDbConfig) -> dict[str, Any]:
    """Driver options from the ``mongodb.*`` keys, less those the connection string sets."""
    capture = config.capture
    options: dict[str, Any] = {
        "connectTimeoutMS": config.connect_timeout_ms,
        "serverSelectionTimeoutMS": config.server_selection_timeout_ms,
        "socketTimeoutMS": config.socket_timeout_ms or None,
        "heartbeatFrequencyMS": capture.heartbeat_frequency_ms,
        "uuidRepresentation": "standard",
    }
    if config.user:
        options.update(username=config.user, password=config.password, authSource=config.auth_source)
    if capture.ssl_enabled:
        options["tls"] = True
        if capture.ssl_invalid_hostname_allowed:
            options["tlsAllowInvalidHostnames"] = True
        honoured = config.honoured
        if capture.ssl_ca_file:
            options["tlsCAFile"] = _pem_truststore(capture.ssl_ca_file, honoured.truststore_type,
                                                   honoured.truststore_password)
        if capture.ssl_cert_file:
            options["tlsCertificateKeyFile"], password = _pem_keystore(
                capture.ssl_cert_file, honoured.keystore_type, capture.ssl_cert_password)
            if password:
                options["tlsCertificateKeyFilePassword"] = password
    in_uri = {k.lower() for k in uri_parser.parse_uri(config.connection_string, validate=False)["options"]}
    return {k: v for k, v in options.items() if k.lower() not in in_uri}


_converted: dict[tuple[str, float, str], tuple[str, str | None]] = {}


def _is_pem(path: str, kind: str) -> bool:
    if kind == "PEM":
        return True
    try:
        with open(path, "rb") as f:
            return f.read(64).lstrip().startswith(b"-----BEGIN")
    except OSError:
        return False  # the store reader names the key and the error


def _store_key(path: str, kind: str) -> tuple[str, float, str]:
    try:
        return path, os.stat(path).st_mtime, kind
    except OSError:
        return path, 0.0, kind


def _pem_truststore(path: str, kind: str, password: str | None) -> str:
    """A PEM file of the CA certificates of ``mongodb.ssl.truststore``: the file itself when it is PEM, else the
    PKCS12/JKS store's certificates in memory (the driver reads PEM files only)."""
    if _is_pem(path, kind):
        return path
    key = _store_key(path, kind)
    if key not in _converted:
        try:
            certs = tls.trusted_certificates({"ssl.truststore.location": path, "ssl.truststore.type": kind,
                                              "ssl.truststore.password": password})
        except ConfigError as exc:
            raise ConfigError("mongodb.ssl.truststore", path, exc.reason) from exc
        _converted[key] = tls.lasting_memory_file(tls.pem_certificates(certs or [])), None
    return _converted[key][0]


def _pem_keystore(path: str, kind: str, password: str | None) -> tuple[str, str | None]:
    """A PEM file with the client key and chain of ``mongodb.ssl.keystore`` and the key's password: the file
    itself when it is PEM, else the PKCS12/JKS store's key re-encrypted with a one-time password, in memory."""
    if _is_pem(path, kind):
        return path, password
    key = _store_key(path, kind)
    if key not in _converted:
        try:
            material = tls.key_material({"ssl.keystore.location": path, "ssl.keystore.type": kind,
                                         "ssl.keystore.password": password, "ssl.key.password": password})
        except ConfigError as exc:
            raise ConfigError("mongodb.ssl.keystore", path, exc.reason) from exc
        if material is None:
            raise ConfigError("mongodb.ssl.keystore", path, "the keystore holds no private key")
        pem, one_time = tls.pem_key_and_chain(*material)
        _converted[key] = tls.lasting_memory_file(pem), one_time
    return _converted[key]


def new_client(config: MongoDbConfig, uri: str | None = None) -> pymongo.MongoClient[dict[str, Any]]:
    """A driver client of ``uri`` (by default ``mongodb.connection.string``); it connects lazily."""
    return pymongo.MongoClient(config.connection_string if uri is None else uri, **client_options(config))


def connect(config: MongoDbConfig, uri: str, tag: str) -> pymongo.MongoClient[dict[str, Any]]:
    """A client of ``uri`` that answered a ``ping``; refused credentials fail with :func:`auth_message`."""
    client = new_client(config, uri)
    try:
        client.admin.command("ping")
    except PyMongoError as exc:
        client.close()
        if classify(exc) is Fault.AUTH:
            raise ConnectError(auth_message(tag, config.user, config.auth_source, exc)) from exc
        raise ConnectError(f"[{tag}] Unable to connect to MongoDB: {exc}") from exc
    return client


class Fault(Enum):
    RETRY = "retry"
    AUTH = "auth"
    POSITION_LOST = "position_lost"
    FATAL = "fatal"


def classify(exc: BaseException) -> Fault:
    """The kind of ``exc`` (a pymongo error, or one caused by it)."""
    if isinstance(exc, OperationFailure):
        code = exc.code or 0
        if code in AUTH_CODES:
            return Fault.AUTH
        if code in LOST_CODES or "ChangeStreamHistoryLost" in str(exc) or "resume token was not found" in str(exc):
            return Fault.POSITION_LOST
        if code in TOO_LARGE_CODES:
            return Fault.FATAL
        return Fault.RETRY
    if isinstance(exc, ConfigurationError):
        return Fault.FATAL
    if isinstance(exc, PyMongoError):
        if "Authentication failed" in str(exc) or "auth" in type(exc).__name__.lower():
            return Fault.AUTH
        return Fault.RETRY
    return Fault.FATAL


def fatal_message(name: str, exc: BaseException) -> str:
    """The FAILED trace's first line for a failure no retry can fix; an event over 16 MB says what to set."""
    text = f"[{name}] An exception occurred in the change event producer. This connector will be stopped. ({exc})"
    if isinstance(exc, OperationFailure) and (exc.code or 0) in TOO_LARGE_CODES:
        text += (" A change event is larger than MongoDB's 16 MB limit: set cursor.oversize.handling.mode=split "
                 "(MongoDB 6.0.9 or later) to receive it in fragments the connector joins again, or skip with "
                 "cursor.oversize.skip.threshold to leave such documents out.")
    return text


def auth_message(name: str, user: str | None, auth_source: str, exc: BaseException) -> str:
    """The FAILED trace's first line for refused credentials."""
    who = f"user '{user}'" if user else "the credentials of the connection string"
    return (f"[{name}] MongoDB refused {who} (authSource '{auth_source}'): {exc}. Check mongodb.user, "
            "mongodb.password and mongodb.authsource (or the credentials in mongodb.connection.string) and "
            "the user's roles; the task will not retry.")


def lost_position_message(offset: Mapping[str, Any]) -> str:
    """Debezium's message for a stored position the server no longer has."""
    return (f"The connector is trying to read change stream starting at {java_map_string(offset)}, but this is no "
            "longer available on the server. Reconfigure the connector to use a snapshot mode when needed.")


def java_map_string(values: Mapping[str, Any]) -> str:
    """A map as Java's ``AbstractMap.toString`` writes it: ``{k=v, k=v}``."""
    def text(value: Any) -> str:
        return ("true" if value else "false") if isinstance(value, bool) else str(value)
    return "{" + ", ".join(f"{k}={text(v)}" for k, v in values.items()) + "}"


class Backoff:
    """Consecutive retriable failures: when the next attempt may start and whether any attempt is left."""

    def __init__(self, max_retries: int, max_wait_ms: int, initial_ms: int = 250) -> None:
        self._max_retries = max_retries
        self._max_wait = max_wait_ms / 1000
        self._initial = initial_ms / 1000
        self.failures = 0
        self.retry_at = 0.0

    def failed(self) -> bool:
        """Record a failure; False when no retry is left."""
        self.failures += 1
        if 0 <= self._max_retries < self.failures:
            return False
        wait = min(self._initial * 2 ** (self.failures - 1), self._max_wait) if self._max_wait > 0 else 0.0
        self.retry_at = time.monotonic() + wait
        return True

    def succeeded(self) -> None:
        """An attempt worked: the next failure starts from the shortest wait again."""
        self.failures = 0
        self.retry_at = 0.0

    def remaining(self) -> float:
        """Seconds until the next attempt may start."""
        return max(self.retry_at - time.monotonic(), 0.0)

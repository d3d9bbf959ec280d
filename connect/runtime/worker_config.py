"""Worker configuration (Connect's ``WorkerConfig``, ``DistributedConfig``, ``StandaloneConfig``); the keys
every connector config has are :mod:`connect.runtime.connector_config`'s.

Worker settings are parsed once, at start, into :class:`WorkerConfig`; the raw map is kept for the
prefixed pass-through keys (``producer.*``, ``key.converter.*`` ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from connect.api.errors import ConfigError

JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
SIMPLE_HEADER_CONVERTER = "org.apache.kafka.connect.storage.SimpleHeaderConverter"


class WorkerConfig(BaseModel):
    """The worker's own settings, with the dotted Connect keys as aliases."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore", frozen=True)

    bootstrap_servers: str = Field("localhost:9092", alias="bootstrap.servers")
    group_id: str | None = Field(None, alias="group.id")
    config_storage_topic: str | None = Field(None, alias="config.storage.topic")
    offset_storage_topic: str | None = Field(None, alias="offset.storage.topic")
    status_storage_topic: str | None = Field(None, alias="status.storage.topic")
    config_storage_replication_factor: int = Field(3, alias="config.storage.replication.factor")
    offset_storage_replication_factor: int = Field(3, alias="offset.storage.replication.factor")
    status_storage_replication_factor: int = Field(3, alias="status.storage.replication.factor")
    offset_storage_partitions: int = Field(25, alias="offset.storage.partitions")
    status_storage_partitions: int = Field(5, alias="status.storage.partitions")
    offset_storage_file_filename: str | None = Field(None, alias="offset.storage.file.filename")
    key_converter: str = Field(JSON_CONVERTER, alias="key.converter")
    value_converter: str = Field(JSON_CONVERTER, alias="value.converter")
    header_converter: str = Field(SIMPLE_HEADER_CONVERTER, alias="header.converter")
    offset_flush_interval_ms: int = Field(60_000, alias="offset.flush.interval.ms")
    offset_flush_timeout_ms: int = Field(5_000, alias="offset.flush.timeout.ms")
    task_shutdown_graceful_timeout_ms: int = Field(5_000, alias="task.shutdown.graceful.timeout.ms")
    listeners: str = Field("http://:8083", alias="listeners")
    rest_advertised_host_name: str | None = Field(None, alias="rest.advertised.host.name")
    rest_advertised_port: int | None = Field(None, alias="rest.advertised.port")
    rest_advertised_listener: str | None = Field(None, alias="rest.advertised.listener")
    session_timeout_ms: int = Field(10_000, alias="session.timeout.ms")
    heartbeat_interval_ms: int = Field(3_000, alias="heartbeat.interval.ms")
    rebalance_timeout_ms: int = Field(60_000, alias="rebalance.timeout.ms")
    worker_sync_timeout_ms: int = Field(3_000, alias="worker.sync.timeout.ms")
    inter_worker_key_ttl_ms: int = Field(3_600_000, alias="inter.worker.key.ttl.ms", ge=0)
    scheduled_rebalance_max_delay_ms: int = Field(300_000, alias="scheduled.rebalance.max.delay.ms", ge=0)
    # how long the worker waits at start-up for its admin client to describe the cluster, as Java's worker does
    default_api_timeout_ms: int = Field(60_000, alias="default.api.timeout.ms", ge=0)
    client_config_override_policy: Literal["All", "None", "Principal", "Allowlist"] = Field(
        "All", alias="connector.client.config.override.policy")
    client_config_override_allowlist: str = Field("", alias="connector.client.config.override.allowlist")
    connect_protocol: Literal["eager", "compatible", "sessioned"] = Field("sessioned", alias="connect.protocol")
    exactly_once_source_support: Literal["disabled", "preparing", "enabled"] = Field(
        "disabled", alias="exactly.once.source.support")
    metrics_listener: str | None = Field(None, alias="metrics.listener")
    """``http://host:port``: ``/metrics`` also served there, without the REST API's authentication (ours)."""

    @field_validator("exactly_once_source_support", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("metrics_listener")
    @classmethod
    def _metrics_listener(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        parsed = urlparse(value.strip())
        try:
            port = parsed.port
        except ValueError:
            port = None
        if parsed.scheme != "http" or port is None or parsed.path not in ("", "/"):
            raise ValueError("expected http://host:port (for example http://0.0.0.0:9404)")
        return value.strip()

    def metrics_address(self) -> tuple[str, int] | None:
        """Where ``metrics.listener`` serves ``/metrics`` (None: only on the REST listener)."""
        if self.metrics_listener is None:
            return None
        parsed = urlparse(self.metrics_listener)
        return parsed.hostname or "0.0.0.0", int(parsed.port or 0)

    @classmethod
    def parse(cls, props: Mapping[str, str], *, distributed: bool) -> tuple[WorkerConfig, dict[str, str]]:
        """Validate worker properties; errors name the key and the reason."""
        try:
            config = cls.model_validate(dict(props))
        except ValidationError as exc:
            err = exc.errors()[0]
            key = str(err["loc"][0]) if err["loc"] else "?"
            raise ConfigError(key, props.get(key), str(err["msg"])) from exc
        required = ("group.id", "config.storage.topic", "offset.storage.topic", "status.storage.topic") \
            if distributed else ("offset.storage.file.filename",)
        for key in required:
            if not props.get(key):
                raise ConfigError(key, None, f'Missing required configuration "{key}" which has no default value.')
        if not distributed and config.exactly_once_source_support != "disabled":
            raise ConfigError("exactly.once.source.support", props.get("exactly.once.source.support"),
                              "exactly-once source support needs a distributed worker (its offsets are written to the "
                              "offsets topic in the tasks' transactions)")
        return config, dict(props)

    def exactly_once_source_enabled(self) -> bool:
        """``exactly.once.source.support=enabled``: source tasks run transactionally."""
        return self.exactly_once_source_support == "enabled"

    def validation_defaults(self) -> dict[str, str]:
        """The worker settings a connector config is validated against: default converters, override policy."""
        return {"key.converter": self.key_converter, "value.converter": self.value_converter,
                "header.converter": self.header_converter,
                "connector.client.config.override.policy": self.client_config_override_policy,
                "connector.client.config.override.allowlist": self.client_config_override_allowlist,
                "exactly.once.source.support": self.exactly_once_source_support}

    def listener(self) -> tuple[str, int]:
        """The host and port to serve the REST API on (first listener)."""
        first = self.listeners.split(",")[0].strip()
        parsed = urlparse(first)
        return parsed.hostname or "0.0.0.0", parsed.port or 8083

    def listener_scheme(self) -> str:
        """``http`` or ``https`` (first listener)."""
        return urlparse(self.listeners.split(",")[0].strip()).scheme or "http"

    def worker_id(self) -> str:
        """``host:port`` of the advertised REST URL, as Connect reports it in statuses."""
        host, port = self.listener()
        if self.rest_advertised_host_name:
            host = self.rest_advertised_host_name
        elif host in ("0.0.0.0", ""):
            import socket

            host = socket.gethostname()
        return f"{host}:{self.rest_advertised_port or port}"

    def rest_url(self) -> str:
        """The URL other workers use to reach this one (``rest.advertised.*``), ending with ``/``."""
        scheme = self.rest_advertised_listener or self.listener_scheme()
        return f"{scheme}://{self.worker_id()}/"


def prefixed(props: Mapping[str, str], prefix: str) -> dict[str, str]:
    """The keys starting with ``prefix``, with the prefix removed."""
    return {k[len(prefix):]: v for k, v in props.items() if k.startswith(prefix)}


def string_values(config: Mapping[str, Any]) -> dict[str, str]:
    """Config values as Connect stores them: JSON scalars stringified the Java way."""
    out: dict[str, str] = {}
    for key, value in config.items():
        if isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif value is None or isinstance(value, str):
            out[key] = value  # type: ignore[assignment]
        else:
            out[key] = str(value)
    return out

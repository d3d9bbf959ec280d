"""``MongoDbConnector``: validates the config and hands it to one task, as Debezium 3.x does (one change
stream through the replica set or mongos); with ``mongodb.connection.mode=replica_set`` it discovers the shards
and splits their replica sets over up to ``tasks.max`` tasks (:mod:`.sharding`)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from pymongo.errors import PyMongoError

from connect.api.config import ConfigDef, ConfigValue
from connect.api.connector import ExactlyOnceSupport, SourceConnector
from connect.api.errors import ConnectError
from connectors.mongodb import config as mongo_config
from connectors.mongodb import connection, debezium_keys, notifications, sharding
from connectors.mongodb.capture_config import ConnectionMode
from connectors.mongodb.task import MongoDbConnectorTask

log = logging.getLogger(__name__)

DEBEZIUM_VERSION = "3.6.1.Final"


class MongoDbConnector(SourceConnector):
    """Accepted as ``io.debezium.connector.mongodb.MongoDbConnector`` too."""

    version = DEBEZIUM_VERSION

    def start(self, props: Mapping[str, str]) -> None:
        """Validate the config; every problem is logged, then the start fails."""
        problems = [(r.name, e) for r in mongo_config.validate(props) for e in r.errors]
        for name, message in problems:
            log.error("[%s] The '%s' value is invalid: %s", props.get("name"), name, message)
        if problems:
            raise ConnectError("Error configuring an instance of MongoDbConnector; check the logs for details")
        debezium_keys.warn_ignored(props, str(props.get("name")))
        debezium_keys.warn_unknown(props, frozenset(mongo_config.CONFIG_DEF.names()), str(props.get("name")))
        for warning in notifications.channel_warnings(props):
            log.warning("[%s] %s", props.get("name"), warning)
        for tag, _ in debezium_keys.metric_tags(props.get("custom.metric.tags")) or ():
            if tag in debezium_keys.STANDARD_METRIC_LABELS:
                log.warning("[%s] The custom.metric.tags tag %s is a standard label of the Debezium metrics, which "
                            "keep their own value", props.get("name"), tag)
        self._props = dict(props)
        self._monitor: sharding.TopologyMonitor | None = None
        self._shards: list[sharding.Shard] = []
        parsed = mongo_config.MongoDbConfig.parse(props)
        if parsed.capture.connection_mode is ConnectionMode.REPLICA_SET:
            self._start_discovery(parsed)

    def _start_discovery(self, parsed: mongo_config.MongoDbConfig) -> None:
        """Find the shards now, then watch for changes."""
        name = self._props.get("name", "?")
        self._client: Any = connection.new_client(parsed)
        try:
            self._shards = sharding.discover_shards(self._client)
        except PyMongoError as exc:
            self._client.close()
            raise ConnectError(f"[{name}] Unable to read the shards of {parsed.connection_string}: {exc}") from exc
        log.info("[%s] Replica-set mode: shards %s", name, [s.id for s in self._shards])
        context = getattr(self, "context", None)
        if context is not None:
            self._monitor = sharding.TopologyMonitor(
                lambda: sharding.discover_shards(self._client), self._shards,
                parsed.capture.poll_interval_ms / 1000, context.request_task_reconfiguration, name)
            self._monitor.start()

    def task_class(self) -> type:
        return MongoDbConnectorTask

    def exactly_once_support(self, props: Mapping[str, str]) -> ExactlyOnceSupport:
        """Supported: every event carries the resume position it was read at (its source offset), and a task
        resumes from the offsets committed with its last transaction."""
        return ExactlyOnceSupport.SUPPORTED

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """One task with the connector config unchanged; in replica-set mode one per group of shards."""
        shards = self._monitor.known if self._monitor is not None else self._shards
        if shards:
            return sharding.task_configs(self._props, shards, max_tasks)
        return [dict(self._props)]

    def stop(self) -> None:
        """Stop watching the topology."""
        monitor = getattr(self, "_monitor", None)
        if monitor is not None:
            monitor.stop()
        client = getattr(self, "_client", None)
        if client is not None:
            client.close()

    def config(self) -> ConfigDef:
        return mongo_config.CONFIG_DEF

    def alter_offsets(self, props: Mapping[str, str], offsets: Mapping[tuple[tuple[str, Any], ...], Any]) -> bool:
        """Accept a reset (re-stream from "now", or re-snapshot once snapshots exist) or a rewind to a stored
        position; the partition must be ``{"server_id": <topic.prefix>}`` and an offset needs a
        ``resume_token`` string or ``sec``/``ord`` integers."""
        prefix = props.get("topic.prefix")
        for partition, offset in offsets.items():
            keys = dict(partition)
            if keys.get("server_id") != prefix or set(keys) - {"server_id", "rs"}:
                raise ConnectError(f"Unknown source partition {dict(partition)}; expected {{'server_id': '{prefix}'}}")
            if offset is None:
                continue
            token = offset.get("resume_token")
            has_time = isinstance(offset.get("sec"), int) and isinstance(offset.get("ord"), int)
            if not (isinstance(token, str) and token) and not has_time:
                raise ConnectError("An offset needs a 'resume_token' string or 'sec' and 'ord' integers")
        return True

    def validate(self, props: Mapping[str, str]) -> list[ConfigValue]:
        """Key checks plus the cross-key ones (mutually exclusive filters, capture target)."""
        return mongo_config.validate(props)

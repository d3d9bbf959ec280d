"""``MongoDbConnector``: validates the config and hands it to one task, as Debezium 3.x does (one change
stream through the replica set or mongos)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from connect.api.config import ConfigDef, ConfigValue
from connect.api.connector import SourceConnector
from connect.api.errors import ConnectError
from connectors.mongodb import config as mongo_config
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
        self._props = dict(props)

    def task_class(self) -> type:
        """The task class."""
        return MongoDbConnectorTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """One task with the connector config unchanged."""
        return [dict(self._props)]

    def stop(self) -> None:
        """Nothing to release."""

    def config(self) -> ConfigDef:
        """The connector's keys."""
        return mongo_config.CONFIG_DEF

    def alter_offsets(self, props: Mapping[str, str], offsets: Mapping[tuple[tuple[str, Any], ...], Any]) -> bool:
        """Accept a reset (re-stream from "now", or re-snapshot once snapshots exist) or a rewind to a stored
        position; the partition must be ``{"server_id": <topic.prefix>}`` and an offset needs a
        ``resume_token`` string or ``sec``/``ord`` integers."""
        prefix = props.get("topic.prefix")
        for partition, offset in offsets.items():
            if dict(partition) != {"server_id": prefix}:
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

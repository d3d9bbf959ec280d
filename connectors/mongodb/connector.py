"""``MongoDbConnector``: validates the config and hands it to one task, as Debezium 3.x does (one change
stream through the replica set or mongos)."""

from __future__ import annotations

import logging
from collections.abc import Mapping

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

    def validate(self, props: Mapping[str, str]) -> list[ConfigValue]:
        """Key checks plus the cross-key ones (mutually exclusive filters, capture target)."""
        return mongo_config.validate(props)

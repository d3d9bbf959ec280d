"""The plugin contract: what connectors, converters and transforms implement and use.

This package imports nothing else of the project.
"""

from connect.api.config import ConfigDef, ConfigKey, ConfigType, ConfigValue
from connect.api.connector import (
    ConnectorContext,
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    SourceConnector,
)
from connect.api.converter import Converter, HeaderConverter
from connect.api.data import Field, Schema, SchemaAndValue, Struct, Type
from connect.api.errors import (
    AlreadyExistsError,
    ConfigError,
    ConnectError,
    DataError,
    NotFoundError,
    RetriableError,
)
from connect.api.records import Header, SourceRecord
from connect.api.task import OffsetStorageReader, SourceTask, SourceTaskContext, TransactionContext
from connect.api.transforms import Predicate, Transformation, new_record

__all__ = [
    "AlreadyExistsError",
    "ConfigDef",
    "ConfigError",
    "ConfigKey",
    "ConfigType",
    "ConfigValue",
    "ConnectError",
    "ConnectorContext",
    "ConnectorTransactionBoundaries",
    "Converter",
    "DataError",
    "ExactlyOnceSupport",
    "Field",
    "Header",
    "HeaderConverter",
    "NotFoundError",
    "OffsetStorageReader",
    "Predicate",
    "RetriableError",
    "Schema",
    "SchemaAndValue",
    "SourceConnector",
    "SourceRecord",
    "SourceTask",
    "SourceTaskContext",
    "Struct",
    "TransactionContext",
    "Transformation",
    "Type",
    "new_record",
]

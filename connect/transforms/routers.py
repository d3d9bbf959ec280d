"""Topic routers: ``RegexRouter`` and ``TimestampRouter``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, ClassVar

from connect.api.config import ConfigDef
from connect.api.errors import DataError
from connect.api.records import SourceRecord, describe
from connect.api.transforms import Transformation, new_record
from connect.transforms.util import (
    check_date_format,
    format_date,
    invalid,
    java_regex,
    java_replacement,
    key,
    settings,
    valid_regex,
)

__all__ = ["RegexRouter", "TimestampRouter"]


def _check_replacement(name: str, raw: str | None) -> str | None:
    if raw is None:
        return None
    try:
        java_replacement(raw)
    except ValueError as exc:
        return invalid(name, raw, str(exc))
    return None


class RegexRouter(Transformation):
    """Rename the topic when the whole name matches ``regex``: ``replacement`` with ``$1``-style groups."""

    CONFIG: ClassVar[ConfigDef] = ConfigDef((
        key("regex", required=True, importance="HIGH", doc="Regular expression to use for matching.",
            validators=(valid_regex,)),
        key("replacement", required=True, importance="HIGH", doc="Replacement string.",
            validators=(_check_replacement,)),
    ))

    def config(self) -> ConfigDef:
        return self.CONFIG

    def configure(self, configs: Mapping[str, Any]) -> None:
        conf = settings(self.CONFIG, configs)
        self.regex = re.compile(java_regex(conf["regex"]))
        self.replacement = java_replacement(conf["replacement"])

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        match = self.regex.fullmatch(record.topic)
        if match is None:
            return record
        return new_record(record, topic=self.replacement(match))


class TimestampRouter(Transformation):
    """Topic from ``topic.format`` with ``${topic}`` and ``${timestamp}`` (the record timestamp in
    ``timestamp.format``, a SimpleDateFormat pattern, UTC)."""

    CONFIG: ClassVar[ConfigDef] = ConfigDef((
        key("topic.format", default="${topic}-${timestamp}", importance="HIGH",
            doc="Format string which can contain ${topic} and ${timestamp} as placeholders for the topic and "
                "timestamp, respectively."),
        key("timestamp.format", default="yyyyMMdd", importance="HIGH",
            doc="Format string for the timestamp that is compatible with java.text.SimpleDateFormat.",
            validators=(check_date_format,)),
    ))

    def config(self) -> ConfigDef:
        return self.CONFIG

    def configure(self, configs: Mapping[str, Any]) -> None:
        conf = settings(self.CONFIG, configs)
        self.topic_format: str = conf["topic.format"]
        self.timestamp_format: str = conf["timestamp.format"]

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        if record.timestamp is None:
            raise DataError(f"Timestamp missing on record: {describe(record)}")
        stamp = format_date(self.timestamp_format, datetime.fromtimestamp(record.timestamp / 1000, UTC))
        topic = self.topic_format.replace("${topic}", record.topic).replace("${timestamp}", stamp)
        return new_record(record, topic=topic)

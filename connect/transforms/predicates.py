"""Connect's predicates (``org.apache.kafka.connect.transforms.predicates.*``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

from connect.api.config import ConfigDef
from connect.api.records import SourceRecord
from connect.api.transforms import Predicate
from connect.transforms.util import java_regex, key, non_empty_string, settings, valid_regex

__all__ = ["HasHeaderKey", "RecordIsTombstone", "TopicNameMatches"]


class TopicNameMatches(Predicate):
    """True when the whole topic name matches ``pattern``."""

    CONFIG: ClassVar[ConfigDef] = ConfigDef((
        key("pattern", required=True, importance="MEDIUM",
            doc="A Java regular expression for matching against the name of a record's topic.",
            validators=(non_empty_string, valid_regex)),
    ))

    def config(self) -> ConfigDef:
        return self.CONFIG

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.pattern = re.compile(java_regex(settings(self.CONFIG, configs)["pattern"]))

    def test(self, record: SourceRecord) -> bool:
        return record.topic is not None and self.pattern.fullmatch(record.topic) is not None


class HasHeaderKey(Predicate):
    """True when the record has at least one header called ``name``."""

    CONFIG: ClassVar[ConfigDef] = ConfigDef((
        key("name", required=True, importance="MEDIUM", doc="The header name.", validators=(non_empty_string,)),
    ))

    def config(self) -> ConfigDef:
        return self.CONFIG

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.name: str = settings(self.CONFIG, configs)["name"]

    def test(self, record: SourceRecord) -> bool:
        return any(h.key == self.name for h in record.headers)


class RecordIsTombstone(Predicate):
    """True when the record's value is null."""

    def config(self) -> ConfigDef:
        return ConfigDef()

    def test(self, record: SourceRecord) -> bool:
        return record.value is None

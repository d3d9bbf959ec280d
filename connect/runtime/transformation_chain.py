"""The transformation chain of a connector (Connect's ``TransformationChain`` and ``TransformationStage``).

Built from a connector config::

    transforms=unwrap,route
    transforms.unwrap.type=io.debezium.connector.mongodb.transforms.ExtractNewDocumentState
    transforms.route.type=RegexRouter
    transforms.route.regex=...
    transforms.route.predicate=isData
    transforms.route.negate=false
    predicates=isData
    predicates.isData.type=TopicNameMatches
    predicates.isData.pattern=...

Each stage applies its transform when it has no predicate, or when the predicate's result differs from
``negate``. A None from a transform drops the record and ends the chain.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from connect.api.config import parse_list
from connect.api.errors import ConnectError
from connect.api.records import SourceRecord
from connect.api.transforms import Predicate, Transformation
from connect.runtime import plugins
from connect.runtime.error_handling import FAILED, RetryWithToleranceOperator, Stage
from connect.runtime.worker_config import prefixed

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TransformationStage:
    """One alias of the chain: a transform, optionally gated by a predicate."""

    alias: str
    transformation: Transformation
    predicate: Predicate | None = None
    negate: bool = False

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        """The transformed record (or the record unchanged when the predicate says so)."""
        if self.predicate is not None and self.predicate.test(record) == self.negate:
            return record
        return self.transformation.apply(record)

    def close(self) -> None:
        """Close the transform and the predicate."""
        for closeable in (self.transformation, self.predicate):
            if closeable is None:
                continue
            try:
                closeable.close()
            except Exception:
                log.exception("Failed to close %s of transform %s", type(closeable).__name__, self.alias)


class TransformationChain:
    """The ordered stages of one task."""

    def __init__(self, stages: tuple[TransformationStage, ...] = ()) -> None:
        self.stages = stages

    def apply(self, record: SourceRecord, operator: RetryWithToleranceOperator | None = None) -> Any:
        """The record after every stage; None when a transform dropped it, :data:`FAILED` when a stage failed and
        ``errors.tolerance=all`` skips it (with ``none`` the failure propagates)."""
        current: SourceRecord | None = record
        for stage in self.stages:
            if current is None:
                return None
            if operator is None:
                current = stage.apply(current)
                continue
            current = operator.execute(Stage.TRANSFORMATION, stage.transformation, partial(stage.apply, current),
                                       current)
            if current is FAILED:
                return FAILED
        return current

    def close(self) -> None:
        """Close every stage."""
        for stage in self.stages:
            stage.close()

    def __bool__(self) -> bool:
        return bool(self.stages)


def _instantiate(kind: tuple[plugins.PluginDesc, ...], noun: str, alias: str, props: Mapping[str, str],
                 prefix: str) -> Any:
    name = props.get(f"{prefix}type")
    if not name:
        raise ConnectError(f'Missing required configuration "{prefix}type" which has no default value.')
    desc = plugins.find(kind, name)
    if desc is None:
        raise ConnectError(f"Invalid value {name} for configuration {prefix}type: Class {name} could not be found.")
    instance = plugins.load(desc)()
    settings = {k: v for k, v in prefixed(props, prefix).items() if k not in ("type", "plugin.version")}
    try:
        instance.configure(settings)
    except Exception as exc:  # the plugin's own message, with the alias and class it belongs to
        raise ConnectError(f"Invalid configuration of {noun} '{alias}' ({desc.class_name}): {exc}") from exc
    return instance


def build_chain(props: Mapping[str, str]) -> TransformationChain:
    """The chain a connector config describes; raises :class:`ConnectError` on a bad transform or predicate."""
    predicates: dict[str, Predicate] = {}
    for alias in dict.fromkeys(parse_list(props.get("predicates"))):
        predicates[alias] = _instantiate(plugins.PREDICATES, "predicate", alias, props, f"predicates.{alias}.")
    stages = []
    for alias in dict.fromkeys(parse_list(props.get("transforms"))):
        prefix = f"transforms.{alias}."
        transformation = _instantiate(plugins.TRANSFORMATIONS, "transformation", alias,
                                      {k: v for k, v in props.items() if k not in (prefix + "predicate",
                                                                                   prefix + "negate")}, prefix)
        predicate_alias = props.get(prefix + "predicate")
        predicate = None
        if predicate_alias:
            predicate = predicates.get(predicate_alias.strip())
            if predicate is None:
                raise ConnectError(f"Invalid value {predicate_alias} for configuration {prefix}predicate: "
                                   "The predicate alias must be one of the aliases in 'predicates'")
        negate = str(props.get(prefix + "negate", "false")).strip().lower() == "true"
        stages.append(TransformationStage(alias, transformation, predicate, negate))
    return TransformationChain(tuple(stages))

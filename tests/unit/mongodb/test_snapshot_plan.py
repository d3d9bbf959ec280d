"""Whether a collection is split: the query plan of an ``_id`` range, in the shapes MongoDB and SecantusDB give."""

from __future__ import annotations

import pytest

from connect.api.errors import ConfigError
from connectors.mongodb.config import MongoDbConfig
from connectors.mongodb.snapshot.parallel import plan_scans_range

BASE = {"topic.prefix": "p", "mongodb.connection.string": "mongodb://h/"}


@pytest.mark.parametrize(("plan", "ranged"), [
    ({"winningPlan": {"stage": "FETCH", "inputStage": {"stage": "IXSCAN", "indexName": "_id_"}}}, True),
    ({"winningPlan": {"stage": "SORT", "inputStage": {"stage": "COLLSCAN", "direction": "forward"}}}, False),
    ({"winningPlan": {"stage": "CLUSTERED_IXSCAN"}}, True),
    ({"winningPlan": {"stage": "COLLSCAN", "minRecord": 5, "direction": "forward"}}, True),
    ({"winningPlan": {"queryPlan": {"stage": "FETCH", "inputStage": {"stage": "IXSCAN"}}}}, True),
    ({"winningPlan": {"stage": "SHARD_MERGE", "shards": [{"winningPlan": {"stage": "COLLSCAN"}},
                                                          {"winningPlan": {"stage": "COLLSCAN"}}]}}, False),
    ({"winningPlan": {"stage": "SHARD_MERGE", "shards": [{"winningPlan": {"stage": "FETCH", "inputStage": {
        "stage": "IXSCAN"}}}]}}, True),
    ({}, True),  # no plan to read: MongoDB's _id index always exists
])
def test_plan_scans_range(plan: dict[str, object], ranged: bool) -> None:
    assert plan_scans_range(plan) is ranged


def test_split_mode_is_validated_and_parsed() -> None:
    assert MongoDbConfig.parse(BASE).snapshot_split == "auto"
    assert MongoDbConfig.parse({**BASE, "snapshot.split.mode": "Always"}).snapshot_split == "always"
    with pytest.raises(ConfigError, match=r"must be one of"):
        MongoDbConfig.parse({**BASE, "snapshot.split.mode": "sometimes"})

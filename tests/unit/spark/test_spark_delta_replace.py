"""A small batch's change of a Delta latest-state table in one replaceWhere commit (spark_jobs.delta_replace): the
MERGE's outcome, keys that need quoting included."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from delta.tables import DeltaTable

from spark_jobs.batch import session_conf
from spark_jobs.delta_replace import replace_keys, sql_string

SCHEMA = "_key string, _op string, _source_ts timestamp, _source_ord long, v long"
T0 = dt.datetime(2026, 11, 29, 12, 0, 0)


def _at(seconds: int) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def _table(spark: Any, path: Path) -> dict[str, tuple[str, int | None]]:
    return {r["_key"]: (r["_op"], r["v"]) for r in spark.read.format("delta").load(str(path)).collect()}


def _stored(spark: Any, path: Path) -> Any:
    rows = [("a'1", "c", _at(10), 1, 1), ("b\\2", "c", _at(50), 1, 2), ("c", "c", _at(10), 1, 3),
            ('d"\u00e9', "c", _at(10), 1, 4), ("same", "c", _at(20), 5, 5)]
    with session_conf(spark, {"spark.databricks.delta.properties.defaults.enableDeletionVectors": "true"}):
        spark.createDataFrame(rows, SCHEMA).coalesce(1).write.format("delta").save(str(path))
    return spark.read.format("delta").load(str(path))


def test_sql_string_quotes_and_backslashes(spark: Any) -> None:
    for text in ("plain", "it's", "back\\slash\\'", '{"_id": "x"}', "\u00e9\n"):
        assert spark.sql(f"SELECT {sql_string(text)} AS s").first()["s"] == text


def test_newer_changes_replace_and_delete_older_ones_stay_in_one_commit(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "t"
    current = _stored(spark, path)
    batch = [("a'1", "u", _at(20), 1, 10),     # newer: replaces
             ("b\\2", "u", _at(40), 9, 20),    # older than the stored row: stays as it is
             ("c", "d", _at(20), 1, None),     # newer delete: the row goes
             ("gone", "d", _at(20), 1, None),  # delete of a key never stored: nothing
             ("new", "c", _at(20), 1, 60),     # insert
             ("same", "u", _at(20), 5, 50)]    # same position: the later run's change applies
    gained = replace_keys(spark, str(path), current, spark.createDataFrame(batch, SCHEMA))
    assert gained == 0  # one inserted, one deleted
    assert _table(spark, path) == {"a'1": ("u", 10), "b\\2": ("c", 2), 'd"\u00e9': ("c", 4), "new": ("c", 60),
                                   "same": ("u", 50)}
    history = DeltaTable.forPath(spark, str(path)).history().collect()
    assert len(history) == 2 and history[0]["operation"] == "WRITE"
    commit = (path / "_delta_log" / f"{history[0]['version']:020d}.json").read_text().splitlines()
    kept = [json.loads(line)["add"] for line in commit if '"add"' in line and "deletionVector" in line]
    assert kept and all(add["deletionVector"] for add in kept)  # the old file marked, not rewritten


def test_a_batch_that_changes_nothing_commits_nothing(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "t"
    current = _stored(spark, path)
    batch = [("b\\2", "d", _at(40), 1, None)]  # older than the stored row
    assert replace_keys(spark, str(path), current, spark.createDataFrame(batch, SCHEMA)) == 0
    assert len(DeltaTable.forPath(spark, str(path)).history().collect()) == 1
    assert _table(spark, path)["b\\2"] == ("c", 2)

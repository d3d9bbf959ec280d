"""A small batch's change of a Delta latest-state table in one commit (spark_jobs.delta_replace), its delete run
on a JVM thread of its own while the new rows are built (``concurrent``) or as one replaceWhere write: the MERGE's
outcome, keys that need quoting included; the stored rows read only when a change may be older than them."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from delta.tables import DeltaTable
from pyspark.sql import functions as F

from spark_jobs.batch import session_conf
from spark_jobs.delta_batches import Done
from spark_jobs.delta_replace import (
    NO_POSITION,
    Decision,
    abandon,
    begin,
    decide,
    lists_files,
    newest,
    replace_keys,
    sql_string,
    supersedes,
    write_ahead,
)

SCHEMA = "_key string, _op string, _source_ts timestamp, _source_ord long, v long"
T0 = dt.datetime(2026, 11, 29, 12, 0, 0, tzinfo=dt.UTC)
MARKER = '{"spark_jobs": {"app": "test", "batch": 2}}'


def _at(seconds: int) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def _ms(seconds: int) -> int:
    return int(_at(seconds).timestamp() * 1000)


@pytest.fixture(params=[True, False], ids=["concurrent", "replaceWhere"])
def concurrent(request: Any) -> bool:
    return bool(request.param)


def _replace(spark: Any, path: Path, current: Any, batch: list[Any], concurrent: bool, bound: Any = None) -> int | None:
    rows = spark.createDataFrame(batch, SCHEMA)
    decision = decide(rows, current, bound)
    started = begin(spark, str(path), decision) if concurrent else None
    assert (started is not None) == (concurrent and bool(decision.chosen))  # the functions jar is on the class path
    try:
        with session_conf(spark, {"spark.databricks.delta.commitInfo.userMetadata": MARKER}):
            return replace_keys(spark, str(path), decision, rows, MARKER, started)
    except BaseException:
        abandon(started)
        raise


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


def test_newer_changes_replace_and_delete_older_ones_stay_in_one_commit(spark: Any, tmp_path: Path,
                                                                         concurrent: bool) -> None:
    path = tmp_path / "t"
    current = _stored(spark, path)
    batch = [("a'1", "u", _at(20), 1, 10),     # newer: replaces
             ("b\\2", "u", _at(40), 9, 20),    # older than the stored row: stays as it is
             ("c", "d", _at(20), 1, None),     # newer delete: the row goes
             ("gone", "d", _at(20), 1, None),  # delete of a key never stored: nothing
             ("new", "c", _at(20), 1, 60),     # insert
             ("same", "u", _at(20), 5, 50)]    # same position: the later run's change applies
    assert _replace(spark, path, current, batch, concurrent) == 0  # one inserted, one deleted
    assert _table(spark, path) == {"a'1": ("u", 10), "b\\2": ("c", 2), 'd"\u00e9': ("c", 4), "new": ("c", 60),
                                   "same": ("u", 50)}
    history = DeltaTable.forPath(spark, str(path)).history().collect()
    assert len(history) == 2 and history[0]["operation"] == "WRITE" and history[0]["userMetadata"] == MARKER
    if concurrent:  # its metrics: rows written ("a'1", "new", "same"), stored rows deleted ("a'1", "c", "same")
        assert (history[0]["operationMetrics"]["numOutputRows"], history[0]["operationMetrics"]["numDeletedRows"]) \
            == ("3", "3")
    commit = (path / "_delta_log" / f"{history[0]['version']:020d}.json").read_text().splitlines()
    kept = [json.loads(line)["add"] for line in commit if '"add"' in line and "deletionVector" in line]
    assert kept and all(add["deletionVector"] for add in kept)  # the old file marked, not rewritten


def test_a_batch_that_changes_nothing_commits_nothing(spark: Any, tmp_path: Path, concurrent: bool) -> None:
    path = tmp_path / "t"
    current = _stored(spark, path)
    batch = [("b\\2", "d", _at(40), 1, None)]  # older than the stored row
    assert _replace(spark, path, current, batch, concurrent) == 0
    assert len(DeltaTable.forPath(spark, str(path)).history().collect()) == 1
    assert _table(spark, path)["b\\2"] == ("c", 2)


def test_newest_and_supersedes_order_positions_as_applies_does() -> None:
    assert newest([]) is None and newest([(None, 3)]) is None
    assert newest([(5, 1), (7, None), (6, 9)]) == (7, None)
    assert newest([(7, None), (7, 2), (7, 1), (None, 8)]) == (7, 2)
    assert newest([NO_POSITION, (3, 1)]) == (3, 1) and newest([NO_POSITION]) == NO_POSITION
    assert supersedes(8, 0, (7, 5)) and supersedes(None, None, (7, 5))  # later, or without a position
    assert supersedes(7, 5, (7, 5)) and supersedes(7, None, (7, 5)) and supersedes(7, 1, (7, None))
    assert not supersedes(7, 4, (7, 5)) and not supersedes(6, 9, (7, 5))
    assert supersedes(-5, None, NO_POSITION)


def test_changes_newer_than_the_bound_apply_without_reading_the_stored_rows(spark: Any, tmp_path: Path,
                                                                            concurrent: bool) -> None:
    path = tmp_path / "t"
    current = _stored(spark, path)
    batch = [("a'1", "u", _at(60), 1, 10),     # replaces a stored row
             ("c", "d", _at(61), 1, None),     # deletes one
             ("gone", "d", _at(61), 2, None),  # a key never stored: nothing
             ("new", "c", _at(62), 1, 60),     # inserts
             ("new2", "c", None, None, 70)]    # no position: applies
    before = spark.read.format("delta").load(str(path)).count()
    unread = current.withColumn("_key", F.expr("cast(raise_error('the stored rows were read') as string)"))
    gained = _replace(spark, path, unread, batch, concurrent, bound=(_ms(50), 1))
    assert gained == 1 == spark.read.format("delta").load(str(path)).count() - before  # from the delete's metrics
    assert _table(spark, path) == {"a'1": ("u", 10), "b\\2": ("c", 2), 'd"\u00e9': ("c", 4), "new": ("c", 60),
                                   "new2": ("c", 70), "same": ("c", 5)}


def test_a_change_the_bound_does_not_cover_reads_the_stored_rows(spark: Any, tmp_path: Path, concurrent: bool) -> None:
    path = tmp_path / "t"
    current = _stored(spark, path)
    batch = [("a'1", "u", _at(60), 1, 10), ("b\\2", "u", _at(40), 9, 20)]  # the second is older than its row
    assert _replace(spark, path, current, batch, concurrent, bound=(_ms(50), 1)) == 0
    assert _table(spark, path)["b\\2"] == ("c", 2) and _table(spark, path)["a'1"] == ("u", 10)


def test_the_done_marker_keeps_each_tables_bound() -> None:
    done = Done(3, "app", {"t": {"0": 7}}, {"t": "{}"}, {"t": 5, "u": 1}, {"t": (_ms(60), 2), "u": NO_POSITION,
                                                                         "v": (_ms(1), None)})
    assert Done.from_json(done.to_json()) == done
    older = json.loads(done.to_json())
    del older["positions"]  # a marker an earlier version wrote: no bound known
    assert Done.from_json(json.dumps(older)).positions == {}


def test_every_key_joined_replaces_and_deletes_the_batchs_keys_without_listing_them(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "t"
    _stored(spark, path)
    batch = [("a'1", "u", _at(60), 1, 10),     # replaces a stored row
             ("c", "d", _at(61), 1, None),     # deletes one
             ("gone", "d", _at(61), 2, None),  # a key never stored: nothing
             ("new", "c", _at(62), 1, 60)]     # inserts
    rows = spark.createDataFrame(batch, SCHEMA)
    decision = Decision.every_key()
    started = begin(spark, str(path), decision, rows.select("_key"))
    assert started is not None
    assert replace_keys(spark, str(path), decision, rows, MARKER, started) == 0  # two written, two deleted
    assert _table(spark, path) == {"a'1": ("u", 10), "b\\2": ("c", 2), 'd"\u00e9': ("c", 4), "new": ("c", 60),
                                   "same": ("c", 5)}
    history = DeltaTable.forPath(spark, str(path)).history().collect()
    assert len(history) == 2 and history[0]["userMetadata"] == MARKER
    assert (history[0]["operationMetrics"]["numOutputRows"], history[0]["operationMetrics"]["numDeletedRows"]) \
        == ("2", "2")


def test_rows_written_ahead_are_committed_with_the_delete_or_left_out_of_the_table(spark: Any, tmp_path: Path) -> None:
    batch = [("a'1", "u", _at(60), 1, 10), ("c", "d", _at(61), 1, None), ("new", "c", _at(62), 1, 60)]
    expected = {"a'1": ("u", 10), "b\\2": ("c", 2), 'd"\u00e9': ("c", 4), "new": ("c", 60), "same": ("c", 5)}
    for commit in (True, False):
        path = tmp_path / f"t{commit}"
        _stored(spark, path)
        stored = _table(spark, path)
        rows = spark.createDataFrame(batch, SCHEMA)
        decision = Decision.every_key()
        started = begin(spark, str(path), decision, rows.select("_key"))
        assert started is not None
        write_ahead(decision, rows, started)  # the new rows' file is in the table's folder, not in the table
        ahead = {f.name for f in path.glob("*.parquet")} - _files(spark, path)
        assert len(ahead) == 1 and _table(spark, path) == stored
        if commit:
            assert replace_keys(spark, str(path), decision, rows, MARKER, started, written=True) == 0
            history = DeltaTable.forPath(spark, str(path)).history().collect()
            assert len(history) == 2 and history[0]["userMetadata"] == MARKER
            assert history[0]["operationMetrics"]["numOutputRows"] == "2"
            assert ahead <= _files(spark, path)
        else:  # the batch is applied another way (a replaceWhere write): the rows written ahead are in no commit
            abandon(started)
            listed = decide(rows, spark.read.format("delta").load(str(path)), None)
            with session_conf(spark, {"spark.databricks.delta.commitInfo.userMetadata": MARKER}):
                replace_keys(spark, str(path), listed, rows, MARKER)
            assert not ahead & _files(spark, path)
        assert _table(spark, path) == expected


def _files(spark: Any, path: Path) -> set[str]:
    """The names of the data files of the Delta table at ``path``."""
    return {name.rsplit("/", 1)[-1] for name in spark.read.format("delta").load(str(path)).inputFiles()}


@pytest.mark.parametrize("listed", [True, False], ids=["checksum-files", "log-replay"])
def test_a_replacement_marks_the_touched_files_from_the_checksums_file_list_or_the_logs(
        spark: Any, tmp_path: Path, listed: bool) -> None:
    path = tmp_path / "t"
    # Delta lists the files in a version's checksum file up to its threshold: 0 lists none
    with session_conf(spark, {"spark.databricks.delta.allFilesInCrc.thresholdNumFiles": "1000" if listed else "0"}):
        _stored(spark, path)
        assert lists_files(spark, str(path)) == listed

        def replace(batch: list[Any]) -> int | None:
            rows = spark.createDataFrame(batch, SCHEMA)
            started = begin(spark, str(path), Decision.every_key(), rows.select("_key"))
            assert started is not None
            return replace_keys(spark, str(path), Decision.every_key(), rows, MARKER, started)

        # a deletion vector on the stored file, and a file added
        assert replace([("a'1", "u", _at(60), 1, 10), ("c", "d", _at(61), 1, None), ("new", "c", _at(62), 1, 60)]) == 0
        assert lists_files(spark, str(path)) == listed
        # the stored file's other rows: its deletion vector grows to every row, the file is removed
        assert replace([("b\\2", "d", _at(70), 1, None), ('d"\u00e9', "d", _at(70), 2, None),
                        ("same", "d", _at(70), 3, None)]) == -3
    assert _table(spark, path) == {"a'1": ("u", 10), "new": ("c", 60)}
    log = [json.loads(line) for line in (path / "_delta_log" / f"{2:020d}.json").read_text().splitlines()]
    removed = [a["remove"] for a in log if "remove" in a]
    assert len(removed) == 1 and removed[0]["deletionVector"]["cardinality"] == 2
    assert not [a for a in log if "add" in a]  # the file went whole: no file with a deletion vector added
    first = [json.loads(line) for line in (path / "_delta_log" / f"{1:020d}.json").read_text().splitlines()]
    marked = [a["add"] for a in first if "add" in a and a["add"].get("deletionVector")]
    assert len(marked) == 1 and marked[0]["deletionVector"]["cardinality"] == 2
    stats = json.loads(marked[0]["stats"])
    assert stats["tightBounds"] is False and stats["numRecords"] == 5  # the file's rows, the deleted ones too
    history = DeltaTable.forPath(spark, str(path)).history().collect()
    assert history[1]["operationMetrics"]["numDeletedRows"] == "2"
    assert history[0]["operationMetrics"]["numRemovedFiles"] == "1"

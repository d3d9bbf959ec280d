"""A small batch's latest-state change in one Delta commit without a MERGE (see :func:`decide`, :func:`begin` and
:func:`replace_keys`)."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_jobs import tables
from spark_jobs.batch import session_conf
from spark_jobs.hadoop_fs import HadoopFolder

__all__ = ["NO_POSITION", "Decision", "Position", "abandon", "begin", "decide", "deleted_rows", "last_write_metric",
           "lists_files", "newest", "replace_keys", "sql_string", "supersedes", "write_ahead"]

log = logging.getLogger(__name__)

# A source position: ``ts_ms`` and the ``ord`` of the newest change at that millisecond that has one (None: none)
Position = tuple[int, int | None]
# The bound of a table none of whose rows has a position: every change supersedes them
NO_POSITION: Position = (-(2**63), None)
_COMMIT = re.compile(r"^[0-9]{20}\.json$")

# The rows written are the chosen keys' rows by construction: Delta's check of each against the replaceWhere
# predicate (an IN list of every key) is left out.
_NO_CONSTRAINT_CHECK = {"spark.databricks.delta.replaceWhere.constraintCheck.enabled": "false"}


def sql_string(text: str) -> str:
    """``text`` as a Spark SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def newest(positions: Iterable[tuple[int | None, int | None]]) -> Position | None:
    """The highest of source positions (``ts_ms``, then ``ord``; those without ``ts_ms`` left out): at or above every
    one of them by :func:`tables.applies`' order."""
    top: Position | None = None
    for ts, order in positions:
        if ts is None:
            continue
        later_order = order is not None and top is not None and (top[1] is None or order > top[1])
        if top is None or ts > top[0] or (ts == top[0] and later_order):
            top = (ts, order)
    return top


def supersedes(ts: int | None, order: int | None, bound: Position) -> bool:
    """Whether a change at (``ts``, ``order``) replaces every stored row at or below ``bound``
    (:func:`tables.applies` against each of them)."""
    return ts is None or ts > bound[0] or (ts == bound[0] and (order is None or bound[1] is None
                                                              or order >= bound[1]))


@dataclass(frozen=True)
class Decision:
    """Which of a batch's changes apply to a latest-state table (see :func:`decide`)."""

    chosen: tuple[str, ...] | None  # the keys whose change applies (None: every key, not listed)
    every: bool  # those are all the keys the batch decided: none of its rows is left out
    written: int | None  # how many of them are not deletes (None: not counted)
    replaced: int | None  # how many stored rows they replace (None: the stored rows were not read)

    @classmethod
    def every_key(cls) -> Decision:
        """Every change applies (none of the batch's rows is older than the table's bound); the keys not listed."""
        return cls(None, True, None, None)

    @property
    def predicate(self) -> str:
        """The SQL predicate of the chosen keys' rows: ``_key IN (...)``."""
        assert self.chosen is not None, "the keys of every_key() are not listed"
        return "_key IN (" + ",".join(sql_string(key) for key in self.chosen) + ")"


def decide(deciding: DataFrame, current: DataFrame, bound: Position | None) -> Decision:
    """Which changes of ``deciding`` (one row per key the batch decided: ``_key``, ``_op``, ``_source_ts``,
    ``_source_ord``) apply to the Delta table ``current``; ``bound``: a source position at or above every stored
    row's (None: not known).

    The batch's keys, ops and positions are collected (one job over its cached rows). When every change is newer
    than ``bound`` (:func:`supersedes`; the common case: a run reads what the connector wrote after the last run),
    every change applies; otherwise the keys whose change applies are decided from the stored rows' ``_key`` and
    source position (a columnar read of three columns joined to the batch's broadcast positions, collected on the
    driver): a key without a stored row, or whose stored row is not newer (:func:`tables.applies`)."""
    batch = deciding.select("_key", "_op", F.unix_millis("_source_ts").alias("_ts"), "_source_ord").collect()
    ops = {row[0]: row[1] for row in batch}
    if bound is not None and all(supersedes(row[2], row[3], bound) for row in batch):
        return Decision(tuple(ops), True, sum(1 for op in ops.values() if op != "d"), None)
    stored = current.select("_key", F.col("_source_ts").alias("_t_ts"), F.col("_source_ord").alias("_t_ord"))
    matched = stored.join(F.broadcast(deciding.select("_key", "_source_ts", "_source_ord")), "_key").select(
        "_key", tables.applies(F.col("_source_ts"), F.col("_source_ord"), F.col("_t_ts"), F.col("_t_ord")))
    applies = {row[0]: bool(row[1]) for row in matched.collect()}
    chosen = tuple(key for key in ops if applies.get(key, True))
    return Decision(chosen, len(chosen) == len(ops), sum(1 for key in chosen if ops[key] != "d"),
                    sum(1 for key in chosen if key in applies))


def begin(spark: SparkSession, path: str, decision: Decision, keys: DataFrame | None = None) -> Any | None:
    """Start deleting the stored rows of ``decision``'s keys from the Delta table at ``path``, on a JVM thread of
    its own (``spark_jobs/java``'s ``KeyReplacement``), while the caller builds the new rows; :func:`replace_keys`
    commits both. ``keys``: the keys as a frame of one string column, for a decision that does not list them
    (:meth:`Decision.every_key`): the stored rows are then found by a semi-join with it. None when there is nothing
    to replace, or the session's class path lacks that class (the change is then one ``replaceWhere`` write)."""
    if decision.chosen is not None and not decision.chosen:
        return None
    jvm = spark._jvm
    try:
        if decision.chosen is None:
            assert keys is not None, "a decision that does not list its keys needs them as a frame"
            return jvm.spark_jobs.delta.KeyReplacement.startJoined(  # type: ignore[union-attr]
                spark._jsparkSession, path, keys._jdf)
        return jvm.spark_jobs.delta.KeyReplacement.start(  # type: ignore[union-attr]
            spark._jsparkSession, path, decision.predicate)
    except Exception as exc:  # noqa: BLE001 - py4j: the class is not there (a JavaPackage, not callable) or fails
        log.info("latest-state table %s changed by one replaceWhere write: %s", path,
                 str(exc).splitlines()[0] if str(exc) else exc)
        return None


def lists_files(spark: SparkSession, path: str) -> bool:
    """Whether the checksum file of the Delta table at ``path`` lists its files (``spark_jobs/java``'s
    ``KeyReplacement.listsFiles``): a replacement :func:`begin` starts then takes them from there, without Delta's
    log replay. False when the session's class path lacks that class."""
    try:
        return bool(spark._jvm.spark_jobs.delta.KeyReplacement.listsFiles(  # type: ignore[union-attr]
            spark._jsparkSession, path))
    except Exception as exc:  # noqa: BLE001 - py4j: the class is not there (a JavaPackage, not callable) or fails
        log.debug("the checksum file of %s not read for its files: %s", path, exc)
        return False


def abandon(started: Any | None) -> None:
    """Commit nothing of a replacement :func:`begin` started (waits for its delete to end)."""
    if started is not None:
        started.abandon()


def replace_keys(spark: SparkSession, path: str, decision: Decision, source: DataFrame, marker: str,
                 started: Any | None = None, *, written: bool = False, gathered: bool = False) -> int | None:
    """Apply ``source`` (one row per key the batch decided, in the table's columns, ``_op = 'd'`` for deletes and
    tombstones) to the Delta table at ``path`` as the MERGE did, in one commit (its ``userMetadata`` ``marker``):
    the stored rows of ``decision``'s chosen keys deleted (with deletion vectors, reading only ``_key``) and the
    chosen keys' non-delete rows added. Returns how many rows the table gained (negative: lost; None: not known,
    a ``replaceWhere`` write of a decision that did not count its rows).

    ``started``: the replacement :func:`begin` started for ``decision``, whose delete ran while ``source`` was
    built: its commit is made here (``written``: with the rows :func:`write_ahead` wrote from ``source``). Without
    it, one ``replaceWhere`` write with the predicate ``_key IN (<chosen keys>)`` does both halves, one after the
    other, and its ``numDeletedRows`` metric tells how many stored rows were replaced when ``decision`` does not.
    The MERGE this replaces read every column of every file holding a batch key to write its matches (both files
    of the benchmark's table) and took 12 Spark jobs. ``gathered``: ``source``'s rows are in one Spark partition
    (see :func:`_new_rows`)."""
    if decision.chosen is not None and not decision.chosen:
        return 0
    replaced = decision.replaced
    if started is not None:
        keys = "the batch's keys" if decision.chosen is None else f"{len(decision.chosen)} keys"
        if written:
            removed, added = started.commit(f"_key IN (<{keys}>)", marker)
        else:
            removed, added = started.finish(_new_rows(decision, source, gathered)._jdf, f"_key IN (<{keys}>)",
                                            marker)
        return int(added) - (replaced if replaced is not None else int(removed))
    with session_conf(spark, _NO_CONSTRAINT_CHECK):
        _new_rows(decision, source, gathered).write.format("delta").mode("overwrite") \
            .option("replaceWhere", decision.predicate).save(path)
    if replaced is None:
        replaced = deleted_rows(spark, path, marker)
    return decision.written - replaced if replaced is not None and decision.written is not None else None


def write_ahead(decision: Decision, source: DataFrame, started: Any, *, gathered: bool = False) -> None:
    """Write the rows :func:`replace_keys` would add from ``source`` into the table of the replacement
    ``started``, not committed: :func:`replace_keys` with ``written`` commits them, :func:`abandon` leaves them to
    no commit (files a ``VACUUM`` removes)."""
    started.write(_new_rows(decision, source, gathered)._jdf)


def _new_rows(decision: Decision, source: DataFrame, gathered: bool = False) -> DataFrame:
    """The rows of ``source`` that ``decision`` adds to the table, in one partition (``gathered``: they are
    already, see :attr:`spark_jobs.batch.Batch.gathered`)."""
    new_rows = source.where(F.col("_op") != "d")
    if not decision.every:
        # the same list selects the rows to write (a DataFrame of the keys made from Python rows needs a Python
        # worker to turn them into the JVM's rows: starting one took ~1 s)
        new_rows = new_rows.where(F.expr(decision.predicate))
    # one file per batch (the rows of a small batch are few; see _append_logs in spark_jobs.delta_output), gathered
    # by a shuffle after the rows are typed: with coalesce(1) one task read every partition of the latest events,
    # parsed each document into its typed columns and wrote them, alone on one core. Incremental runs of 5,082
    # records alternating in one JVM: 2.13 against 2.25 s, JVM CPU 3.56 against 3.82 s (medians of the last 12 of
    # 14 rounds; tables equal); when nothing had computed the latest events before the write (that one task then
    # also ran their last aggregate), 2.01 against 2.34 s, lower in 9 of 10 pairs (benchmarks/results.md
    # 2026-12-01 09:52)
    return new_rows if gathered else new_rows.repartition(1)


def deleted_rows(spark: SparkSession, path: str, marker: str) -> int | None:
    """The ``numDeletedRows`` metric of the Delta table's last commit (see :func:`last_write_metric`)."""
    return last_write_metric(spark, path, marker, "numDeletedRows")


def last_write_metric(spark: SparkSession, path: str, marker: str, metric: str) -> int | None:
    """The operation metric ``metric`` of the Delta table's last commit, read from its commit file on the driver
    (no Spark job), when that commit is a write with ``userMetadata`` ``marker``; None otherwise (another commit
    came last, or the writes' metrics are off)."""
    log = HadoopFolder(spark, f"{path}/_delta_log")
    commits = [name for name in log.names() if _COMMIT.match(name)]
    if not commits:
        return None
    for line in log.read(max(commits)).splitlines():
        info = json.loads(line).get("commitInfo") if '"commitInfo"' in line else None
        if info is not None and info.get("userMetadata") == marker and info.get("operation") == "WRITE":
            value = (info.get("operationMetrics") or {}).get(metric)
            return int(value) if value is not None else None
    return None

"""A small batch's latest-state change in one Delta commit without a MERGE (see :func:`replace_keys`)."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_jobs import tables
from spark_jobs.batch import session_conf

__all__ = ["replace_keys", "sql_string"]

# The rows written are the chosen keys' rows by construction: Delta's check of each against the replaceWhere
# predicate (an IN list of every key) is left out.
_NO_CONSTRAINT_CHECK = {"spark.databricks.delta.replaceWhere.constraintCheck.enabled": "false"}


def sql_string(text: str) -> str:
    """``text`` as a Spark SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def replace_keys(spark: SparkSession, path: str, current: DataFrame, source: DataFrame) -> int:
    """Apply ``source`` (one row per key the batch decided, in the table's columns, ``_op = 'd'`` for deletes and
    tombstones) to the Delta table at ``path`` (``current``, read with the same schema) as the MERGE did, in one
    commit; returns how many rows the table gained (negative: lost).

    The keys whose change applies are decided first from the stored rows' ``_key`` and source position only (a
    columnar read of three columns joined to the batch's broadcast positions, collected on the driver): a key
    without a stored row, or whose stored row is not newer (:func:`tables.applies`). Then one ``replaceWhere``
    write of the applying non-delete rows with the predicate ``_key IN (<applying keys>)``: Delta deletes the
    stored rows of those keys (with deletion vectors, reading only ``_key``) and adds the new rows in the same
    commit. The MERGE this replaces read every column of every file holding a batch key to write its matches
    (both files of the benchmark's table) and took 12 Spark jobs."""
    stored = current.select("_key", F.col("_source_ts").alias("_t_ts"), F.col("_source_ord").alias("_t_ord"))
    positions = source.select("_key", "_op", "_source_ts", "_source_ord")
    matched = stored.join(F.broadcast(positions), "_key").select(
        "_key", F.lit(None).cast("string").alias("_op"),
        tables.applies(F.col("_source_ts"), F.col("_source_ord"), F.col("_t_ts"), F.col("_t_ord")).alias("_wins"))
    # one job: the batch's keys with their ops (_wins null), then the stored keys among them with the outcome
    rows = positions.select("_key", "_op", F.lit(None).cast("boolean").alias("_wins")).unionByName(matched).collect()
    ops = {row[0]: row[1] for row in rows if row[2] is None}
    applies = {row[0]: bool(row[2]) for row in rows if row[2] is not None}
    chosen = [key for key in ops if applies.get(key, True)]
    if not chosen:
        return 0
    written = sum(1 for key in chosen if ops[key] != "d")
    replaced = sum(1 for key in chosen if key in applies)
    predicate = "_key IN (" + ",".join(sql_string(key) for key in chosen) + ")"
    # the same list selects the rows to write: a DataFrame of the keys made from Python rows needs a Python worker
    # to turn them into the JVM's rows (starting one took ~1 s in the first small run after a full one)
    new_rows = source.where(F.expr(predicate) & (F.col("_op") != "d"))
    with session_conf(spark, _NO_CONSTRAINT_CHECK):
        new_rows.write.format("delta").mode("overwrite").option("replaceWhere", predicate).save(path)
    return written - replaced

"""The tables built from decoded change rows, as pure DataFrame -> DataFrame functions.

* :func:`latest_events`: the last state-changing event of every key: Kafka offset order within a partition (re-sent
  duplicates after a connector crash come later with the same content, so they are harmless), and across the
  partitions of a topic (a key whose records are spread over several, e.g. after the topic's partition count
  changed) the Debezium ``source`` position ``ts_ms``/``ord`` (MongoDB's oplog position) of each partition's
  last event; without a ``source`` block, partition then offset;
* :func:`materialized`: the latest-state table of one collection: document columns typed by
  :mod:`spark_jobs.schema` plus ``_key``, ``_op``, ``_source_ts``, ``_source_ord``, ``_topic``, ``_partition``,
  ``_offset`` and ``_raw`` (the document's Extended JSON); deletes and tombstones remove the row; across runs a
  change older (by source position) than the stored row does not replace or delete it (:func:`applies`);
* :func:`change_log`: one row per change event (tombstones are not events), partitioned by ``date``;
* :func:`rejects`: the records that could not be used, with the reason and their Kafka coordinates.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from spark_jobs import schema as schemas
from spark_jobs.columns import built

__all__ = ["META_COLUMNS", "applies", "change_log", "decides", "last_positions", "latest_events", "materialized",
           "merge_documents", "merge_tables", "rejects"]

META_COLUMNS = ("_key", "_op", "_source_ts", "_source_ord", "_topic", "_partition", "_offset", "_raw")


def usable(changes: DataFrame) -> DataFrame:
    return changes.where(built(("usable",), lambda: F.col("reason").isNull()))


def rejects(changes: DataFrame, batch: int) -> DataFrame:
    """The rejected records: coordinates, key, value text and reason."""
    return changes.where(F.col("reason").isNotNull()).select(
        "topic", "partition", "offset", "kafka_ts", "key", F.col("value_text").alias("value"), "reason",
        F.lit(batch).alias("batch"))


def change_log(changes: DataFrame) -> DataFrame:
    """One row per change event (``op`` c/u/d/r), with the source fields and a ``date`` to partition by."""
    events, columns = built(("change_log",), _change_log_columns)
    return changes.where(events).select(*columns)


def _change_log_columns() -> tuple[Column, list[Column]]:
    source_ts = F.timestamp_millis("source_ts_ms")
    return F.col("reason").isNull() & ~F.col("tombstone"), [
        F.col("topic"), F.col("key"), F.col("op"), F.timestamp_millis("ts_ms").alias("ts"),
        source_ts.alias("source_ts"), F.col("source_ord").alias("ord"), F.col("source_snapshot").alias("snapshot"),
        F.col("source_db").alias("db"), F.col("source_collection").alias("collection"),
        F.col("source_lsid").alias("lsid"), F.col("source_txn_number").alias("txn_number"),
        *(F.col(name) for name in ("before", "after", "updated_fields", "removed_fields", "partition", "offset",
                                   "kafka_ts")),
        F.to_date(F.coalesce(source_ts, F.timestamp_millis("ts_ms"), F.col("kafka_ts"))).alias("date")]


def latest_events(changes: DataFrame, broadcast: bool = False, one_partition: bool = False,
                  carried: bool = False) -> DataFrame:
    """Per (topic, key): the last event that decides the state: c/r, u with a full document, d or a tombstone.
    An update without ``after`` (``capture.mode=change_streams``, or a document deleted before the lookup)
    does not change the state.

    Which event is last: within one Kafka partition the highest offset (the connector writes a key's events in
    oplog order; a snapshot record or a re-sent duplicate is placed where it was written). Across partitions,
    which happens when a key's records are spread over several (the topic's partition count changed, or a
    custom partitioner), each partition's last event is placed by its ``source`` position: ``ts_ms`` then
    ``ord`` (MongoDB's oplog second/increment, the increment also ordering events of the same millisecond),
    then partition and offset. A tombstone has no ``source``: it carries the position of the partition's
    last event that has one (the delete it follows). Events without any ``source`` position (the flattened
    format without ``add.fields=source.ts_ms,source.ord``) lose to those with one and fall back to partition,
    then offset among themselves.

    The positions are found first (two hash aggregates of a few longs per record, per partition then per key:
    the documents are neither sorted nor shuffled), then the deciding rows are joined to them. With
    ``broadcast`` the positions (one small row per key) are broadcast, so the rows and their documents are never
    shuffled; without it Spark picks the join by its size estimate (a sort-merge join that shuffles the
    documents when the cached rows look large). ``one_partition``: the caller knows that ``changes`` hold at most
    one Kafka partition of each topic (see :func:`last_positions`). ``carried`` (with ``one_partition``, for a
    small batch): each key's last row is picked by the aggregate itself, its columns carried along it, instead of
    joined to the positions afterwards (see :func:`_carried_latest`)."""
    deciding = changes.where(built(("deciding",), lambda: F.col("reason").isNull() & decides()))
    if carried and one_partition:
        return _carried_latest(deciding)
    last = last_positions(deciding, one_partition)
    if broadcast:
        last = F.broadcast(last)
    # the chosen row takes the position that placed it (a tombstone its delete's), which later runs compare with
    # joined on the record's coordinates alone, which name one record: not hashing and comparing the keys'
    # strings again made full runs of 508,090 records 9.50 s against 9.63 s (medians of the last 6 of 7 rounds
    # alternating in one JVM, lower in 4 of 5 warm pairs; benchmarks/results.md 2026-11-30 23:12)
    return deciding.drop("source_ts_ms", "source_ord").join(last.drop("key"), on=["topic", "partition", "offset"]) \
        .select("topic", "key", "op", "tombstone", "after", "source_ts_ms", "source_ord", "partition", "offset",
                "connect_schema")


def _carried_latest(deciding: DataFrame) -> DataFrame:
    """:func:`latest_events` of rows holding at most one Kafka partition of each topic in one aggregate: per key,
    the columns of its highest offset's row (``max_by`` of a struct of them) and the source position as
    :func:`last_positions` finds it. No join to the positions after the aggregate and so no job of its own to
    broadcast them: the documents go through the aggregate's shuffle, which costs little for a small batch.
    Incremental runs of 5,082 records alternating in one JVM: see benchmarks/results.md 2026-12-01."""
    keys, aggregates, columns = built(("carried_latest",), _carried_columns)
    return deciding.groupBy(*keys).agg(*aggregates).select(*columns)


def _carried_columns() -> tuple[list[Column], list[Column], list[Column]]:
    positions, ord_chosen = _partition_positions()
    return [F.col("topic"), F.col("key"), F.col("partition")], [
        F.max_by(F.struct("op", "tombstone", "after", "connect_schema"), F.col("offset")).alias("row"),
        *positions], [
        F.col("topic"), F.col("key"), F.col("row.op"), F.col("row.tombstone"), F.col("row.after"),
        F.col("ts_ms").alias("source_ts_ms"), ord_chosen.alias("source_ord"), F.col("partition"), F.col("offset"),
        F.col("row.connect_schema")]


def _partition_positions() -> tuple[list[Column], Column]:
    """The aggregates, per Kafka partition of a key, of its last offset (``offset``) and of the source position of
    its last event that has one (``at``, ``ts_ms``, ``ord_at``; ``ord_max`` for none), and the ``ord`` chosen from
    their results (see :func:`last_positions`)."""
    at = F.when(F.col("source_ts_ms").isNotNull(), F.col("offset"))
    return [F.max("offset").alias("offset"), F.max(at).alias("at"), F.max_by("source_ts_ms", at).alias("ts_ms"),
            F.max_by("source_ord", at).alias("ord_at"), F.max("source_ord").alias("ord_max")], \
        F.when(F.col("at").isNotNull(), F.col("ord_at")).otherwise(F.col("ord_max"))


def decides() -> Column:
    """Whether a usable change row decides its key's state (see :func:`latest_events`)."""
    return built(("decides",), lambda: F.col("tombstone") | F.col("op").isin("c", "r", "d")
                 | ((F.col("op") == "u") & F.col("after").isNotNull()))


def last_positions(deciding: DataFrame, one_partition: bool = False) -> DataFrame:
    """``(topic, key, partition, offset)`` of the last deciding event of each key (see :func:`latest_events`), with
    its source position ``source_ts_ms``/``source_ord`` (a tombstone's: its delete's; null without any).
    ``one_partition``: the rows hold at most one Kafka partition of each topic, so the per-partition aggregate is
    already one row per key and the second one (across partitions, a shuffle of one row per key) is left out."""
    # Per partition: the last offset, and the source position of the last event that has one (the highest offset
    # among the rows with a ``ts_ms``; without any, no ``ts_ms`` and the highest ``ord``). Aggregates of longs
    # only (max, max_by), so Spark hashes them: a max of structs (offset, ts_ms, ord) made it sort the batch's
    # rows by their string keys first (a quarter of the latest events' samples, 508,090 records).
    positions, ord_chosen = _partition_positions()
    per_partition = deciding.groupBy("topic", "key", "partition").agg(*positions)
    if one_partition:
        return per_partition.select("topic", "key", "partition", "offset", F.col("ts_ms").alias("source_ts_ms"),
                                    ord_chosen.alias("source_ord"))
    across = per_partition.groupBy("key", "topic").agg(  # key first: the sort before it compares keys by prefix
        F.max(F.struct(F.col("ts_ms"), ord_chosen.alias("ord"), F.col("partition"), F.col("offset"))).alias("last"))
    return across.select("topic", "key", F.col("last.partition").alias("partition"),
                         F.col("last.offset").alias("offset"), F.col("last.ts_ms").alias("source_ts_ms"),
                         F.col("last.ord").alias("source_ord"))


def live_documents(latest: DataFrame) -> DataFrame:
    """Latest events that leave a document (not deletes/tombstones), with the normalized JSON to parse."""
    return latest.where(~F.col("tombstone") & (F.col("op") != "d")).withColumn(
        "_norm", schemas.normalize(F.col("after")))


def materialized(documents: DataFrame, parse_schema: StructType) -> DataFrame:
    """The table rows of ``documents`` (from :func:`live_documents`): typed document columns + metadata."""
    doc, columns = built(("materialized", parse_schema.json()), lambda: _materialized_columns(parse_schema))
    return documents.withColumn("_doc", doc).select(*columns)


def _materialized_columns(parse_schema: StructType) -> tuple[Column, list[Column]]:
    meta = [F.col("key").alias("_key"), F.col("op").alias("_op"),
            F.timestamp_millis("source_ts_ms").alias("_source_ts"), F.col("source_ord").alias("_source_ord"),
            F.col("topic").alias("_topic"),
            F.col("partition").alias("_partition"), F.col("offset").alias("_offset"), F.col("after").alias("_raw")]
    return (schemas.parse(F.col("_norm"), parse_schema),
            [*schemas.typed_columns(F.col("_doc"), parse_schema), *meta])


def merge_documents(latest: DataFrame) -> DataFrame:
    """Latest events in :func:`live_documents`' shape, deletes and tombstones included (``op = 'd'``, no
    document): after :func:`materialized`, the source of a ``MERGE INTO`` the latest-state table (one row per
    key the batch decided)."""
    return latest.select(*built(("merge_documents", tuple(latest.columns)),
                                lambda: _merge_document_columns(latest.columns)))


def _merge_document_columns(names: list[str]) -> list[Column]:
    """``names`` (the latest events' columns) with ``after`` and ``op`` of deletes changed, and ``_norm``."""
    deleted = F.col("tombstone") | (F.col("op") == "d")
    changed = {"after": F.when(~deleted, F.col("after")).alias("after"),
               "op": F.when(deleted, F.lit("d")).otherwise(F.col("op")).alias("op")}
    return [*(changed.get(name, F.col(name)) for name in names),
            F.when(~deleted, schemas.normalize(F.col("after"))).alias("_norm")]


def merge_tables(previous: DataFrame, latest: DataFrame, batch_rows: DataFrame) -> DataFrame:
    """``previous`` table rows without the keys the batch decided, plus the batch's rows (``batch_rows``); a
    stored row whose source position is newer than the batch's change of its key stays (see :func:`applies`)."""
    position = F.col("_source_ord") if "_source_ord" in previous.columns else F.lit(None).cast("bigint")
    stored = previous.withColumn("_source_ord", position)
    decided = latest.select(F.col("key").alias("_key"), F.lit(True).alias("_decided"),
                            F.timestamp_millis("source_ts_ms").alias("_d_ts"), F.col("source_ord").alias("_d_ord"))
    replaced = applies(F.col("_d_ts"), F.col("_d_ord"), F.col("_source_ts"), F.col("_source_ord"))
    kept = stored.join(decided, on="_key", how="left").where(F.col("_decided").isNull() | ~replaced) \
        .drop("_decided", "_d_ts", "_d_ord")
    positions = stored.select("_key", F.col("_source_ts").alias("_t_ts"), F.col("_source_ord").alias("_t_ord"))
    newer = batch_rows.join(positions, on="_key", how="left").where(
        applies(F.col("_source_ts"), F.col("_source_ord"), F.col("_t_ts"), F.col("_t_ord"))).drop("_t_ts", "_t_ord")
    return kept.unionByName(newer, allowMissingColumns=True)


def applies(change_ts: Column, change_ord: Column, stored_ts: Column, stored_ord: Column) -> Column:
    """Whether a change at source position (``change_ts``, ``change_ord``) replaces or deletes a stored row at
    (``stored_ts``, ``stored_ord``): unless the stored row is newer (a later run's change that the connector read
    earlier, e.g. from a partition that lagged, never undoes a newer state). Never null: without a position on
    either side the change applies, as the later run's; a missing ``ord`` compares by ``ts_ms`` alone."""
    return (stored_ts.isNull() | change_ts.isNull() | (change_ts > stored_ts)
            | ((change_ts == stored_ts) & (stored_ord.isNull() | change_ord.isNull() | (change_ord >= stored_ord))))


def as_documents(table: DataFrame) -> DataFrame:
    """Rows of a stored table back into :func:`live_documents`' shape (to re-type them with a wider schema)."""
    return table.select(
        F.col("_topic").alias("topic"), F.col("_key").alias("key"), F.col("_op").alias("op"),
        F.lit(False).alias("tombstone"), F.col("_raw").alias("after"),
        F.unix_millis("_source_ts").alias("source_ts_ms"),
        (F.col("_source_ord") if "_source_ord" in table.columns else F.lit(None).cast("bigint")).alias("source_ord"),
        F.col("_partition").alias("partition"),
        F.col("_offset").alias("offset"), F.lit(None).cast("string").alias("connect_schema"),
    ).withColumn("_norm", schemas.normalize(F.col("after")))

"""How a batch of a Delta output is named in the commits it makes, for exactly-once runs (see
:mod:`spark_jobs.delta_output`): its ``userMetadata`` (:func:`batch_marker`), looked for in a table's history by a
recovering run (:func:`committed`), and for a recovering batch Delta's idempotent transaction
(``txnAppId``/``txnVersion``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

from delta.tables import DeltaTable
from pyspark.sql import SparkSession

from spark_jobs.batch import session_conf
from spark_jobs.delta_batches import Plan

__all__ = ["MARKER", "TXN_APP", "TXN_VERSION", "USER_METADATA", "batch_marker", "batch_options", "committed",
           "marked_batch", "transaction"]

TXN_APP = "spark.databricks.delta.write.txnAppId"
TXN_VERSION = "spark.databricks.delta.write.txnVersion"
USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"
MARKER = "spark_jobs"  # the key of a batch's name in its commits' userMetadata
# A recovering batch looks for its commits among a table's last commits first, then (not found, and no earlier
# batch's commit met on the way) in the whole history
HISTORY_LOOKBACK = 16


def batch_marker(plan: Plan) -> str:
    """The ``userMetadata`` of the commits of ``plan``'s batch."""
    return json.dumps({MARKER: {"app": plan.app, "batch": plan.batch}}, sort_keys=True)


def marked_batch(user_metadata: str | None, app: str) -> int | None:
    """The batch of ``app`` a commit's ``userMetadata`` names (None: another writer's commit, or none)."""
    if not user_metadata or MARKER not in user_metadata:
        return None
    try:
        named = json.loads(user_metadata)[MARKER]
        return int(named["batch"]) if named["app"] == app else None
    except (ValueError, TypeError, KeyError):
        return None


def committed(spark: SparkSession, path: str, plan: Plan) -> bool:
    """Whether the Delta table at ``path`` has a commit of ``plan``'s batch (named in its ``userMetadata``, see
    :func:`batch_marker`). The newest commits are read first; the search stops at a commit of an earlier batch of
    the same output (a batch's commits come after its predecessor's, whose done marker its plan follows)."""
    if not DeltaTable.isDeltaTable(spark, path):
        return False
    table = DeltaTable.forPath(spark, path)
    for limit in (HISTORY_LOOKBACK, None):
        history = table.history(limit) if limit is not None else table.history()
        rows = history.select("userMetadata").collect()  # newest first
        for row in rows:
            batch = marked_batch(row[0], plan.app)
            if batch == plan.batch:
                return True
            if batch is not None and batch < plan.batch:
                return False
        if limit is None or len(rows) < limit:
            return False
    return False


@contextmanager
def transaction(spark: SparkSession, plan: Plan, *, recovering: bool) -> Iterator[None]:
    """Every Delta commit inside names ``plan``'s batch in its ``userMetadata`` (a session conf, which the
    DataFrame writes and MERGE both honour; the change logs' appends, on a thread of their own, give the same as
    write options, :func:`batch_options`). A ``recovering`` batch's writes are also Delta idempotent
    transactions for (``plan.app``, ``plan.batch``): a write an earlier version committed under that transaction
    is skipped by Delta. A new batch's are not: no table can hold it yet (its plan was written by this run, after
    the last done marker), and with a transaction Delta 4.0 reconstructs the table's state to check it at every
    write (a "Compute snapshot" job; it does not take the transactions from the ``.crc``)."""
    settings = {USER_METADATA: batch_marker(plan)}
    if recovering:
        settings.update({TXN_APP: plan.app, TXN_VERSION: str(plan.batch)})
    with session_conf(spark, settings):
        yield


def batch_options(plan: Plan, *, recovering: bool) -> dict[str, str]:
    """The write options that name ``plan``'s batch in a commit, as :func:`transaction` does for the session
    (a write option wins over the session's setting)."""
    named = {"userMetadata": batch_marker(plan)}
    if recovering:
        named.update({"txnAppId": plan.app, "txnVersion": str(plan.batch)})
    return named

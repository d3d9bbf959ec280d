"""The SparkSession of the jobs: under spark-submit the one it configured; otherwise a local one with Delta Lake's
session extension and the Kafka source and Delta jars (``spark.jars``, fetched by ``python -m stack.spark`` into
the cache; no network at run time)."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence

from pyspark.sql import SparkSession

__all__ = ["LOCAL_CONF", "quiet_py4j", "session"]

DEBUGGING = ("spark.python.sql.dataFrameDebugging.enabled", "false")
LOCAL_CONF = {
    "spark.driver.memory": "2g",
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "2",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.sql.session.timeZone": "UTC",
    # PySpark's DataFrame call sites for error messages off: with them on, every DataFrame and column function a run
    # calls asks the JVM for the active session, a conf and PySparkCurrentOrigin and sets and clears the call site
    # there. A warm incremental run of 5,082 records made 2,060 py4j calls instead of 5,440 and took 11.2 s of JVM
    # CPU instead of 12.7 (medians of 9 runs in 3 interleaved processes each way, lower in each pair of processes;
    # wall 8.2 s both, load 3-4.5; benchmarks/results.md 2026-11-29). PySpark reads the setting once per Python
    # process, when the first such function runs: it must be set before.
    DEBUGGING[0]: DEBUGGING[1],
    "spark.sql.parquet.compression.codec": "snappy",
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}


def kafka_jars() -> list[str]:
    """The Kafka source jars: ``$SPARK_JOBS_JARS`` (comma-separated) or the project's Maven cache."""
    listed = os.environ.get("SPARK_JOBS_JARS")
    if listed:
        return [jar for jar in listed.split(",") if jar]
    from stack.spark import kafka_jars as fetch  # the project checkout's Maven fetch (dev tool, not shipped)

    return fetch()


def quiet_py4j() -> None:
    """py4j's INFO lines left out (WARNING and above kept) unless its logger's level was set. They say that a
    connection to the JVM opened or closed, also from a connection's ``__del__`` at interpreter exit, when a
    handler's stream may be closed already (a "--- Logging error ---" trace after the run)."""
    logger = logging.getLogger("py4j")
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.WARNING)


def session(master: str | None = None, jars: Sequence[str] | None = None,
            conf: Mapping[str, str] | None = None) -> SparkSession:
    """The active session under spark-submit, else a new local one (``master`` default ``local[2]``)."""
    quiet_py4j()
    if master is None and "PYSPARK_GATEWAY_PORT" in os.environ:  # launched by spark-submit: use its settings
        active = SparkSession.builder.getOrCreate()
        if active.conf.get(DEBUGGING[0], None) is None:  # and the call sites off unless the user set them
            active.conf.set(*DEBUGGING)
        return active
    jar_list = list(jars) if jars is not None else kafka_jars()
    builder = SparkSession.builder.master(master or "local[2]").appName("spark-jobs")
    for key, value in {**LOCAL_CONF, **(conf or {})}.items():
        builder = builder.config(key, value)
    builder = builder.config("spark.jars", ",".join(jar_list))
    builder = builder.config("spark.driver.extraClassPath", os.pathsep.join(jar_list))  # for the Admin client
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    return session

"""The SparkSession of the jobs: under spark-submit the one it configured; otherwise a local one with Delta Lake's
session extension and the Kafka source and Delta jars (``spark.jars``, fetched by ``python -m stack.spark`` into
the cache; no network at run time)."""

from __future__ import annotations

import logging
import os
import re
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from pyspark import SparkContext
from pyspark.sql import SparkSession

from spark_jobs import cds
from spark_jobs.batch import CODEGEN_CACHE

__all__ = ["DRIVER_GC", "DRIVER_JIT", "DRIVER_METASPACE", "LOCAL_CONF", "LOCAL_FILES", "driver_options", "initial_heap",
           "local_files", "quiet_py4j", "session"]

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
    # Spark's Kafka source pools its consumers, each with the records of its last poll and the fetches it
    # buffered (up to 5,000 records and 8 MB a partition with spark_jobs.kafka_source's options), for 5 minutes
    # of idleness. Every DataFrame read from Kafka has a group id of its own, so no later read takes a pooled
    # consumer: in one session, runs in quick succession kept each run's consumers and their buffers. Full runs
    # of 513,172 records one after the other in one JVM: the live heap after each full collection grew ~80 MB a
    # run (after 4 runs 442 MB of byte arrays, 33,912 Kafka records held) and the 7th run failed with "GC
    # overhead limit exceeded"; with the pools evicting after 10 s, 8 runs, 90 MB of byte arrays after the last
    # (benchmarks/results.md 2026-11-30).
    "spark.kafka.consumer.cache.timeout": "10s",
    "spark.kafka.consumer.cache.evictorThreadRunInterval": "5s",
    "spark.kafka.consumer.fetchedData.cache.timeout": "10s",
    "spark.kafka.consumer.fetchedData.cache.evictorThreadRunInterval": "5s",
    "spark.sql.parquet.compression.codec": "snappy",
    # A batch's change logs and its latest-state tables are written by two threads at once
    # (spark_jobs.delta_output): fair scheduling between their pools lets each side's tasks take the core the
    # other leaves idle instead of queueing behind the jobs submitted first.
    "spark.scheduler.mode": "FAIR",
    "spark.scheduler.allocation.file": str(Path(__file__).with_name("fairscheduler.xml")),
    # The plan of each query as the SQL listener's event carries it (always built, a UI or not): the tree only,
    # not the formatted listing with every node's details (a warm incremental run's IN list of 5,082 keys
    # printed at each step). Incremental runs alternating in one JVM, medians of 6: JVM CPU 7.31 s against 7.90 s,
    # wall 5.21 against 5.43 s (benchmarks/results.md 2026-11-30 12:50).
    "spark.sql.ui.explainMode": "simple",
    # Spark's cache of generated classes large enough for a full batch's and a small one's (see
    # spark_jobs.batch.CODEGEN_CACHE)
    CODEGEN_CACHE[0]: CODEGEN_CACHE[1],
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}

# Hadoop's local file system without the child processes it starts for want of its native library (a chmod per
# file created, a readlink per commit file renamed: 54 in an incremental run of 5,082 records; see
# spark_jobs/java's spark_jobs.fs), when the session's jars have it and the user chose none (see local_files)
LOCAL_FILES = {"spark.hadoop.fs.file.impl": "spark_jobs.fs.LocalFiles",
               "spark.hadoop.fs.AbstractFileSystem.file.impl": "spark_jobs.fs.LocalFilesContext"}
_LOCAL_FILES_CLASS = "spark_jobs/fs/LocalFiles.class"

JAVA_OPTIONS = "spark.driver.extraJavaOptions"
# The driver JVM of a session this module starts runs the parallel garbage collector instead of G1 (the default).
# In the benchmark's order (the floor's parse, a full run of 508,090 records, then an incremental run of 5,082 in
# the same JVM), one process each, 4 interleaved pairs on a loaded machine: the incremental run 7.6-10.8 s against
# 9.9-17.1 s, its JVM CPU 14.2-16.5 s against 16.3-17.4 s, the full run's JVM CPU 43.1-47.1 s against 43.9-54.0 s:
# lower in 4 of 4 pairs each (the full run's wall in 3 of 4; benchmarks/results.md 2026-11-29)
DRIVER_GC = "-XX:+UseParallelGC"
# ... and its C2 compiler takes a method only after 20 times the calls and loop iterations of the JVM's defaults. A
# run's hot loops (the JSON parse, Parquet's encoders, the aggregates) pass those counts within the first thousands
# of records and are still compiled by C2; the planner's, Delta's and the log replay's lukewarm code, which C2
# compiled at length in every run (3-4.6 s of C2 CPU in each warm incremental run of 5,082 records, 13-15 s in a full
# run of 508,090), stays C1's. One process per variant, interleaved: a full run in a new JVM 53.7, 51.6 s of JVM CPU
# against 41.4, 42.0 s (wall 30.3, 28.9 against 26.0, 26.3 s), the incremental run after it 13.1, 12.5 against 10.2,
# 10.3 s, the next one 7.4, 6.5 against 5.6, 5.5 s (benchmarks/results.md 2026-11-30). C1 takes a method after a
# quarter of the JVM's default calls and loop iterations: the lukewarm code that C2 leaves to it runs in the
# interpreter for fewer runs before C1 compiles it. Full runs of 513,172 records, three in each new JVM, then
# incremental runs, JVMs alternating (5 each way): the second full run 22.6 s against 24.0 s on average (lower in 4
# of 5 pairs), the third 19.5 s against 20.8 s (lower in 5 of 5; JVM CPU 34.9 against 36.7 s); the JVM's first full
# run and the incremental runs after them within their spread (benchmarks/results.md 2026-12-02 04:45).
DRIVER_JIT = ("-XX:Tier3InvocationThreshold=50 -XX:Tier3MinInvocationThreshold=25 -XX:Tier3CompileThreshold=500 "
              "-XX:Tier3BackEdgeThreshold=15000 "
              "-XX:Tier4InvocationThreshold=100000 -XX:Tier4MinInvocationThreshold=40000 "
              "-XX:Tier4CompileThreshold=120000 -XX:Tier4BackEdgeThreshold=1000000")
# ... and its heap starts at its maximum (``-Xms`` = ``spark.driver.memory``), with class metadata allowed to grow to
# 256 MB before it triggers a collection: the parallel collector grew and shrank a heap started small as a full
# run's cache filled it (about two full collections a run, "Ergonomics"), and Spark's and Delta's classes took
# eight collections to load. Full runs of 508,090 records, 4 per JVM, JVMs alternating (2 each way): the
# collector's threads 2.4-3.0 s of CPU in runs 2-4 against 4.1-5.0 s (lower in 6 of 6), the runs' JVM CPU 35.7 s
# against 38.4 s on average (benchmarks/results.md 2026-12-02 01:36)
DRIVER_METASPACE = "-XX:MetaspaceSize=256m"
_GC_FLAG = re.compile(r"-XX:[+-]Use\w*GC\b")
_MEMORY = re.compile(r"(\d+)\s*([kmgt]?)b?", re.IGNORECASE)
_JIT_CHOICE = "-XX:TieredStopAtLevel=1"  # what spark_jobs.jit may put in the conf: the job's, not the user's


def driver_options(conf: Mapping[str, str], memory: str | None = None) -> str | None:
    """:data:`DRIVER_GC`, :data:`DRIVER_JIT` and :data:`DRIVER_METASPACE`, and an initial heap of ``memory`` (the
    ``spark.driver.memory`` the JVM is started with, see :func:`initial_heap`), for a driver JVM started with
    ``conf``, unless the user chose driver JVM options (in ``conf``, ``PYSPARK_SUBMIT_ARGS`` or
    ``spark-defaults.conf``, or JIT flags in ``JAVA_TOOL_OPTIONS``/``JDK_JAVA_OPTIONS``/``_JAVA_OPTIONS``: theirs
    are kept as they are) or a collector in one of those three (two collectors stop the JVM from starting)."""
    from spark_jobs.jit import user_java_options

    if conf.get(JAVA_OPTIONS, _JIT_CHOICE) != _JIT_CHOICE:
        return None
    if user_java_options({}) is not None:
        return None
    if any(_GC_FLAG.search(os.environ.get(name, "")) for name in ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS",
                                                                  "_JAVA_OPTIONS")):
        return None
    heap = initial_heap(memory)
    return " ".join(o for o in (DRIVER_GC, DRIVER_JIT, DRIVER_METASPACE, heap) if o)


def initial_heap(memory: str | None) -> str | None:
    """``-Xms`` for a driver whose maximum heap is ``memory`` (Spark's notation: a number of MiB, or one with a
    ``k``/``m``/``g``/``t`` unit), or None: for no or an unreadable value, and when ``PYSPARK_SUBMIT_ARGS`` sets
    the driver's memory itself (``--driver-memory`` wins over the session's setting: a larger ``-Xms`` than the
    heap's maximum stops the JVM from starting)."""
    found = _MEMORY.fullmatch((memory or "").strip())
    submit = os.environ.get("PYSPARK_SUBMIT_ARGS", "")
    if found is None or "--driver-memory" in submit or "spark.driver.memory" in submit:
        return None
    number, unit = int(found[1]), (found[2] or "m").lower()
    if unit == "t":
        number, unit = number * 1024, "g"
    return f"-Xms{number}{unit}" if number > 0 else None


def job_jars() -> list[str]:
    """The Kafka source, Delta and spark_jobs' JVM functions jars: ``$SPARK_JOBS_JARS`` (comma-separated) or the
    project's cache (fetched with Maven, compiled with javac)."""
    listed = os.environ.get("SPARK_JOBS_JARS")
    if listed:
        return [jar for jar in listed.split(",") if jar]
    from stack.spark import job_jars as fetch  # the project checkout's Maven fetch (dev tool, not shipped)

    return fetch()


def local_files(jars: Sequence[str], conf: Mapping[str, str]) -> dict[str, str]:
    """:data:`LOCAL_FILES` for a session of ``jars`` and ``conf``: nothing when no jar holds the classes, or when
    the user chose a local file system (in ``conf``, ``PYSPARK_SUBMIT_ARGS``, ``spark-defaults.conf`` or
    ``$HADOOP_CONF_DIR/core-site.xml``): theirs is kept."""
    if not any(_has_class(jar, _LOCAL_FILES_CLASS) for jar in jars):
        return {}
    keys = [key.removeprefix("spark.hadoop.") for key in LOCAL_FILES]
    from spark_jobs.jit import conf_dirs

    files = [folder / "spark-defaults.conf" for folder in conf_dirs()]
    if os.environ.get("HADOOP_CONF_DIR"):
        files.append(Path(os.environ["HADOOP_CONF_DIR"]) / "core-site.xml")
    texts = [os.environ.get("PYSPARK_SUBMIT_ARGS", ""), *conf, *(_text(path) for path in files)]
    if any(key in text for key in keys for text in texts):
        logging.getLogger(__name__).info("the local file system chosen by the user kept (%s)", " / ".join(keys))
        return {}
    return LOCAL_FILES


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


def _has_class(jar: str, entry: str) -> bool:
    """Whether the jar at ``jar`` holds ``entry`` (a class file's path); False for a jar that cannot be read."""
    try:
        with zipfile.ZipFile(jar) as archive:
            archive.getinfo(entry)
    except (OSError, KeyError, zipfile.BadZipFile):
        return False
    return True


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
    jar_list = list(jars) if jars is not None else job_jars()
    builder = SparkSession.builder.master(master or "local[2]").appName("spark-jobs")
    settings = {**LOCAL_CONF, **local_files(jar_list, conf or {}), **(conf or {})}
    chosen = driver_options(conf or {}, settings.get("spark.driver.memory"))
    archive = None
    if chosen is not None:
        # and the classes from the class data sharing archive of the JVM and class path (spark_jobs.cds)
        archive = cds.plan(jar_list, settings) if SparkContext._gateway is None else None
        options = (chosen, archive.java_options if archive is not None else None, settings.get(JAVA_OPTIONS))
        settings[JAVA_OPTIONS] = " ".join(o for o in options if o)
    for key, value in settings.items():
        builder = builder.config(key, value)
    builder = builder.config("spark.jars", ",".join(jar_list))
    builder = builder.config("spark.driver.extraClassPath", os.pathsep.join(jar_list))  # for the Admin client
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    if archive is not None:
        cds.promote_at_exit(archive, getattr(SparkContext._gateway, "proc", None))
    return session

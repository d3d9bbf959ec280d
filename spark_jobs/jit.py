"""The driver JVM's JIT compiler, chosen by the size of the run before the JVM starts.

A small incremental run spends most of its CPU compiling: in a fresh JVM the C2 compiler threads took 14 of an
incremental run's 28 s of CPU, and with ``-XX:TieredStopAtLevel=1`` (the C1 compiler only) the run takes about
45 % less CPU; a large run's tasks, though, run slower without C2 (a full run +17 %; benchmarks/results.md,
2026-11-28). When ``python -m spark_jobs.materialize`` starts its own JVM, :func:`launch_conf` counts the records
the run will read (the topics' end offsets from Kafka against the offsets the output has committed, with
kafka-python: no JVM yet) and, for at most :data:`SMALL_RUN_RECORDS`, starts the driver with C1 only.

Nothing is chosen when the JVM already runs (under spark-submit, or an earlier session in the same process): its
options were fixed by whoever launched it; nor when the user set JVM options of their own for the driver
(``spark.driver.extraJavaOptions`` in the session conf, ``PYSPARK_SUBMIT_ARGS`` or ``spark-defaults.conf``, or a
JIT flag in ``JAVA_TOOL_OPTIONS``/``JDK_JAVA_OPTIONS``/``_JAVA_OPTIONS``): theirs are kept as they are; nor when
the count is not known (an output that is not a local path, a broker that does not answer within seconds); nor for
runs at an interval (``--interval``: the process lives on, its later runs need C2).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import unquote, urlparse

from kafka import KafkaConsumer, TopicPartition

from connect.kafka_clients.settings import security_kwargs
from spark_jobs.batch import SMALL_BATCH_RECORDS, MaterializeOptions
from spark_jobs.delta_batches import Done
from spark_jobs.kafka_source import client_properties
from spark_jobs.store import STATE_FILE, State

__all__ = ["C1_ONLY", "JAVA_OPTIONS", "SMALL_RUN_RECORDS", "choose", "conf_dirs", "launch_conf", "pending_records",
           "user_java_options"]

log = logging.getLogger(__name__)

JAVA_OPTIONS = "spark.driver.extraJavaOptions"
C1_ONLY = "-XX:TieredStopAtLevel=1"
# A run that reads at most this many records is a small one (the same bound as a batch run without code
# generation, spark_jobs.batch.SMALL_BATCH_RECORDS)
SMALL_RUN_RECORDS = SMALL_BATCH_RECORDS
KAFKA_TIMEOUT_MS = 5_000
_JIT_FLAGS = re.compile(r"Tiered|-XX:Tier\d|-Xint\b|-Xcomp\b|CompileThreshold|-XX:[+-]?UseJVMCICompiler")


def launch_conf(options: MaterializeOptions, conf: Mapping[str, str] | None = None) -> dict[str, str]:
    """The session conf to add for this run when the job starts its own JVM: ``{JAVA_OPTIONS: C1_ONLY}`` for a
    small run, else nothing (see the module's text)."""
    from pyspark import SparkContext

    if "PYSPARK_GATEWAY_PORT" in os.environ or SparkContext._gateway is not None:
        log.debug("the driver JVM already runs (spark-submit or an earlier session): its JIT options stay as its "
                  "launcher set them")
        return {}
    return choose(options, conf)


def choose(options: MaterializeOptions, conf: Mapping[str, str] | None = None,
           small: int = SMALL_RUN_RECORDS) -> dict[str, str]:
    """The decision of :func:`launch_conf` for a JVM not started yet: C1 only for at most ``small`` records."""
    user = user_java_options(conf)
    if user is not None:
        log.debug("driver JVM options of the user kept (%s)", user)
        return {}
    pending = pending_records(options)
    if pending is None:
        return {}
    if pending > small:
        log.info("driver JVM: the default JIT compilers (%d records to read)", pending)
        return {}
    log.info("driver JVM: %s, the C1 JIT compiler only (%d records to read, at most %d)", C1_ONLY, pending, small)
    return {JAVA_OPTIONS: C1_ONLY}


def user_java_options(conf: Mapping[str, str] | None = None) -> str | None:
    """Where the user set JVM options of the driver's own (None: nowhere)."""
    if conf and conf.get(JAVA_OPTIONS):
        return f"{JAVA_OPTIONS} in the session conf"
    submit = os.environ.get("PYSPARK_SUBMIT_ARGS", "")
    if JAVA_OPTIONS in submit or "--driver-java-options" in submit:
        return "PYSPARK_SUBMIT_ARGS"
    for name in ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS"):
        if _JIT_FLAGS.search(os.environ.get(name, "")):
            return name
    for folder in conf_dirs():
        defaults = folder / "spark-defaults.conf"
        try:
            text = defaults.read_text(encoding="utf-8")
        except OSError:
            continue
        if any(line.split(None, 1)[0] == JAVA_OPTIONS for line in text.splitlines()
               if line.strip() and not line.lstrip().startswith("#")):
            return str(defaults)
    return None


def conf_dirs() -> list[Path]:
    """Where spark-submit reads ``spark-defaults.conf``: ``$SPARK_CONF_DIR``, else ``$SPARK_HOME/conf`` (pyspark's
    own installation when unset)."""
    if os.environ.get("SPARK_CONF_DIR"):
        return [Path(os.environ["SPARK_CONF_DIR"])]
    if os.environ.get("SPARK_HOME"):
        return [Path(os.environ["SPARK_HOME"]) / "conf"]
    import pyspark

    return [Path(pyspark.__file__).parent / "conf"]


def pending_records(options: MaterializeOptions) -> int | None:
    """How many records the run will read: the topics' end offsets less the committed ones of the output (a
    batch a killed run left is read again from those too); None when not known."""
    stored = _stored_offsets(options)
    if stored is None:
        log.debug("stored offsets of %s not known without the JVM (not a local path)", options.output)
        return None
    # a best effort: its connection errors and the settings kafka-python does not apply are not the run's (the
    # JVM's client, which reads the records, reports them)
    with _quiet(logging.getLogger("kafka")), _quiet(logging.getLogger("connect.kafka_clients")):
        return _count(options, stored)


def _count(options: MaterializeOptions, stored: dict[str, dict[str, int]]) -> int | None:
    try:
        # the run's security settings (security.protocol, sasl.*, ssl.*) as kafka-python takes them
        security = security_kwargs(client_properties(options.kafka_options))
        consumer = KafkaConsumer(bootstrap_servers=options.bootstrap_servers, group_id=None,
                                 enable_auto_commit=False, client_id="spark-jobs-jit",
                                 request_timeout_ms=KAFKA_TIMEOUT_MS + 1_000,
                                 bootstrap_timeout_ms=KAFKA_TIMEOUT_MS, **security)
    except Exception as exc:  # noqa: BLE001 - unreachable broker, bad settings: the JVM's client reports them
        log.debug("records to read not counted: %s", exc)
        return None
    try:
        names = sorted(consumer.topics())
        if options.pattern:
            regex = re.compile(options.pattern)
            names = [t for t in names if regex.fullmatch(t)]
        else:
            names = sorted(set(options.topics) & set(names))
        partitions = [TopicPartition(t, p) for t in names for p in sorted(consumer.partitions_for_topic(t) or ())]
        if not partitions:
            return None
        earliest = consumer.beginning_offsets(partitions, timeout_ms=KAFKA_TIMEOUT_MS)
        latest = consumer.end_offsets(partitions, timeout_ms=KAFKA_TIMEOUT_MS)
    except Exception as exc:  # noqa: BLE001 - a timeout or a refused request: no choice made
        log.debug("records to read not counted: %s", exc)
        return None
    finally:
        consumer.close()
    return sum(max(0, int(latest[tp]) - max(int(stored.get(tp.topic, {}).get(str(tp.partition), 0)),
                                            int(earliest[tp]))) for tp in partitions)


@contextmanager
def _quiet(logger: logging.Logger) -> Iterator[None]:
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


def _stored_offsets(options: MaterializeOptions) -> dict[str, dict[str, int]] | None:
    """The committed offsets of a local output (``{}`` for a new one), None for other file systems."""
    root = _local_path(options.output)
    if root is None:
        return None
    if options.table_format == "parquet":
        state = root / STATE_FILE
        return dict(State.from_json(state.read_text(encoding="utf-8")).offsets) if state.is_file() else {}
    folder = root / "_batches"
    done = sorted(p for p in folder.glob("*.done.json") if p.name.split(".")[0].isdigit()) \
        if folder.is_dir() else []
    if not done:
        return {}
    latest = max(done, key=lambda p: int(p.name.split(".")[0]))
    return dict(Done.from_json(latest.read_text(encoding="utf-8")).offsets)


def _local_path(output: str) -> Path | None:
    if "://" not in output and not output.startswith("file:"):
        return Path(output)
    parsed = urlparse(output)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" and parsed.netloc in ("", "localhost") else None

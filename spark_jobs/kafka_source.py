"""Which topics and offsets a run reads, and the read itself (Spark's ``kafka`` batch source).

Topics and their earliest/latest offsets come from Kafka's Admin client on the driver (the ``kafka-clients`` jar
Spark's Kafka source brings), with bounded timeouts: an unreachable broker or a missing topic fails at once with
one clear message instead of a hung query. The read is then fixed to explicit ``assign``/``startingOffsets``/
``endingOffsets`` so every action of a run sees the same records and the end offsets can be stored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from spark_jobs.jvm_classes import java_class

__all__ = ["READ_OPTIONS", "KafkaRange", "SparkJobError", "check_kafka_options", "client_properties", "offset_ranges",
           "read_range"]

ADMIN_TIMEOUT_S = 15
# The read's consumers ask the broker to hold a fetch that finds no new records for 10 ms, not the consumer's
# default 500 ms: a run reads up to the log's end, where the consumer's next fetch (sent ahead while the records
# before it are handed out) finds nothing and is held, and the task's last poll waits for it. Reading and decoding
# the last 5,082 records of a topic (an incremental run's batch, warm JVM) took 0.82 s instead of 1.21 s (medians
# of 6 interleaved pairs; benchmarks/results.md 2026-11-29). The records a run reads are all there already: a
# shorter wait loses nothing.
# They also fetch up to 8 MB of a partition at a time (the consumer's default is 1 MB) and hand out up to 5,000
# records a poll (default 500): Spark's Kafka source asks the broker for the partition's earliest and latest
# offsets after every poll (two round trips), and a poll of 1 MB held ~290 of the benchmark's 3.6 KB records.
# Reading the benchmark's 513,172 records (each value cast to a string and summed, one JVM, 5 rotating rounds):
# 6.07 s against 7.19 s, 10.3 s of JVM CPU against 10.9 s (medians of the last 4; 4 MB and 2,000 records: 6.04 s;
# 8 MB and 500 records: 6.37 s; benchmarks/results.md 2026-11-30). A task holds one partition's fetch at a time.
# ``kafka_options`` may set any of them otherwise.
READ_OPTIONS = {"kafka.fetch.max.wait.ms": "10", "kafka.max.partition.fetch.bytes": str(8 << 20),
                "kafka.max.poll.records": "5000"}


# Options of Spark's Kafka source a run sets itself (which records it reads, from where) or that Spark refuses for a
# batch read (KafkaSourceProvider's checks): given by the user they are an error, not ignored nor half applied
_RUN_OPTIONS = ("assign", "subscribe", "subscribepattern", "startingoffsets", "endingoffsets",
                "startingoffsetsbytimestamp", "endingoffsetsbytimestamp", "startingtimestamp", "endingtimestamp",
                "startingoffsetsbytimestampstrategy", "kafka.bootstrap.servers")
_REFUSED_CLIENT = ("kafka.auto.offset.reset", "kafka.key.deserializer", "kafka.value.deserializer",
                   "kafka.enable.auto.commit", "kafka.interceptor.classes")


class SparkJobError(RuntimeError):
    """A Spark job cannot run (bad arguments, unreachable broker, missing topic, ...); the message says why.
    ``retriable``: the same run may succeed later unchanged (a broker that did not answer)."""

    def __init__(self, message: str, *, retriable: bool = False) -> None:
        super().__init__(message)
        self.retriable = retriable


def check_kafka_options(options: Mapping[str, str]) -> None:
    """Refuse the options of Spark's Kafka source a run cannot honour, naming them."""
    for key in options:
        if key.lower() in _RUN_OPTIONS:
            raise SparkJobError(f"Kafka option {key!r} is set by the run itself (the bootstrap servers and the "
                                "topics are arguments; the offsets come from the output's checkpoint)")
        if key.lower() in _REFUSED_CLIENT:
            raise SparkJobError(f"Kafka option {key!r} is not supported by Spark's Kafka source (it manages "
                                "deserialization and offsets itself)")


def client_properties(options: Mapping[str, str]) -> dict[str, str]:
    """The Kafka client properties among the options of Spark's Kafka source (``kafka.``-prefixed keys, e.g.
    ``kafka.security.protocol``), without the prefix: what the run's Admin client needs too (security, TLS, SASL)."""
    return {key[len("kafka."):]: value for key, value in options.items()
            if key.startswith("kafka.") and key != "kafka.bootstrap.servers"}


@dataclass(frozen=True)
class KafkaRange:
    """The offsets ``[start, end)`` of one topic partition a run reads."""

    topic: str
    partition: int
    start: int
    end: int


class _Admin:
    """Kafka's Admin client on the driver, with the run's client properties (the user's timeouts and client id
    when given), and each call's wait bounded by the API timeout in effect."""

    def __init__(self, spark: SparkSession, bootstrap: str, client: Mapping[str, str]) -> None:
        self.spark, self.bootstrap = spark, bootstrap
        settings = {"request.timeout.ms": str(ADMIN_TIMEOUT_S * 1000),
                    "default.api.timeout.ms": str(ADMIN_TIMEOUT_S * 1000), "client.id": "spark-jobs-offsets",
                    **client, "bootstrap.servers": bootstrap}
        try:
            api_timeout_ms = int(settings["default.api.timeout.ms"])
        except ValueError:
            raise SparkJobError("Kafka option 'kafka.default.api.timeout.ms' must be a number of milliseconds, not "
                                f"{settings['default.api.timeout.ms']!r}") from None
        if "request.timeout.ms" not in client:  # Kafka refuses an API timeout below the request timeout
            settings["request.timeout.ms"] = str(min(ADMIN_TIMEOUT_S * 1000, api_timeout_ms))
        self.timeout_s = max(1, -(-api_timeout_ms // 1000))
        props = java_class(spark, "java.util.Properties")()
        for key, value in settings.items():
            props.put(key, value)
        try:
            self.admin = java_class(spark, "org.apache.kafka.clients.admin.Admin").create(props)
        except Exception as exc:  # noqa: BLE001 - a bad client property (e.g. an unknown protocol) fails here
            raise SparkJobError(f"Kafka client settings refused: {_first_line(str(exc))}") from None

    def get(self, future: Any, what: str) -> Any:
        bootstrap = self.bootstrap
        try:
            return future.get(self.timeout_s, java_class(self.spark, "java.util.concurrent.TimeUnit").SECONDS)
        except Exception as exc:  # noqa: BLE001 - py4j wraps every Java exception; turned into one message
            text = str(exc)
            if "Timed out waiting for a node" in text or "TimeoutException" in text:
                raise SparkJobError(f"Kafka broker {bootstrap} unreachable: no answer to {what} within "
                                    f"{self.timeout_s} s", retriable=True) from None
            raise SparkJobError(f"Kafka {what} failed on {bootstrap}: {_first_line(text)}") from None

    def close(self) -> None:
        self.admin.close()


def _first_line(text: str) -> str:
    """The first line of a Java exception's text that names an exception (py4j adds its own lines around it), and
    its root cause's when it has one (``Failed to create new KafkaAdminClient`` says why only there)."""
    lines = text.splitlines() or [""]
    first = next((line for line in lines if "Exception:" in line), lines[0]).strip().lstrip(": ")
    causes = [line.strip()[len("Caused by: "):] for line in lines if line.strip().startswith("Caused by: ")]
    return f"{first} (caused by {causes[-1]})" if causes else first


def offset_ranges(spark: SparkSession, bootstrap: str, *, topics: Sequence[str] = (), pattern: str | None = None,
                  start: Mapping[str, Mapping[str, int]] | None = None,
                  options: Mapping[str, str] | None = None) -> list[KafkaRange]:
    """The partitions of ``topics`` (or of every topic matching ``pattern``) with the offsets to read: from
    ``start[topic][partition]`` (the checkpoint; earliest when absent) to the latest offset now. ``options``: the
    run's options of Spark's Kafka source, whose Kafka client properties (security, TLS, SASL;
    :func:`client_properties`) the Admin client takes too."""
    if bool(topics) == bool(pattern):
        raise SparkJobError("give either topics or a topics pattern")
    admin = _Admin(spark, bootstrap, client_properties(options or {}))
    try:
        # joined into one string on the JVM: iterating a Java collection from Python ends with a
        # NoSuchElementException that PySpark classifies with 13 ``instanceof`` checks, ~65 round trips
        listed = admin.get(admin.admin.listTopics().names(), "topic listing")
        existing = {name for name in str(java_class(spark, "java.lang.String").join("\n", listed)).split("\n") if name}
        if pattern:
            regex = re.compile(pattern)
            names = sorted(t for t in existing if regex.fullmatch(t))
            if not names:
                raise SparkJobError(f"no topic on {bootstrap} matches the pattern {pattern!r}")
        else:
            missing = sorted(set(topics) - existing)
            if missing:
                raise SparkJobError(f"topic(s) {', '.join(missing)} do not exist on {bootstrap}")
            names = sorted(set(topics))
        described = admin.get(admin.admin.describeTopics(names).allTopicNames(), "topic description")
        partitions = [(name, int(infos.get(i).partition())) for name in names
                      for infos in [described.get(name).partitions()] for i in range(infos.size())]
        spec = java_class(spark, "org.apache.kafka.clients.admin.OffsetSpec")
        earliest = _offsets(spark, admin, partitions, spec.earliest())
        latest = _offsets(spark, admin, partitions, spec.latest())
    finally:
        admin.close()
    checkpoint = start or {}
    ranges = []
    for topic, partition in partitions:
        begin = max(int(checkpoint.get(topic, {}).get(str(partition), 0)), earliest[(topic, partition)])
        ranges.append(KafkaRange(topic, partition, begin, latest[(topic, partition)]))
    return ranges


def _offsets(spark: SparkSession, admin: _Admin, partitions: list[tuple[str, int]],
             spec: Any) -> dict[tuple[str, int], int]:
    request = java_class(spark, "java.util.HashMap")()
    partition_class = java_class(spark, "org.apache.kafka.common.TopicPartition")
    asked: dict[tuple[str, int], Any] = {}
    for topic, partition in partitions:
        asked[(topic, partition)] = partition_class(topic, partition)
        request.put(asked[(topic, partition)], spec)
    result = admin.get(admin.admin.listOffsets(request).all(), "offset listing")
    # looked up by the partitions asked for, not iterated (see offset_ranges)
    return {key: int(result.get(tp).offset()) for key, tp in asked.items()}


def read_range(spark: SparkSession, bootstrap: str, ranges: Sequence[KafkaRange],
               min_partitions: int | None = None, options: Mapping[str, str] | None = None) -> DataFrame:
    """The records of ``ranges`` (only the non-empty ones) as Spark's Kafka source gives them, in at least
    ``min_partitions`` Spark partitions (default: Spark's default parallelism)."""
    wanted = [r for r in ranges if r.end > r.start]
    assign: dict[str, list[int]] = {}
    starting: dict[str, dict[str, int]] = {}
    ending: dict[str, dict[str, int]] = {}
    for r in wanted:
        assign.setdefault(r.topic, []).append(r.partition)
        starting.setdefault(r.topic, {})[str(r.partition)] = r.start
        ending.setdefault(r.topic, {})[str(r.partition)] = r.end
    reader = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
              .option("assign", json.dumps(assign)).option("startingOffsets", json.dumps(starting))
              .option("endingOffsets", json.dumps(ending)))
    # by default as many tasks as cores, even for a topic with fewer partitions than that
    reader = reader.option("minPartitions", str(min_partitions or spark.sparkContext.defaultParallelism))
    for key, value in {**READ_OPTIONS, **(options or {})}.items():
        reader = reader.option(key, value)
    return reader.load()

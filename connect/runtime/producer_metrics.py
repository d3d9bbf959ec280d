"""A source task's producer metrics, named as Strimzi's Prometheus JMX exporter rules name the Java producer's
``producer-metrics``, ``producer-topic-metrics`` and ``producer-node-metrics`` MBeans
(``kafka_producer_*{clientid}``, ``kafka_producer_topic_*{clientid,topic}``, ``kafka_producer_node_*{clientid,
nodeid}``): from librdkafka's statistics (the default producer) where a statistic means the same as the Java
attribute, and from kafka-python's own metrics (``producer.client.library=kafka-python``), which carry the Java
producer's names and are exported through the same rules (:func:`java_client_samples`).

librdkafka emits its statistics as a JSON document every ``statistics.interval.ms`` (set from the Java producer's
``metrics.sample.window.ms``, 30 s by default: the window of its averages, as Java's sample window). The callback
only keeps the document's text (no parsing on the producer's thread); a scrape parses the last one and, for rates,
the one before it. Java attributes librdkafka keeps no statistic for (``record-error-total``,
``record-retry-total``, ``compression-rate``, ``records-per-request-avg``, ...) have no sample; Strimzi's rules
export no ``producer-metrics`` rate or ``-max`` attribute, so neither do we.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Mapping
from typing import Any

from connect.api.metrics import Metric

_MS_PER_US = 1 / 1000


class ProducerStatistics:
    """The last two statistics documents of one librdkafka producer (``stats_cb``)."""

    def __init__(self, client_id: str) -> None:
        self.client_id = client_id
        self._last: str | None = None
        self._previous: str | None = None

    def record(self, document: str) -> None:
        """librdkafka's ``stats_cb``: two reference assignments, on the thread serving the producer's callbacks."""
        self._previous, self._last = self._last, document

    def samples(self) -> list[Metric]:
        last, previous = self._last, self._previous
        if last is None:
            return []
        try:
            now: dict[str, Any] = json.loads(last)
            before: dict[str, Any] | None = json.loads(previous) if previous else None
        except ValueError:
            return []
        return list(_samples(self.client_id, now, before))


def _weighted(windows: Iterable[Mapping[str, Any]]) -> float:
    """The average of librdkafka window statistics (``avg`` weighted by ``cnt``); NaN without a value, as Java."""
    total = count = 0.0
    for window in windows:
        n = float(window.get("cnt") or 0)
        total += float(window.get("avg") or 0) * n
        count += n
    return total / count if count else float("nan")


def _rate(now: Mapping[str, Any], before: Mapping[str, Any] | None, value: float, previous: float | None) -> float:
    """Per second between two documents (their ``ts`` is librdkafka's monotonic clock, in µs)."""
    if before is None or previous is None:
        return 0.0
    seconds = (float(now.get("ts", 0)) - float(before.get("ts", 0))) / 1e6
    return max(value - previous, 0.0) / seconds if seconds > 0 else 0.0


def _samples(client_id: str, now: Mapping[str, Any], before: Mapping[str, Any] | None) -> Iterable[Metric]:
    client = {"clientid": client_id}
    brokers = [b for b in (now.get("brokers") or {}).values() if int(b.get("nodeid", -1)) >= 0]

    def metric(name: str, value: float, labels: Mapping[str, str], help: str) -> Metric:
        return Metric(name, value, labels, "counter" if name.endswith("_total") else "gauge", help)

    p = "kafka_producer_"
    size_max, size = float(now.get("msg_size_max", 0)), float(now.get("msg_size", 0))
    yield metric(p + "record_send_total", now.get("txmsgs", 0), client, "Records sent to the brokers.")
    yield metric(p + "request_total", now.get("tx", 0), client, "Requests sent to the brokers.")
    yield metric(p + "response_total", now.get("rx", 0), client, "Responses received from the brokers.")
    yield metric(p + "outgoing_byte_total", now.get("tx_bytes", 0), client, "Bytes sent to the brokers.")
    yield metric(p + "incoming_byte_total", now.get("rx_bytes", 0), client, "Bytes received from the brokers.")
    yield metric(p + "request_latency_avg", _weighted(b.get("rtt") or {} for b in brokers) * _MS_PER_US, client,
                 "Average request round-trip time in ms, over the statistics window.")
    yield metric(p + "record_queue_time_avg", _weighted(b.get("int_latency") or {} for b in brokers) * _MS_PER_US,
                 client, "Average time in ms a record waited in the producer's queue, over the statistics window.")
    yield metric(p + "produce_throttle_time_avg", _weighted(b.get("throttle") or {} for b in brokers), client,
                 "Average time in ms the brokers throttled requests, over the statistics window.")
    yield metric(p + "batch_size_avg", _weighted(t.get("batchsize") or {} for t in (now.get("topics") or {})
                                                 .values()), client, "Average size of a batch in bytes.")
    yield metric(p + "requests_in_flight", sum(int(b.get("waitresp_cnt", 0)) for b in brokers), client,
                 "Requests sent and awaiting a response.")
    yield metric(p + "buffer_total_bytes", size_max, client, "The producer's queue size (buffer.memory).")
    yield metric(p + "buffer_available_bytes", max(size_max - size, 0.0), client,
                 "Bytes of the producer's queue not in use.")
    yield metric(p + "connection_count", sum(1 for b in brokers if b.get("state") == "UP"), client,
                 "Connections to the brokers that are up.")
    age_s = float(now.get("age", 0)) / 1e6
    yield metric(p + "start_time_seconds", float(now.get("time", time.time())) - age_s, client,
                 "When the producer started, in seconds since the epoch.")
    old_topics = (before or {}).get("topics") or {}
    for name, topic in sorted((now.get("topics") or {}).items()):
        labels = {**client, "topic": name}
        sent, sent_bytes = _topic_totals(topic)
        was = old_topics.get(name)
        was_sent, was_bytes = _topic_totals(was) if was else (None, None)
        t = "kafka_producer_topic_"
        yield metric(t + "record_send_total", sent, labels, "Records of the topic sent to the brokers.")
        yield metric(t + "byte_total", sent_bytes, labels, "Bytes of the topic's records sent to the brokers.")
        yield metric(t + "record_send_rate", _rate(now, before, sent, was_sent), labels,
                     "Records of the topic sent per second, over the statistics window.")
        yield metric(t + "byte_rate", _rate(now, before, sent_bytes, was_bytes), labels,
                     "Bytes of the topic sent per second, over the statistics window.")
    old_brokers = {b.get("nodeid"): b for b in ((before or {}).get("brokers") or {}).values()}
    for broker in sorted(brokers, key=lambda b: int(b["nodeid"])):
        labels = {**client, "nodeid": f"node-{broker['nodeid']}"}
        was = old_brokers.get(broker["nodeid"])
        n = "kafka_producer_node_"
        for java, field, text in (("request", "tx", "Requests sent to the broker"),
                                  ("response", "rx", "Responses received from the broker"),
                                  ("outgoing_byte", "txbytes", "Bytes sent to the broker"),
                                  ("incoming_byte", "rxbytes", "Bytes received from the broker")):
            value = float(broker.get(field, 0))
            yield metric(f"{n}{java}_total", value, labels, f"{text}.")
            yield metric(f"{n}{java}_rate", _rate(now, before, value, float(was.get(field, 0)) if was else None),
                         labels, f"{text}, per second over the statistics window.")
        yield metric(n + "request_latency_avg", _weighted([broker.get("rtt") or {}]) * _MS_PER_US, labels,
                     "Average request round-trip time to the broker in ms, over the statistics window.")


def _topic_totals(topic: Mapping[str, Any]) -> tuple[float, float]:
    partitions = (topic.get("partitions") or {}).values()
    return (float(sum(int(p.get("txmsgs", 0)) for p in partitions)),
            float(sum(int(p.get("txbytes", 0)) for p in partitions)))


# Strimzi's rules for the clients' MBeans, in their order: (group kind, attribute pattern, kind); a ``topic`` group is
# producer-topic-metrics, a ``node`` group <type>-node-metrics, a ``client`` group any other <type>-metrics. The
# family is kafka_<group without -metrics>_<attribute>.
_RULES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("topic", re.compile(r".+-total"), "counter"),
    ("topic", re.compile(r"compression-rate|.+-avg|.+rate"), "gauge"),
    ("node", re.compile(r".+-total"), "counter"),
    ("node", re.compile(r".+-avg|.+-rate"), "gauge"),
    ("client", re.compile(r".+-total"), "counter"),
    ("client", re.compile(r".+-avg|.+-bytes|.+-count|.+-ratio|.+-age|.+-flight|.+-threads|.+-connectors|.+-tasks|"
                          r".+-ago"), "gauge"),
)
_LABELS = {"client-id": "clientid", "node-id": "nodeid", "topic": "topic"}


def java_client_samples(metrics: Iterable[tuple[str, str, Mapping[str, str], float]], *,
                        debezium_connect_metrics: bool = False) -> list[Metric]:
    """Java-named client metrics ``(group, name, tags, value)`` (kafka-python's) as Strimzi's rules export them:
    the first rule of the group whose pattern matches the whole name gives the kind; a name no rule matches is not
    exported (as kafka-python keeps rates where Java also keeps totals, its ``producer-metrics`` show no
    ``-total``). ``debezium_connect_metrics``: also the worker's ``connect-metrics`` group as the rule of Debezium's
    monitoring example names it, every attribute as ``kafka_connect_metrics_<name>{client}``."""
    result = []
    for full_group, name, tags, number in metrics:
        group, _, suffix = full_group.partition(".")  # kafka-python: producer-topic-metrics.<topic>, ...node-<id>
        labels = {_LABELS[k]: str(v) for k, v in tags.items() if k in _LABELS}
        topic_group = group == "producer-topic-metrics"
        if suffix:
            labels.setdefault("topic" if topic_group else "nodeid", suffix)
        shape = "topic" if topic_group else "node" if "nodeid" in labels else "client"
        for rule_shape, pattern, kind in _RULES:
            if rule_shape == shape and pattern.fullmatch(name):
                family = f"kafka_{group.removesuffix('-metrics')}_{name}".replace("-", "_")
                result.append(Metric(family, float(number), labels, "counter" if kind == "counter" else "gauge",
                                     f"Kafka client {group} {name}."))
                break
        if debezium_connect_metrics and group == "connect-metrics" and "client-id" in tags:
            result.append(Metric(f"kafka_connect_metrics_{name}".replace("-", "_"), float(number),
                                 {"client": str(tags["client-id"])}, "untyped", f"Kafka Connect {group} {name}."))
    return result

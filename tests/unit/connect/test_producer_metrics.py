"""librdkafka's statistics and kafka-python's Java-named metrics as Strimzi's JMX exporter rules name the Java
producer's MBeans."""

from __future__ import annotations

import json
import math
from typing import Any

from connect.runtime.producer_metrics import ProducerStatistics, java_client_samples


def _document(ts_s: float, sent: int, sent_bytes: int, tx: int) -> str:
    broker: dict[str, Any] = {"nodeid": 1, "state": "UP", "tx": tx, "rx": tx, "txbytes": sent_bytes, "rxbytes": 10,
                              "waitresp_cnt": 1, "rtt": {"avg": 3000, "cnt": 2}, "int_latency": {"avg": 0, "cnt": 0},
                              "throttle": {"avg": 0, "cnt": 0}}
    bootstrap = {"nodeid": -1, "state": "UP", "tx": 1, "rtt": {"avg": 99_000_000, "cnt": 1}}
    return json.dumps({
        "ts": int(ts_s * 1e6), "time": 1_800_000_000, "age": 5_000_000, "txmsgs": sent, "tx": tx, "rx": tx,
        "tx_bytes": sent_bytes, "rx_bytes": 10, "msg_size": 1024, "msg_size_max": 4096,
        "brokers": {"k:9092/1": broker, "k:9092/bootstrap": bootstrap},
        "topics": {"t": {"batchsize": {"avg": 100, "cnt": 4},
                         "partitions": {"0": {"txmsgs": sent, "txbytes": sent_bytes},
                                        "-1": {"txmsgs": 0, "txbytes": 0}}}}})


def test_nothing_before_the_first_statistics() -> None:
    assert ProducerStatistics("p").samples() == []


def test_totals_averages_and_rates_between_two_documents() -> None:
    stats = ProducerStatistics("connector-producer-c-0")
    stats.record(_document(10.0, sent=10, sent_bytes=1000, tx=2))
    stats.record(_document(12.0, sent=30, sent_bytes=3000, tx=6))
    found = {m.name: m for m in stats.samples() if "nodeid" not in m.labels and "topic" not in m.labels}
    assert found["kafka_producer_record_send_total"].value == 30
    assert found["kafka_producer_record_send_total"].kind == "counter"
    assert found["kafka_producer_request_latency_avg"].value == 3.0  # µs to ms; the bootstrap entry is no broker
    assert math.isnan(found["kafka_producer_record_queue_time_avg"].value)  # no sample in the window, as Java
    assert found["kafka_producer_buffer_available_bytes"].value == 3072
    assert found["kafka_producer_requests_in_flight"].value == 1 and found["kafka_producer_connection_count"].value == 1
    assert found["kafka_producer_start_time_seconds"].value == 1_800_000_000 - 5
    topic = {m.name: m for m in stats.samples() if m.labels.get("topic") == "t"}
    assert topic["kafka_producer_topic_record_send_total"].value == 30
    assert topic["kafka_producer_topic_record_send_rate"].value == 10.0  # 20 records in 2 s
    assert topic["kafka_producer_topic_byte_rate"].value == 1000.0
    node = {m.name: m for m in stats.samples() if "nodeid" in m.labels}
    assert {m.labels["nodeid"] for m in node.values()} == {"node-1"}
    assert node["kafka_producer_node_request_rate"].value == 2.0


def test_java_named_metrics_follow_strimzis_rules() -> None:
    client = {"client-id": "p"}
    samples = java_client_samples([
        ("producer-metrics", "batch-size-avg", client, 10.0),
        ("producer-metrics", "record-send-rate", client, 5.0),  # no producer-metrics rate in Strimzi's rules
        ("producer-metrics", "batch-size-max", client, 11.0),  # nor a -max
        ("producer-topic-metrics.a.b", "record-send-rate", client, 2.0),
        ("producer-node-metrics.node-1", "request-latency-avg", client, 1.5),
        ("kafka-metrics-count", "count", client, 3.0)])
    assert [(m.name, m.labels, m.kind) for m in samples] == [
        ("kafka_producer_batch_size_avg", {"clientid": "p"}, "gauge"),
        ("kafka_producer_topic_record_send_rate", {"clientid": "p", "topic": "a.b"}, "gauge"),
        ("kafka_producer_node_request_latency_avg", {"clientid": "p", "nodeid": "node-1"}, "gauge")]

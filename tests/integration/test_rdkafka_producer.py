"""The default source-task producer on librdkafka: acknowledgements in order, Java's partitioning of keyed
records, failures reaching the callback."""

from __future__ import annotations

import threading
from functools import partial
from typing import Any

import pytest
from kafka.admin import KafkaAdminClient, NewTopic

from connect import clients
from connect.api.errors import ConnectError
from connect.runtime import exactly_once
from connect.runtime.rdkafka_producer import RdKafkaProducer
from tests.integration.support import read_topic, unique

pytestmark = pytest.mark.integration


def _settings(stack: Any, client_id: str, **overrides: str) -> dict[str, Any]:
    return clients.source_task_producer_settings(stack.kafka_bootstrap, client_id, overrides)


def test_records_are_acknowledged_in_order_and_land_in_kafka(stack: Any) -> None:
    topic = unique("rk-")
    producer = RdKafkaProducer(_settings(stack, "rk-test"))
    acked: list[int] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def done(number: int, error: Any, _message: Any = None) -> None:
        with lock:
            (acked.append(number) if error is None else errors.append(producer.failure(error)))

    try:
        for number in range(3000):
            producer.send(topic, value=str(number).encode(), key=b"k", headers=[("h", b"v")], partition=None,
                          timestamp_ms=None, on_done=partial(done, number))
        producer.flush(60)
        assert errors == []
        assert acked == list(range(3000)), "callbacks arrive once per record, in send order"
    finally:
        producer.close(30)
    records = read_topic(stack.kafka_bootstrap, topic, 3000)
    assert [int(r.value) for r in records] == list(range(3000))
    assert records[0].headers == [("h", b"v")] and records[0].key == b"k"


def test_keyed_records_go_where_javas_partitioner_puts_them(stack: Any) -> None:
    topic = unique("rk-parts-")
    admin = KafkaAdminClient(bootstrap_servers=stack.kafka_bootstrap)
    try:
        admin.create_topics([NewTopic(topic, 6, 1)])
    finally:
        admin.close()
    producer = RdKafkaProducer(_settings(stack, "rk-parts"))
    keys = [f'{{"schema":null,"payload":{{"id":"{n}"}}}}'.encode() for n in range(200)]
    try:
        for key in keys:
            producer.send(topic, value=b"v", key=key, headers=[], partition=None, timestamp_ms=1_700_000_000_000)
        producer.flush(60)
    finally:
        producer.close(30)
    records = read_topic(stack.kafka_bootstrap, topic, len(keys))
    assert {(r.key, r.partition) for r in records} == {(k, (clients.murmur2(k) & 0x7FFFFFFF) % 6) for k in keys}
    assert {r.timestamp for r in records} == {1_700_000_000_000}


def test_acknowledgements_come_without_further_sends(stack: Any) -> None:
    producer = RdKafkaProducer(_settings(stack, "rk-idle"))
    acked = threading.Event()
    try:
        producer.send(unique("rk-idle-"), value=b"x", key=None, headers=[], partition=None,
                      timestamp_ms=None, on_done=lambda error, _message=None: acked.set())
        assert acked.wait(60), "a task that sends nothing more still gets its record acknowledged"
    finally:
        producer.close(5)


def test_a_failed_delivery_reaches_the_callback(stack: Any) -> None:
    producer = RdKafkaProducer(_settings(stack, "rk-fail", **{"delivery.timeout.ms": "3000"}))
    results: list[Any] = []
    finished = threading.Event()

    def done(error: Any, _message: Any = None) -> None:
        results.append(producer.failure(error))  # librdkafka's KafkaError, as the task words it
        finished.set()

    try:
        topic = unique("rk-fail-")
        producer.send(topic, value=b"x", key=None, headers=[], partition=7, timestamp_ms=None, on_done=done)
        assert finished.wait(60), "the callback ran"
        assert len(results) == 1 and isinstance(results[0], ConnectError), results
    finally:
        producer.close(5)


@pytest.mark.parametrize("end", ["commit", "abort"])
def test_a_transaction_end_serves_acknowledgements_in_send_order(stack: Any, end: str) -> None:
    """librdkafka's commit_transaction and abort_transaction flush, serving delivery reports in the caller's thread:
    the acknowledgement thread must not serve them at the same time, or one partition's callbacks run out of order.
    (An abort reports the records still queued as failed at once, before the ones in flight: librdkafka's order.)"""
    producer = RdKafkaProducer(exactly_once.producer_settings(_settings(stack, "rk-txn"), {}, unique("rk-txn-")))
    topic = unique("rk-txn-")
    results: list[tuple[int, bool]] = []
    lock = threading.Lock()

    def done(number: int, error: Any, _message: Any = None) -> None:
        with lock:
            results.append((number, error is None))

    try:
        producer.init_transactions(60)
        for _ in range(3):
            producer.begin_transaction()
            first = len(results)
            for number in range(first, first + 5000):
                producer.send(topic, value=b"x" * 100, key=b"k", headers=[], partition=None, timestamp_ms=None,
                              on_done=partial(done, number))
            if end == "commit":
                producer.commit_transaction(60)
            else:
                producer.abort_transaction(60)
            with lock:
                numbers = [number for number, _ok in results]
                acknowledged = [number for number, ok in results if ok]
            if end == "commit":
                assert numbers == list(range(first + 5000)), "every callback ran by the end, in send order"
            else:  # librdkafka's abort fails the queued records at once and the in-flight ones when they come back
                assert sorted(numbers) == list(range(first + 5000)), "every callback ran by the end"
            assert acknowledged == sorted(acknowledged), "the acknowledged records in send order"
        if end == "commit":
            assert all(ok for _number, ok in results)
    finally:
        producer.close(30)

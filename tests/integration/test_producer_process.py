"""The source-task producer in a child process: acknowledgements, ordering, back-pressure and a dead child."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from connect import clients
from connect.runtime.producer_process import ProcessProducer
from tests.integration.support import read_topic, unique

pytestmark = pytest.mark.integration


def test_records_are_acknowledged_in_order_and_land_in_kafka(stack: Any) -> None:
    topic = unique("pp-")
    settings = clients.source_task_producer_settings(stack.kafka_bootstrap, "test-producer", {})
    producer = ProcessProducer(settings, "test-producer")
    acked: list[int] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def done(number: int, result: Any) -> None:
        with lock:
            (errors.append(result) if isinstance(result, BaseException) else acked.append(number))

    try:
        for number in range(3000):
            handle = producer.send(topic, value=str(number).encode(), key=b"k", headers=[("h", b"v")],
                                   partition=None, timestamp_ms=None)
            handle.add_both(done, number)
        producer.dispatch()
        producer.flush(60)
        assert errors == []
        assert acked == list(range(3000)), "callbacks arrive once per record, in send order"
    finally:
        producer.close(30)
    values = [int(r.value) for r in read_topic(stack.kafka_bootstrap, topic, 3000)]
    assert values == list(range(3000))
    assert read_topic(stack.kafka_bootstrap, topic, 1)[0].headers == [("h", b"v")]


def test_a_dead_child_fails_every_outstanding_record(stack: Any) -> None:
    settings = clients.source_task_producer_settings(stack.kafka_bootstrap, "dead-producer", {})
    producer = ProcessProducer(settings, "dead-producer")
    results: list[Any] = []
    finished = threading.Event()
    total = 5000

    def done(result: Any) -> None:
        results.append(result)
        if len(results) == total:
            finished.set()

    topic = unique("pp-dead-")
    for number in range(total):
        producer.send(topic, value=str(number).encode(), key=None, headers=[], partition=None,
                      timestamp_ms=None).add_both(done)
    producer.dispatch()
    producer._process.kill()
    assert finished.wait(60), f"only {len(results)} of {total} callbacks ran"
    failures = [r for r in results if isinstance(r, BaseException)]
    assert failures, "records still unacknowledged when the child died must fail, not vanish"
    assert all("exited" in str(f) for f in failures)
    with pytest.raises(Exception, match=r"gone|exited"):
        producer.send("nowhere", value=b"x", key=None, headers=[], partition=None, timestamp_ms=None)
    producer.close(5)

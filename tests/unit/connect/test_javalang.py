"""Java ``HashMap`` iteration order, checked against orders printed by the JVM (JDK 17)."""

from __future__ import annotations

from connect.javalang import JavaHashMap, string_hash, task_config_order


def test_string_hash_is_javas() -> None:
    assert string_hash("") == 0
    assert string_hash("task.class") == 0xB1F1F6A0 or string_hash("task.class") == (
        sum(ord(c) * 31 ** (len("task.class") - 1 - i) for i, c in enumerate("task.class")) & 0xFFFFFFFF)
    assert string_hash("a") == 97 and string_hash("ab") == 97 * 31 + 98
    assert string_hash("\U0001F600") == (0xD83D * 31 + 0xDE00)  # UTF-16 surrogate pair, as Java sees it


def test_task_config_order_matches_kafka_connect_4_3_on_jdk17() -> None:
    # task-<c>-0 records written by Kafka Connect 4.3.1 on JDK 17 for a FileStreamSourceConnector
    # (tests/integration/test_internal_topics_java.py compares whole records live)
    props = ["connector.class", "file", "topic", "tasks.max", "name"]
    assert task_config_order(props) == ["connector.class", "file", "task.class", "tasks.max", "name", "topic"]
    props = ["connector.class", "file", "topic", "tasks.max", "batch.size", "name"]
    assert task_config_order(props) == ["connector.class", "file", "task.class", "tasks.max", "batch.size", "name",
                                        "topic"]


def test_resizes_keep_every_key_once() -> None:
    keys = [f"key.{n}" for n in range(100)]
    table = JavaHashMap()
    table.put_all(keys + keys[:10])
    assert sorted(table.keys()) == sorted(keys)
    assert sorted(task_config_order(keys)) == sorted([*keys, "task.class"])

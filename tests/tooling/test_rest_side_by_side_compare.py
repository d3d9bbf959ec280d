"""The comparison of compat/rest_side_by_side.py on hand-made answers (nothing started): it fails on every real
difference, value types and array lengths included, and forgives only the run-specific values and the plugins
installed on one side only."""

from __future__ import annotations

from typing import Any

import pytest

from compat.rest_side_by_side import Step, compare_json, without_one_sided_plugins

STEP = Step("GET", "/x")


def diffs(java: Any, ours: Any, step: Step = STEP) -> list[str]:
    return compare_json(without_one_sided_plugins(java, java=True), without_one_sided_plugins(ours, java=False),
                        step)


def test_the_same_answer_has_no_difference() -> None:
    body = {"name": "c", "tasks": [{"connector": "c", "task": 0}], "config": {"a": "1"}, "type": "source"}
    assert diffs(body, body) == []


@pytest.mark.parametrize(("java", "ours"), [
    ({"n": 1}, {"n": "1"}),  # a string where Java has a number
    ({"n": True}, {"n": "true"}),
    ({"n": "x"}, {"n": None}),  # null where Java has a value
    ({"n": None}, {"n": "x"}),
    ({"n": [1]}, {"n": {"0": 1}}),
])
def test_a_value_of_another_type_is_a_difference(java: Any, ours: Any) -> None:
    assert diffs(java, ours) != []


@pytest.mark.parametrize(("java", "ours"), [
    ({"tasks": []}, {"tasks": [{"task": 0}]}),  # empty on one side only
    ({"tasks": [{"task": 0}]}, {"tasks": []}),
    ({"tasks": [{"task": 0}, {"task": 1}]}, {"tasks": [{"task": 0}]}),  # the extra element is not dropped
    (["a", "b"], ["a", "b", "c"]),
])
def test_an_array_of_another_length_is_a_difference(java: Any, ours: Any) -> None:
    assert any("element(s)" in line for line in diffs(java, ours))


def test_values_keys_and_their_order_are_compared() -> None:
    assert diffs({"a": 1, "b": 2}, {"b": 2, "a": 1}) == ["$: key order: Java ['a', 'b'], ours ['b', 'a']"]
    assert diffs({"a": 1}, {"a": 2}) == ["$.a: value Java 1, ours 2"]
    assert diffs({"a": 1}, {"a": 1, "b": 2}) == ["$: we add keys ['b']"]


def test_run_specific_values_and_free_paths_are_not_compared() -> None:
    java = {"connector": {"state": "RUNNING", "worker_id": "10.0.0.1:8083"}, "last_modified": 1, "message": "x"}
    ours = {"connector": {"state": "RUNNING", "worker_id": "127.0.0.1:8083"}, "last_modified": None, "message": "y"}
    assert diffs(java, ours, Step("GET", "/x", free=("$.message",))) == []
    assert diffs(java, ours) == ['$.message: value Java "x", ours "y"']


def test_plugins_installed_on_one_side_only_are_left_out_and_the_rest_compared_in_order() -> None:
    sink = {"class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "type": "sink", "version": "4.3.1"}
    source = {"class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "type": "source",
              "version": "4.3.1"}
    mongodb = {"class": "io.debezium.connector.mongodb.MongoDbConnector", "type": "source",
               "version": "3.6.1.Final"}
    assert diffs([sink, source], [mongodb, source]) == []
    assert diffs([sink, source], [mongodb, {**source, "version": "4.3.0"}]) != []
    assert diffs([sink, source], [mongodb]) != []  # a plugin both should have, missing
    converters = ["org.apache.kafka.connect.json.JsonConverter", "org.apache.kafka.connect.storage.StringConverter"]
    assert diffs({"recommended_values": converters},
                 {"recommended_values": ["io.debezium.converters.CloudEventsConverter", *converters]}) == []
    assert diffs({"recommended_values": converters}, {"recommended_values": converters[::-1]}) != []
    loggers = ["org.apache.kafka.connect.file", "org.apache.kafka.connect.file.FileStreamSourceConnector"]
    assert diffs([loggers[0], sink["class"], loggers[1]], loggers) == []

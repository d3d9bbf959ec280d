"""The transformation chain (predicates, negate, dropped records) and the error handling of the record stages."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

from connect.api.data import STRING, Schema, Struct, Type, struct_schema
from connect.api.errors import ConnectError, DataError, RetriableError
from connect.api.records import Header, SourceRecord
from connect.runtime.error_handling import FAILED, ErrorHandlingConfig, RetryWithToleranceOperator, Stage
from connect.runtime.transformation_chain import build_chain

VALUE_SCHEMA = struct_schema([("a", STRING), ("b", Schema(Type.INT32, optional=True))], name="v")


def rec(topic: str = "data.t", value: Any = "default", headers: tuple[Header, ...] = ()) -> SourceRecord:
    if value == "default":
        value = Struct(VALUE_SCHEMA, {"a": "x", "b": 1})
    return SourceRecord({"p": 1}, {"o": 1}, topic, None, None, None, VALUE_SCHEMA if value is not None else None,
                        value, 1700000000000, headers)


SEED_LIKE = {
    "transforms": "addMetadataHeaders,route",
    "transforms.addMetadataHeaders.type": "org.apache.kafka.connect.transforms.HeaderFrom$Value",
    "transforms.addMetadataHeaders.fields": "a,b",
    "transforms.addMetadataHeaders.headers": "ha,hb",
    "transforms.addMetadataHeaders.operation": "copy",
    "transforms.addMetadataHeaders.predicate": "isHeartbeat",
    "transforms.addMetadataHeaders.negate": "true",
    "transforms.route.type": "RegexRouter",
    "transforms.route.regex": "data\\.(.*)",
    "transforms.route.replacement": "routed.$1",
    "predicates": "isHeartbeat",
    "predicates.isHeartbeat.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
    "predicates.isHeartbeat.pattern": "__debezium-heartbeat.*",
}


def test_predicate_negate_and_order() -> None:
    chain = build_chain(SEED_LIKE)
    out = chain.apply(rec())
    assert out.topic == "routed.t"
    assert [(h.key, h.value) for h in out.headers] == [("ha", "x"), ("hb", 1)]
    heartbeat = chain.apply(rec(topic="__debezium-heartbeat.x"))
    assert heartbeat.headers == () and heartbeat.topic == "__debezium-heartbeat.x"


def test_filter_drops_tombstones_only() -> None:
    chain = build_chain({"transforms": "drop", "transforms.drop.type": "Filter",
                         "transforms.drop.predicate": "tomb", "predicates": "tomb",
                         "predicates.tomb.type": "RecordIsTombstone"})
    assert chain.apply(rec(value=None)) is None
    assert chain.apply(rec()) is not None


@pytest.mark.parametrize(("props", "message"), [
    ({"transforms": "x"}, 'Missing required configuration "transforms.x.type"'),
    ({"transforms": "x", "transforms.x.type": "com.example.Nope"}, "could not be found"),
    ({"transforms": "x", "transforms.x.type": "RegexRouter", "transforms.x.regex": "a(", "transforms.x.replacement":
      "b"}, "Invalid regex"),
    ({"transforms": "x", "transforms.x.type": "Filter", "transforms.x.predicate": "p"}, "predicate"),
    ({"transforms": "x", "transforms.x.type": "org.apache.kafka.connect.transforms.ExtractField$Value"},
     'Missing required configuration "field"'),
])
def test_bad_chain_config_is_a_clear_error(props: dict[str, str], message: str) -> None:
    with pytest.raises(ConnectError, match=message.replace("$", r"\$").replace(".", r"\.")):
        build_chain(props)


def operator(**config: Any) -> RetryWithToleranceOperator:
    return RetryWithToleranceOperator("conn-0", ErrorHandlingConfig(**config), threading.Event())


def test_tolerance_none_fails_with_the_cause() -> None:
    def boom() -> None:
        raise DataError("cannot serialize")

    with pytest.raises(ConnectError, match="Tolerance exceeded in error handler") as info:
        operator().execute(Stage.VALUE_CONVERTER, "Conv", boom, rec())
    assert isinstance(info.value.__cause__, DataError)


def test_tolerance_all_skips_and_logs(caplog: pytest.LogCaptureFixture) -> None:
    op = operator(tolerance_all=True, log_enable=True, log_include_messages=True)
    with caplog.at_level(logging.ERROR, logger="connect.runtime.error_handling"):
        result = op.execute(Stage.TRANSFORMATION, "org.example.T", lambda: 1 / 0, rec())
    assert result is FAILED and op.skipped == 1
    assert "Executing stage 'TRANSFORMATION' with class 'org.example.T'" in caplog.text
    assert "where source record is = SourceRecord{sourcePartition={'p': 1}" in caplog.text


def test_tolerance_all_without_log_still_warns(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="connect.runtime.error_handling"):
        assert operator(tolerance_all=True).execute(Stage.KEY_CONVERTER, "K", lambda: 1 / 0, rec()) is FAILED
    assert "Skipping a record of data.t" in caplog.text


def test_retriable_errors_are_retried_within_the_timeout() -> None:
    calls = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise RetriableError("not yet")
        return "ok"

    op = operator(retry_timeout_ms=5000, retry_delay_max_ms=10)
    assert op.execute(Stage.VALUE_CONVERTER, "C", flaky, rec()) == "ok"
    assert len(calls) == 3


def test_retries_stop_at_the_timeout() -> None:
    def always() -> None:
        raise RetriableError("never")

    with pytest.raises(ConnectError, match="Tolerance exceeded"):
        operator(retry_timeout_ms=50, retry_delay_max_ms=10).execute(Stage.VALUE_CONVERTER, "C", always, rec())


def test_a_first_failure_handed_in_counts_as_the_first_attempt() -> None:
    calls = []

    def flaky() -> str:
        calls.append(1)
        return "ok"

    op = operator(retry_timeout_ms=5000, retry_delay_max_ms=10)
    assert op.execute(Stage.VALUE_CONVERTER, "C", flaky, rec(), RetriableError("not yet")) == "ok"
    assert len(calls) == 1 and op.retries == 1 and op.failures == 0
    op = operator(tolerance_all=True)
    assert op.execute(Stage.KEY_CONVERTER, "C", flaky, rec(), DataError("bad")) is FAILED
    assert len(calls) == 1, "a non-retriable first failure is not run again"
    assert op.failures == 1 and op.skipped == 1
    with pytest.raises(ConnectError, match="Tolerance exceeded") as raised:
        operator().execute(Stage.VALUE_CONVERTER, "C", flaky, rec(), RetriableError("no retries"))
    assert isinstance(raised.value.__cause__, RetriableError) and len(calls) == 1


def test_chain_with_operator_reports_failed() -> None:
    chain = build_chain({"transforms": "x", "transforms.x.type": "org.apache.kafka.connect.transforms.Cast$Value",
                         "transforms.x.spec": "a:int32"})
    assert chain.apply(rec(), operator(tolerance_all=True)) is FAILED
    with pytest.raises(ConnectError):
        chain.apply(rec(), operator())


def test_error_config_parsing() -> None:
    config = ErrorHandlingConfig.parse({"errors.tolerance": "all", "errors.retry.timeout": "-1",
                                        "errors.log.enable": "true"})
    assert config.tolerance_all and config.retry_timeout_ms == -1 and config.log_enable
    assert not config.log_include_messages and config.retry_delay_max_ms == 60000

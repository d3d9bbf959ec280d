"""Topic naming strategies and schema name adjustment (Debezium 3.6 rules; the integration test
``tests/integration/mongodb/test_naming.py`` compares with names recorded from the real connector)."""

from __future__ import annotations

import pytest

from connectors.mongodb import config as mongo_config
from connectors.mongodb.event_converter import ChangeEventConverter
from connectors.mongodb.naming import (
    SchemaNameAdjustment,
    TopicNaming,
    adjust_schema_name,
    java_replacement,
    sanitize_topic,
)

AVRO, UNICODE, NONE = SchemaNameAdjustment.AVRO, SchemaNameAdjustment.AVRO_UNICODE, SchemaNameAdjustment.NONE
S = "io.debezium.schema."


@pytest.mark.parametrize(("name", "avro", "unicode"), [
    ("p.db.plain.Key", "p.db.plain.Key", "p.db.plain.Key"),
    ("p.db.my-coll.Envelope", "p.db.my_coll.Envelope", "p.db.my_u002dcoll.Envelope"),
    ("p.db.under_score.Key", "p.db.under_score.Key", "p.db.under_u005fscore.Key"),
    ("2p.db.c.Key", "_2p.db.c.Key", "_u0032p.db.c.Key"),
    ("-p.db.c.Key", "_p.db.c.Key", "_u002dp.db.c.Key"),
    ("p.2024data.Key", "p.2024data.Key", "p.2024data.Key"),
])
def test_schema_name_adjustment(name: str, avro: str, unicode: str) -> None:
    assert adjust_schema_name(name, NONE) == name
    assert adjust_schema_name(name, AVRO) == avro
    assert adjust_schema_name(name, UNICODE) == unicode


def test_topic_sanitising_counts_utf16_units() -> None:
    assert sanitize_topic("p.db.café😀") == "p.db.caf___"
    assert sanitize_topic("p.db.café😀", unicode=True) == "p.db.caf_u00e9_ud83d_ude00"
    assert sanitize_topic("p.db.\u03b1") == "p.db._"
    assert sanitize_topic("p.db.\u03b1", unicode=True) == "p.db._u3b1"  # Java's toHexString pads only 1-2 digits
    assert sanitize_topic("p.a_b", unicode=True) == "p.a_u005fb"
    assert sanitize_topic("x" * 300) == "x" * 249
    assert sanitize_topic("..") == "__"
    assert sanitize_topic(".", unicode=True) == "_u002e"


def test_java_replacement_syntax() -> None:
    assert java_replacement("rx.$1") == r"rx.\g<1>"
    assert java_replacement("${name}-x") == r"\g<name>-x"
    assert java_replacement(r"a\$b\\c") == "a$b\\\\c"


def test_strategies() -> None:
    default = TopicNaming("p", delimiter="-", transaction="tx", heartbeat_prefix="hb")
    assert default.data_topic("db", "c 1") == "p-db-c_1"
    assert (default.transaction_topic, default.heartbeat_topic) == ("p-tx", "hb-p")
    assert TopicNaming("p", heartbeat_name="beats").heartbeat_topic == "beats"
    schema = TopicNaming("p", strategy=S + "SchemaTopicNamingStrategy")
    assert schema.data_topic("db", "a") == schema.data_topic("other", "b") == "p"
    unicode = TopicNaming("p_x", strategy=S + "DefaultUnicodeTopicNamingStrategy")
    assert unicode.data_topic("db", "é") == "p_u005fx.db._u00e9"
    regex = TopicNaming("p", strategy=S + "DefaultRegexTopicNamingStrategy", regex=r"p\.(\w+)\.orders_\d+",
                        replacement="p.$1.orders")
    assert regex.data_topic("shop", "orders_1") == regex.data_topic("shop", "orders_2") == "p.shop.orders"
    assert regex.data_topic("shop", "customers") == "p.shop.customers"


def test_bounded_topic_cache() -> None:
    naming = TopicNaming("p", cache_size=2)
    for coll in "abcde":
        naming.data_topic("db", coll)
    assert len(naming._topics) == 2


def test_converter_uses_adjusted_schema_names() -> None:
    naming = TopicNaming("p", adjustment=UNICODE)
    conv = ChangeEventConverter(topic_prefix="p", run_id="r", clock_ms=lambda: 1, naming=naming)
    event = {"_id": {"_data": "00"}, "operationType": "insert", "ns": {"db": "d", "coll": "my-coll"},
             "documentKey": {"_id": 1}, "fullDocument": {"_id": 1}}
    [record] = conv.to_records(event)
    assert record.topic == "p.d.my-coll"
    assert record.key_schema is not None and record.key_schema.name == "p.d.my_u002dcoll.Key"
    assert record.value_schema is not None and record.value_schema.name == "p.d.my_u002dcoll.Envelope"


def _errors(**extra: str) -> dict[str, list[str]]:
    props = {"mongodb.connection.string": "mongodb://h:1", "topic.prefix": "p", **extra}
    return {r.name: r.errors for r in mongo_config.validate(props) if r.errors}


def test_validation() -> None:
    errors = _errors(**{"topic.naming.strategy": "com.example.Nope", "schema.name.adjustment.mode": "avro2",
                        "topic.delimiter": "/", "topic.transaction": "a b", "topic.cache.size": "0",
                        "topic.heartbeat.name": "x:y"})
    assert "Class com.example.Nope could not be found" in errors["topic.naming.strategy"][0]
    assert errors["schema.name.adjustment.mode"] == ["Value must be one of none, avro, avro_unicode"]
    assert "/ has invalid format" in errors["topic.delimiter"][0]
    assert set(errors) >= {"topic.transaction", "topic.cache.size", "topic.heartbeat.name"}
    regex = _errors(**{"topic.naming.strategy": S + "DefaultRegexTopicNamingStrategy"})
    assert "A value is required" in regex["topic.regex"][0]
    regex = _errors(**{"topic.naming.strategy": S + "DefaultRegexTopicNamingStrategy", "topic.regex": "("})
    assert "valid regular expression" in regex["topic.regex"][0]
    regex = _errors(**{"topic.naming.strategy": S + "SchemaRegexTopicNamingStrategy", "topic.regex": "x"})
    assert regex["topic.replacement"] == ["topic.replacement must be non-empty if topic.regex is set."]
    assert not _errors(**{"topic.naming.strategy": S + "DefaultUnicodeTopicNamingStrategy",
                          "schema.name.adjustment.mode": "AVRO_UNICODE"})


def test_parsed_config_carries_naming() -> None:
    parsed = mongo_config.MongoDbConfig.parse({"mongodb.connection.string": "mongodb://h:1", "topic.prefix": "p",
                                               "topic.delimiter": "_", "schema.name.adjustment.mode": "avro"})
    assert parsed.topic_naming.data_topic("d", "c") == "p_d_c"
    assert parsed.topic_naming.adjustment is AVRO

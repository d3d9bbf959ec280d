"""The ConfigDef kernel (``connect.config``): Java's validator messages, ``validateAll`` semantics (a value that does
not parse is null and its checks still run), ``validate``'s HashMap order and ``sortedConfigs``."""

from __future__ import annotations

import pytest

from connect.api.config import ConfigKey, ConfigType
from connect.config.definition import Spec, sorted_keys, spec_of, validate_all, validate_order
from connect.config.validators import (
    Check,
    at_least,
    invalid,
    non_empty,
    non_empty_without_controls,
    one_of,
    one_of_ignoring_case,
)


@pytest.mark.parametrize(("check", "value", "message"), [
    (at_least(1), 0, "Invalid value 0 for configuration k: Value must be at least 1"),
    (at_least(1), None, "Invalid value null for configuration k: Value must be non-null"),
    (at_least(0, allow_null=True), None, None),
    (at_least(1), 1, None),
    (one_of("none", "all"), "x", "Invalid value x for configuration k: String must be one of: none, all"),
    (one_of("none", "all"), "all", None),
    (one_of_ignoring_case("POLL", "INTERVAL"), "Poll", None),
    (one_of_ignoring_case("POLL", "INTERVAL"), None,
     "Invalid value null for configuration k: String must be one of (case insensitive): POLL, INTERVAL"),
    (non_empty, "", "Invalid value  for configuration k: String must be non-empty"),
    (non_empty, None, None),
    (non_empty_without_controls, "a\tb", "Invalid value a\tb for configuration k: String may not contain control "
                                         "sequences but had the following ASCII chars: 9"),
    (non_empty_without_controls, "", "Invalid value  for configuration k: String may not be empty"),
])
def test_validator_messages_are_javas(check: Check, value: object, message: str | None) -> None:
    assert check("k", value) == message


def test_invalid_shows_values_as_java_does() -> None:
    assert invalid("k", 1e-5, "r") == "Invalid value 1.0E-5 for configuration k: r"
    assert invalid("k", ["a", "b"], "r") == "Invalid value [a, b] for configuration k: r"
    assert invalid("k", True, "r") == "Invalid value true for configuration k: r"


def test_validate_all_reports_every_error_of_a_key() -> None:
    specs = [Spec(ConfigKey("n", ConfigType.INT, "1"), (at_least(1),)),
             Spec(ConfigKey("r", ConfigType.STRING, required=True)),
             Spec(ConfigKey("d", ConfigType.DOUBLE, "0.00001"))]
    values = validate_all(specs, {"n": "x"})
    assert [(v.name, v.value, v.errors) for v in values] == [
        ("n", None, ["Invalid value x for configuration n: Not a number of type INT",
                     "Invalid value null for configuration n: Value must be non-null"]),
        ("r", None, ['Missing required configuration "r" which has no default value.']),
        ("d", "1.0E-5", []),
    ]


def test_a_plugin_keys_validators_see_the_trimmed_text() -> None:
    key = ConfigKey("f", ConfigType.STRING, "BASE64", validators=(one_of_ignoring_case("NUMERIC", "BASE64"),))
    assert validate_all([spec_of(key)], {"f": " numeric "})[0].errors == []
    assert validate_all([spec_of(key)], {"f": "hex"})[0].errors == [
        "Invalid value hex for configuration f: String must be one of (case insensitive): NUMERIC, BASE64"]


def test_validate_order_is_a_java_hashmaps() -> None:
    # JsonConverterConfig's keys in definition order, and the order Kafka Connect 4.3.1 lists them in a validation
    # report (tests/unit/connect/test_validation.py's golden vectors)
    defined = ["converter.type", "schemas.enable", "schemas.cache.size", "schema.content", "decimal.format",
               "replace.null.with.default"]
    assert validate_order(defined) == ["decimal.format", "converter.type", "schemas.cache.size",
                                       "replace.null.with.default", "schemas.enable", "schema.content"]


def test_sorted_keys_is_sorted_configs() -> None:
    keys = [ConfigKey("b", group="G", order=2), ConfigKey("a", group="G", order=2, required=True),
            ConfigKey("z"), ConfigKey("c", group="H", order=0), ConfigKey("y", importance="HIGH")]
    assert [k.name for k in sorted_keys(keys)] == ["y", "z", "a", "b", "c"]

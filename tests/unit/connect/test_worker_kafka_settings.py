"""The worker's own Kafka client settings: placeholders resolved at start-up, top-level ``ssl.*`` left to an
``https`` REST listener when the Kafka protocol has no TLS, and the start-up's wait for Kafka."""

from __future__ import annotations

import pytest

from connect.api.errors import ConfigError
from connect.runtime.assembly import _client_settings, _resolved
from connect.runtime.worker_config import WorkerConfig

BASE = {"bootstrap.servers": "k:9092", "group.id": "g", "config.storage.topic": "c", "offset.storage.topic": "o",
        "status.storage.topic": "s"}


def settings(props: dict[str, str]) -> dict[str, object]:
    config, raw = WorkerConfig.parse(_resolved({**BASE, **props}), distributed=True)
    return _client_settings(config, raw)


def test_placeholders_in_worker_settings_are_resolved(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAFKA_SECRET", "from-the-environment")
    got = settings({"config.providers": "env",
                    "config.providers.env.class": "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
                    "security.protocol": "SASL_SSL", "sasl.jaas.config": 'M required password="${env:KAFKA_SECRET}";'})
    assert got["sasl.jaas.config"] == 'M required password="from-the-environment";'
    assert got["bootstrap.servers"] == "k:9092" and "group.id" not in got


@pytest.mark.parametrize(("protocol", "kept"), [("PLAINTEXT", False), ("SASL_PLAINTEXT", False), ("SSL", True),
                                                ("SASL_SSL", True)])
def test_top_level_ssl_settings_of_an_https_listener(protocol: str, kept: bool) -> None:
    got = settings({"listeners": "https://0.0.0.0:8443", "security.protocol": protocol,
                    "ssl.keystore.location": "/rest.pem"})
    assert ("ssl.keystore.location" in got) is kept


def test_top_level_ssl_settings_with_an_http_listener_stay_for_kafka_to_refuse() -> None:
    assert "ssl.truststore.location" in settings({"ssl.truststore.location": "/ts.jks"})


def test_the_start_up_wait_for_kafka_is_default_api_timeout_ms() -> None:
    def parsed(props: dict[str, str]) -> int:
        return WorkerConfig.parse({**BASE, **props}, distributed=True)[0].default_api_timeout_ms

    assert parsed({}) == 60_000
    assert parsed({"default.api.timeout.ms": " 5000 "}) == 5_000
    for bad in ("abc", "-1", "1.5"):
        with pytest.raises(ConfigError, match=r"default\.api\.timeout\.ms"):
            parsed({"default.api.timeout.ms": bad})

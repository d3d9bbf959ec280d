"""The Kafka client settings of a run: the command line's properties, the options a run refuses, and what the
offset listing's Admin client gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_jobs.kafka_source import SparkJobError, check_kafka_options, client_properties
from spark_jobs.materialize import _kafka_options, _parser


def _options(*argv: str) -> dict[str, str]:
    parser = _parser()
    args = parser.parse_args(["--bootstrap-servers", "b1:9093,b2:9093", "--topics", "t", "--output", "o", *argv])
    return _kafka_options(parser, args)


def test_properties_file_and_single_properties_become_kafka_options(tmp_path: Path) -> None:
    file = tmp_path / "client.properties"
    file.write_text("# comment\nsecurity.protocol=SASL_SSL\nsasl.mechanism : PLAIN\n"
                    "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\\n"
                    '  username="u" password="p=q";\nbootstrap.servers=b1:9093, b2:9093\n')
    assert _options("--kafka-properties", str(file), "--kafka-property", "sasl.mechanism=SCRAM-SHA-512",
                    "--kafka-property", "client.id=etl=1") == {
        "kafka.security.protocol": "SASL_SSL",
        "kafka.sasl.mechanism": "SCRAM-SHA-512",  # the single property wins over the file
        "kafka.sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required '
                                  'username="u" password="p=q";',
        "kafka.client.id": "etl=1",
    }
    assert _options() == {}


@pytest.mark.parametrize(("argv", "message"), [
    (["--kafka-property", "security.protocol"], "--kafka-property expects KEY=VALUE, not 'security.protocol'"),
    (["--kafka-property", "=x"], "--kafka-property expects KEY=VALUE"),
    (["--kafka-property", "bootstrap.servers=other:9092"], "bootstrap.servers (other:9092) differ"),
    (["--kafka-properties", "/nonexistent/client.properties"], "--kafka-properties: cannot read"),
])
def test_bad_command_line_properties_are_usage_errors(argv: list[str], message: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        _options(*argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("key", ["assign", "subscribePattern", "startingOffsets", "endingOffsets",
                                 "kafka.bootstrap.servers"])
def test_options_the_run_sets_itself_are_refused(key: str) -> None:
    with pytest.raises(SparkJobError, match=f"'{key}' is set by the run itself"):
        check_kafka_options({key: "x"})


@pytest.mark.parametrize("key", ["kafka.auto.offset.reset", "kafka.value.deserializer", "kafka.enable.auto.commit"])
def test_options_spark_refuses_are_refused(key: str) -> None:
    with pytest.raises(SparkJobError, match=f"'{key}' is not supported by Spark's Kafka source"):
        check_kafka_options({key: "x"})


def test_the_admin_client_gets_the_kafka_client_properties() -> None:
    options = {"kafka.security.protocol": "SSL", "kafka.ssl.truststore.location": "/ca.pem",
               "kafka.max.poll.records": "100", "minPartitions": "4", "failOnDataLoss": "false"}
    check_kafka_options(options)
    assert client_properties(options) == {"security.protocol": "SSL", "ssl.truststore.location": "/ca.pem",
                                          "max.poll.records": "100"}


def test_a_java_error_is_told_by_its_first_exception_and_its_root_cause() -> None:
    from spark_jobs.kafka_source import _first_line

    text = ("An error occurred while calling z:org.apache.kafka.clients.admin.Admin.create.\n"
            ": org.apache.kafka.common.KafkaException: Failed to create new KafkaAdminClient\n"
            "\tat org.apache.kafka.clients.admin.KafkaAdminClient.createInternal(KafkaAdminClient.java:551)\n"
            "Caused by: org.apache.kafka.common.config.ConfigException: Invalid value x for configuration y\n"
            "\t... 12 more\n")
    assert _first_line(text) == ("org.apache.kafka.common.KafkaException: Failed to create new KafkaAdminClient "
                                 "(caused by org.apache.kafka.common.config.ConfigException: Invalid value x for "
                                 "configuration y)")
    assert _first_line("py4j error\n: java.lang.IllegalStateException: closed\n") == \
        "java.lang.IllegalStateException: closed"

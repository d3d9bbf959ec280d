"""The materialization against a secured Kafka (SASL_SSL with SCRAM-SHA-512, as production clusters run it): the
client properties reach both the run's offset listing (Kafka's Admin client) and Spark's Kafka source."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from connect.config.properties import load_properties
from spark_jobs import jit
from spark_jobs.materialize import MaterializeOptions, main
from stack.pki import PASSWORD
from stack.secure_kafka import SCRAM_MODULE, SCRAM_USERS, SecureKafkaBroker
from tests.integration.spark.workload import produce, stored_table
from tests.integration.support import unique
from tests.unit.spark.support import change_event, json_records, mongo_documents

pytestmark = pytest.mark.integration


def _jaas(password: str) -> str:
    return f'{SCRAM_MODULE} required username="connect" password="{password}";'


def test_a_run_reads_a_sasl_ssl_cluster_with_a_client_properties_file(
        spark: Any, secure_kafka: SecureKafkaBroker, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    topic = unique("secured.")
    docs = [{"_id": n, "name": f"n{n}"} for n in range(5)]
    events = [change_event("insert", "db", "c", doc) for doc in docs]
    events.append(change_event("update", "db", "c", {"_id": 2, "name": "two"}, updated={"name": "two"}))
    events.append(change_event("delete", "db", "c", key=4))
    records = [r for _, r in json_records(events)]  # the delete's tombstone too
    produce(secure_kafka.bootstrap, topic, records)  # through the broker's PLAINTEXT listener
    properties = tmp_path / "client.properties"
    # written as Kafka's tools take them (--command-config): a comment, a continued line, ':' as a separator
    properties.write_text("# the cluster's client settings\n"
                          "security.protocol=SASL_SSL\n"
                          "sasl.mechanism: SCRAM-SHA-512\n"
                          f"sasl.jaas.config={SCRAM_MODULE} required \\\n"
                          f'    username="connect" password="{SCRAM_USERS["connect"]}";\n'
                          "ssl.truststore.type=PEM\n"
                          f"ssl.truststore.location={secure_kafka.pki.ca_pem}\n")
    output = tmp_path / "out"
    secured = secure_kafka.sasl_ssl_bootstrap
    common = ["--bootstrap-servers", secured, "--topics", topic, "--output", str(output), "--master", "local[2]",
              "--kafka-properties", str(properties)]

    # a wrong password fails the run at its first step with one line that does not show the secret
    wrong = "not-" + SCRAM_USERS["connect"]
    assert main([*common, "--kafka-property", f"sasl.jaas.config={_jaas(wrong)}"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: Kafka topic listing failed on {secured}: ") and "\n" not in err, err
    assert "Authentication failed" in err and wrong not in err and PASSWORD not in err

    # an option the run sets itself or Spark refuses is named, not ignored
    assert main([*common, "--kafka-property", "auto.offset.reset=earliest"]) == 2
    assert "'kafka.auto.offset.reset' is not supported" in capsys.readouterr().err

    # the count of records to read that chooses a fresh JVM's JIT compiler (spark_jobs.jit) goes through it too
    options = MaterializeOptions(secured, str(output), topics=(topic,), kafka_options={
        f"kafka.{key}": value for key, value in load_properties(properties).items()})
    assert jit.pending_records(options) == len(records)

    assert main(common) == 0
    assert f"batch 1: {len(records)} records read, 7 change events, 1 tombstones" in capsys.readouterr().out
    expected = [doc for doc in docs if doc["_id"] != 4]
    expected[2] = {"_id": 2, "name": "two"}
    assert stored_table(spark, output, topic) == mongo_documents(expected)

    # the next run lists the offsets through the secured listener again and finds nothing new
    assert main(common) == 0
    assert "batch 1: 0 records read" in capsys.readouterr().out
    assert jit.pending_records(options) == 0

"""Workers configured with exactly the README's SASL/TLS properties (paths, host and secrets substituted) run
the MongoDB connector end to end against a broker with secured listeners: records in Kafka, the connector's
config, offsets and status in the internal topics. A wrong password or an untrusted certificate stops the worker
at once with Kafka's error in one line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import stack as stack_mod
from stack import StackEndpoints
from stack.oauth_server import OAuthServer
from stack.pki import PASSWORD
from stack.secure_kafka import PLAIN_USERS, SCRAM_USERS, SecureKafkaBroker
from stack.worker import ConnectWorker, distributed_properties
from tests.integration.conftest import OAUTH_CLIENTS
from tests.integration.support import Worker, create_connector, read_topic, unique

pytestmark = pytest.mark.integration

README = Path(__file__).resolve().parents[3] / "README.md"


def readme_blocks() -> dict[str, dict[str, str]]:
    """The README's worker-properties blocks of its security section, by mechanism."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### Secured Kafka"):]
    section = section[:section.index("\n### ", 1)]
    blocks: dict[str, dict[str, str]] = {}
    for body in re.findall(r"```properties\n(.*?)```", section, re.S):
        props: dict[str, str] = dict(line.split("=", 1) for line in body.splitlines()
                                     if line and not line.startswith("#"))
        kind = props.get("sasl.mechanism", props["security.protocol"])
        blocks[kind] = props
    assert set(blocks) == {"SCRAM-SHA-512", "SSL", "PLAIN"}, sorted(blocks)
    return blocks


def substituted(props: dict[str, str], bootstrap: str, dirs: dict[str, Path]) -> dict[str, str]:
    out = {}
    for key, value in props.items():
        for mount, real in dirs.items():
            value = value.replace(mount, str(real))
        out[key] = bootstrap if key == "bootstrap.servers" else value
    return out


@pytest.fixture
def mounts(secure_kafka: SecureKafkaBroker, tmp_path: Path) -> dict[str, Path]:
    """The files Strimzi would mount: the user's Secret and the cluster CA's (no trailing new lines)."""
    pki = secure_kafka.pki
    user, ca = tmp_path / "kafka-user", tmp_path / "kafka-ca"
    user.mkdir()
    ca.mkdir()
    (user / "password").write_text(SCRAM_USERS["connect"])
    (user / "user.p12").write_bytes(pki.client_p12.read_bytes())
    (user / "user.jks").write_bytes(pki.client_jks.read_bytes())
    (user / "user.password").write_text(PASSWORD)
    (ca / "ca.p12").write_bytes(pki.truststore_p12.read_bytes())
    (ca / "ca.jks").write_bytes(pki.truststore_jks.read_bytes())
    (ca / "other.p12").write_bytes(pki.other_truststore_p12.read_bytes())
    (ca / "ca.password").write_text(PASSWORD)
    return {"/etc/kafka-user": user, "/etc/kafka-ca": ca}


@pytest.fixture
def secure_worker(tmp_path: Path) -> Iterator[Callable[[dict[str, str]], tuple[Worker, str]]]:
    started: list[ConnectWorker] = []

    def start(props: dict[str, str]) -> tuple[Worker, str]:
        group = f"secure-{uuid.uuid4().hex[:8]}"
        port = stack_mod.free_port()
        all_props = {**distributed_properties(props["bootstrap.servers"], port, group_id=group), **props}
        process = ConnectWorker(tmp_path / f"worker-{group}", port, all_props)
        started.append(process)
        process.start()
        return Worker(process), group

    yield start
    for process in started:
        process.stop(timeout=20)


def run_end_to_end(worker: Worker, group: str, plain_bootstrap: str, stack: StackEndpoints, mongo: Any) -> None:
    """A MongoDB connector's records reach Kafka; its config, offsets and status are in the internal topics."""
    name, prefix, db = unique("sec-"), unique("sec"), unique("secdb_")
    # written before the connector starts, so its initial snapshot reads them: documents written while the snapshot
    # begins may come twice, once read by it and once streamed (Debezium's at-least-once snapshot boundary: seen
    # once as a, a, b, b in a fresh clone's make test)
    mongo[db].c.insert_many([{"_id": 1, "v": "a"}, {"_id": 2, "v": "b"}])
    create_connector(worker, name, {"connector.class": "MongoDbConnector", "mongodb.connection.string":
                                    stack.mongo_uri, "topic.prefix": prefix, "collection.include.list": f"{db}.c"})
    records = read_topic(plain_bootstrap, f"{prefix}.{db}.c", 2)
    payloads = [json.loads(r.value)["payload"] for r in records]
    assert sorted(json.loads(p["after"])["v"] for p in payloads) == ["a", "b"] and {p["op"] for p in payloads} == {"r"}
    configs = read_topic(plain_bootstrap, f"{group}-configs", until=lambda rs: any(
        r.key == f"connector-{name}".encode() for r in rs))
    assert configs
    read_topic(plain_bootstrap, f"{group}-status", until=lambda rs: any(
        r.key == f"status-task-{name}-0".encode() and b"RUNNING" in (r.value or b"") for r in rs))
    read_topic(plain_bootstrap, f"{group}-offsets", until=lambda rs: any(
        name.encode() in (r.key or b"") for r in rs), timeout=60)


@pytest.mark.parametrize("library", ["librdkafka", "kafka-python"])
def test_scram_sha_512_over_tls_with_a_pkcs12_truststore(library: str, secure_kafka: SecureKafkaBroker,
                                                          mounts: dict[str, Path], secure_worker: Any,
                                                          stack: StackEndpoints, mongo: Any) -> None:
    props = substituted(readme_blocks()["SCRAM-SHA-512"], secure_kafka.sasl_ssl_bootstrap, mounts)
    worker, group = secure_worker({**props, "producer.client.library": library})
    run_end_to_end(worker, group, secure_kafka.bootstrap, stack, mongo)
    log = worker.process.log_path.read_text(errors="replace")
    assert SCRAM_USERS["connect"] not in log and PASSWORD not in log, "secrets never logged"


@pytest.mark.parametrize("store", ["PKCS12", "JKS"])
def test_mutual_tls(store: str, secure_kafka: SecureKafkaBroker, mounts: dict[str, Path], secure_worker: Any,
                    stack: StackEndpoints, mongo: Any) -> None:
    props = substituted(readme_blocks()["SSL"], secure_kafka.ssl_bootstrap, mounts)
    if store == "JKS":  # the same user and CA, as Java key stores
        props = {k: v.replace("PKCS12", "JKS").replace(".p12", ".jks") for k, v in props.items()}
    worker, group = secure_worker(props)
    run_end_to_end(worker, group, secure_kafka.bootstrap, stack, mongo)


@pytest.mark.parametrize("protocol", ["SASL_SSL", "SASL_PLAINTEXT"])
def test_sasl_plain(protocol: str, secure_kafka: SecureKafkaBroker, mounts: dict[str, Path], secure_worker: Any,
                    stack: StackEndpoints, mongo: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAFKA_API_KEY", "alice")
    monkeypatch.setenv("KAFKA_API_SECRET", PLAIN_USERS["alice"])
    # Confluent Cloud's CAs are public ones: here the test CA stands in as the system's trusted CAs
    monkeypatch.setenv("SSL_CERT_FILE", str(secure_kafka.pki.ca_pem))
    bootstrap = secure_kafka.sasl_ssl_bootstrap if protocol == "SASL_SSL" else secure_kafka.sasl_plaintext_bootstrap
    props = substituted(readme_blocks()["PLAIN"], bootstrap, mounts)
    props = {k: v.replace("SASL_SSL", protocol) for k, v in props.items()}
    worker, group = secure_worker(props)
    run_end_to_end(worker, group, secure_kafka.bootstrap, stack, mongo)


def test_oauthbearer_unsecured_tokens(secure_kafka: SecureKafkaBroker, secure_worker: Any, stack: StackEndpoints,
                                      mongo: Any) -> None:
    security = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
                "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
                                    'unsecuredLoginStringClaim_sub="connect";'}
    props = {"bootstrap.servers": secure_kafka.sasl_plaintext_bootstrap, **security,
             **{f"producer.{k}": v for k, v in security.items()}}
    worker, group = secure_worker(props)
    run_end_to_end(worker, group, secure_kafka.bootstrap, stack, mongo)


def run_failing_worker(props: dict[str, str], tmp_path: Path) -> tuple[int, str]:
    port = stack_mod.free_port()
    path = tmp_path / "worker.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in {
        **distributed_properties(props["bootstrap.servers"], port, group_id=unique("fail-")), **props}.items()))
    result = subprocess.run([sys.executable, "-m", "connect", "distributed", str(path)], capture_output=True,
                            text=True, timeout=90, check=False)
    return result.returncode, result.stdout + result.stderr


def test_a_wrong_password_stops_the_worker_at_once(secure_kafka: SecureKafkaBroker, mounts: dict[str, Path],
                                                    tmp_path: Path) -> None:
    (mounts["/etc/kafka-user"] / "password").write_text("not-the-password")
    props = substituted(readme_blocks()["SCRAM-SHA-512"], secure_kafka.sasl_ssl_bootstrap, mounts)
    code, output = run_failing_worker(props, tmp_path)
    errors = [line for line in output.splitlines() if "Stopping due to error" in line]
    assert code != 0 and len(errors) == 1, output[-3000:]
    assert "Cannot reach Kafka at" in errors[0] and "Authentication failed" in errors[0], errors[0]
    assert "not-the-password" not in output


def test_an_untrusted_certificate_stops_the_worker_at_once(secure_kafka: SecureKafkaBroker,
                                                           mounts: dict[str, Path], tmp_path: Path) -> None:
    props = substituted(readme_blocks()["SSL"], secure_kafka.ssl_bootstrap, mounts)
    props = {k: v.replace("ca.p12", "other.p12") for k, v in props.items()}
    code, output = run_failing_worker(props, tmp_path)
    errors = [line for line in output.splitlines() if "Stopping due to error" in line]
    assert code != 0 and len(errors) == 1, output[-3000:]
    assert "CERTIFICATE_VERIFY_FAILED" in errors[0], errors[0]


def test_ssl_settings_with_a_plaintext_protocol_stop_the_worker(secure_kafka: SecureKafkaBroker,
                                                                mounts: dict[str, Path], tmp_path: Path) -> None:
    props = substituted(readme_blocks()["SSL"], secure_kafka.bootstrap, mounts)
    props["security.protocol"] = "PLAINTEXT"
    code, output = run_failing_worker(props, tmp_path)
    errors = [line for line in output.splitlines() if "Stopping due to error" in line]
    assert code != 0 and len(errors) == 1 and "ssl.keystore.location" in errors[0], output[-3000:]
    assert PASSWORD not in output


def _oauth_client_credentials(oauth_server: OAuthServer, secret: str) -> dict[str, str]:
    return {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
            "sasl.login.callback.handler.class":
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
            "sasl.oauthbearer.token.endpoint.url": oauth_server.token_url,
            "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
                                f'clientId="pyconnect" clientSecret="{secret}" scope="kafka";'}


def test_oauthbearer_client_credentials(secure_kafka: SecureKafkaBroker, oauth_server: OAuthServer,
                                        secure_worker: Any, stack: StackEndpoints, mongo: Any) -> None:
    """Tokens from an OAuth server, validated by the broker against the server's signing keys."""
    security = _oauth_client_credentials(oauth_server, OAUTH_CLIENTS["pyconnect"])
    props = {"bootstrap.servers": secure_kafka.oauth_bootstrap, **security,
             **{f"producer.{k}": v for k, v in security.items()}}
    issued = len(oauth_server.issued)
    worker, group = secure_worker(props)
    run_end_to_end(worker, group, secure_kafka.bootstrap, stack, mongo)
    assert len(oauth_server.issued) > issued


def test_a_refused_oauth_client_stops_the_worker_at_once(secure_kafka: SecureKafkaBroker,
                                                         oauth_server: OAuthServer, tmp_path: Path) -> None:
    props = {"bootstrap.servers": secure_kafka.oauth_bootstrap, **_oauth_client_credentials(oauth_server, "wrong")}
    code, output = run_failing_worker(props, tmp_path)
    errors = [line for line in output.splitlines() if "Stopping due to error" in line]
    assert code != 0 and len(errors) == 1 and "401" in errors[0], output[-3000:]

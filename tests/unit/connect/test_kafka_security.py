"""Java client security settings turned into kafka-python arguments: SASL credentials from ``sasl.jaas.config``,
trust and key stores (PEM, PKCS12, JKS) read in memory, and every setting that cannot be applied either warned about
once or refused."""

from __future__ import annotations

import base64
import json
import logging
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer

from connect.api.errors import ConfigError
from connect.kafka_clients import jks, librdkafka, oauth, settings
from connect.kafka_clients.settings import client_kwargs
from connect.kafka_clients.tls import key_material, ssl_context, trusted_certificates
from stack.pki import PASSWORD, Pki, make_pki

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTH = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
SECRET = "s3cr3t-never-logged"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def kwargs(props: dict[str, Any], known: dict[str, Any] = KafkaProducer.DEFAULT_CONFIG) -> dict[str, Any]:
    return client_kwargs({"bootstrap.servers": "k:9092", **props}, known)


def refused(props: dict[str, Any]) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        kwargs(props)
    assert SECRET not in str(caught.value)
    return caught.value


# --- SASL ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("mechanism", "module"), [
    ("PLAIN", PLAIN), ("SCRAM-SHA-256", SCRAM), ("SCRAM-SHA-512", SCRAM), ("scram-sha-512", SCRAM)])
def test_sasl_credentials_come_from_the_jaas_config(mechanism: str, module: str) -> None:
    got = kwargs({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism,
                  "sasl.jaas.config": f'{module} required username="alice" password="{SECRET}";'})
    assert got["security_protocol"] == "SASL_PLAINTEXT" and got["sasl_mechanism"] == mechanism.upper()
    assert (got["sasl_plain_username"], got["sasl_plain_password"]) == ("alice", SECRET)
    assert "ssl_context" not in got


def test_plaintext_is_the_default() -> None:
    got = kwargs({"client.id": "c"})
    assert got["security_protocol"] == "PLAINTEXT" and got["client_id"] == "c"
    assert not any(k.startswith(("sasl_", "ssl_")) for k in got)


@pytest.mark.parametrize(("props", "key", "reason"), [
    ({"security.protocol": "SASL_TLS"}, "security.protocol", "supported: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"),
    ({"security.protocol": "SASL_SSL", "sasl.jaas.config": f'{PLAIN} required username="a" password="{SECRET}";'},
     "sasl.mechanism", "GSSAPI is Kafka's default"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI"}, "sasl.mechanism", "supported: PLAIN"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "AWS_MSK_IAM"}, "sasl.mechanism", "supported: PLAIN"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}, "sasl.jaas.config", "needs sasl.jaas.config"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
      "sasl.jaas.config": f'{PLAIN} required username="a" password="{SECRET}"'}, "sasl.jaas.config",
     "not terminated by semi-colon"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
      "sasl.jaas.config": f'{PLAIN} required password="{SECRET}";'}, "sasl.jaas.config", "username and password"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
      "sasl.jaas.config": f'com.example.Kerberos required password="{SECRET}";'}, "sasl.jaas.config",
     "does not provide PLAIN credentials"),
    ({"sasl.mechanism": "PLAIN", "sasl.jaas.config": f'{PLAIN} required username="a" password="{SECRET}";'},
     "sasl.jaas.config", "does not use SASL"),
    ({"security.protocol": "SSL", "sasl.jaas.config": f'{PLAIN} required username="a" password="{SECRET}";'},
     "sasl.jaas.config", "does not use SASL"),
    ({"ssl.truststore.location": "/x.jks"}, "ssl.truststore.location", "does not use TLS"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "ssl.keystore.password": SECRET,
      "sasl.jaas.config": f'{PLAIN} required username="a" password="{SECRET}";'}, "ssl.keystore.password",
     "does not use TLS"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.client.callback.handler.class": "x.Y",
      "sasl.jaas.config": f'{PLAIN} required username="a" password="{SECRET}";'},
     "sasl.client.callback.handler.class", "cannot be applied"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.login.callback.handler.class": "x.Y",
      "sasl.jaas.config": f'{PLAIN} required username="a" password="{SECRET}";'},
     "sasl.login.callback.handler.class", "cannot run here with PLAIN"),
    ({"compression.type": "brotli"}, "compression.type", "supported: none, gzip, snappy, lz4, zstd"),
    ({"partitioner.class": "org.apache.kafka.clients.producer.RoundRobinPartitioner"}, "partitioner.class",
     "default partitioner"),
])
def test_refused_with_the_key_named(props: dict[str, Any], key: str, reason: str) -> None:
    error = refused(props)
    assert error.name == key and reason in error.reason, str(error)


def test_an_ssl_setting_without_a_value_or_an_inert_one_is_fine_with_plaintext() -> None:
    assert kwargs({"ssl.endpoint.identification.algorithm": "https", "ssl.truststore.location": ""})


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd", "ZSTD"])
def test_every_compression_codec_is_installed(codec: str) -> None:
    assert kwargs({"compression.type": codec})["compression_type"] == (None if codec == "none" else codec.lower())


def test_unknown_settings_are_warned_about_once_and_shared_ones_left_to_their_client(
        caplog: pytest.LogCaptureFixture) -> None:
    settings._warned.clear()
    caplog.set_level(logging.DEBUG, logger="connect.kafka_clients.settings")
    props = {"buffer.memory": "1000", "sasl.login.refresh.window.factor": "0.8", "metric.reporters": "a.B",
             "acks": "all", "auto.offset.reset": "earliest"}
    producer = kwargs(props)
    consumer = kwargs(props, KafkaConsumer.DEFAULT_CONFIG)
    kwargs(props, KafkaAdminClient.DEFAULT_CONFIG)
    assert producer["acks"] == "all" and "auto_offset_reset" not in producer
    assert consumer["auto_offset_reset"] == "earliest" and "acks" not in consumer
    warned = [r.getMessage() for r in caplog.records]
    assert all(r.levelno == logging.WARNING for r in caplog.records)
    assert sorted(m.split()[3] for m in warned) == ["buffer.memory", "metric.reporters",
                                                    "sasl.login.refresh.window.factor"], warned


def test_sasl_tuning_keys_are_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    settings._warned.clear()
    caplog.set_level(logging.WARNING, logger="connect.kafka_clients.settings")
    kwargs({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
            "sasl.login.refresh.window.factor": "0.8",
            "sasl.jaas.config": f'{PLAIN} required username="a" password="{SECRET}";'})
    assert [r.getMessage().split()[3] for r in caplog.records] == ["sasl.login.refresh.window.factor"]
    assert SECRET not in caplog.text


# --- TLS -----------------------------------------------------------------------------------------------------

def _subjects(certs: Any) -> list[str]:
    return [c.subject.rfc4514_string() for c in certs]


@pytest.mark.parametrize("store", ["pem", "p12", "jks", "jks-as-pkcs12", "p12-as-jks", "inline"])
def test_truststores(pki: Pki, store: str) -> None:
    props = {
        "pem": {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.ca_pem)},
        "p12": {"ssl.truststore.type": "PKCS12", "ssl.truststore.location": str(pki.truststore_p12),
                "ssl.truststore.password": PASSWORD},
        "jks": {"ssl.truststore.location": str(pki.truststore_jks), "ssl.truststore.password": PASSWORD},
        # Java tells the two apart by their first bytes, whatever the type says
        "jks-as-pkcs12": {"ssl.truststore.type": "PKCS12", "ssl.truststore.location": str(pki.truststore_jks)},
        "p12-as-jks": {"ssl.truststore.location": str(pki.truststore_p12), "ssl.truststore.password": PASSWORD},
        "inline": {"ssl.truststore.type": "PEM", "ssl.truststore.certificates": pki.ca_pem.read_text()},
    }[store]
    assert _subjects(trusted_certificates(props)) == ["CN=ca"]
    context = kwargs({"security.protocol": "SSL", **props})["ssl_context"]
    assert isinstance(context, ssl.SSLContext) and context.check_hostname
    assert [c["subject"] for c in context.get_ca_certs()] == [((("commonName", "ca"),),)]


@pytest.mark.parametrize("store", ["pem", "pem-encrypted", "p12", "jks", "inline"])
def test_keystores(pki: Pki, store: str) -> None:
    pem = pki.client_key_pem.read_text() + pki.client_cert_pem.read_text()
    encrypted = pki.dir / "client-encrypted-bundle.pem"
    encrypted.write_text(pki.client_key_encrypted_pem.read_text() + pki.client_cert_pem.read_text())
    bundle = pki.dir / "client-bundle.pem"
    bundle.write_text(pem)
    props = {
        "pem": {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(bundle)},
        "pem-encrypted": {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(encrypted),
                          "ssl.key.password": PASSWORD},
        "p12": {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(pki.client_p12),
                "ssl.keystore.password": PASSWORD},
        "jks": {"ssl.keystore.location": str(pki.client_jks), "ssl.keystore.password": PASSWORD,
                "ssl.key.password": PASSWORD},
        "inline": {"ssl.keystore.type": "PEM", "ssl.keystore.key": pki.client_key_encrypted_pem.read_text(),
                   "ssl.keystore.certificate.chain": pki.client_cert_pem.read_text(), "ssl.key.password": PASSWORD},
    }[store]
    material = key_material(props)
    assert material is not None and _subjects(material[1])[0] == "CN=client"
    assert ssl_context({**props, "ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.ca_pem)})


@pytest.mark.parametrize(("props", "key", "reason"), [
    ({"ssl.truststore.location": "/nonexistent/ts.jks"}, "ssl.truststore.location", "cannot read the store"),
    ({"ssl.truststore.type": "JCEKS", "ssl.truststore.location": "/x"}, "ssl.truststore.type", "JKS, PKCS12, PEM"),
    ({"ssl.keystore.location": "{jks}", "ssl.keystore.password": SECRET}, "ssl.keystore.location",
     "tampered with, or password was incorrect"),
    ({"ssl.keystore.location": "{jks}", "ssl.keystore.password": PASSWORD, "ssl.key.password": SECRET},
     "ssl.keystore.location", "key password is incorrect"),
    ({"ssl.keystore.type": "PKCS12", "ssl.keystore.location": "{p12}", "ssl.keystore.password": SECRET},
     "ssl.keystore.location", "wrong password"),
    ({"ssl.keystore.type": "PEM", "ssl.keystore.location": "{encrypted_key}"}, "ssl.keystore.location",
     "needs ssl.key.password"),
    ({"ssl.keystore.type": "PEM", "ssl.keystore.key": "{inline_key}"}, "ssl.keystore.key",
     "set both ssl.keystore.key and ssl.keystore.certificate.chain"),
    ({"ssl.truststore.type": "PEM", "ssl.truststore.location": "{key}"}, "ssl.truststore.location",
     "no readable PEM certificate"),
    ({"ssl.truststore.certificates": "{ca}"}, "ssl.truststore.certificates", "needs ssl.truststore.type=PEM"),
    ({"ssl.enabled.protocols": "SSLv3"}, "ssl.enabled.protocols", "supported"),
    ({"ssl.endpoint.identification.algorithm": "ldap"}, "ssl.endpoint.identification.algorithm", "https or empty"),
    ({"ssl.cipher.suites": "TLS_AES_128_GCM_SHA256"}, "ssl.cipher.suites", "cannot be applied"),
])
def test_stores_that_cannot_be_read_fail_with_the_key_named(pki: Pki, props: dict[str, str], key: str,
                                                            reason: str) -> None:
    paths = {"jks": str(pki.client_jks), "p12": str(pki.client_p12), "encrypted_key": str(pki.client_key_encrypted_pem),
             "inline_key": pki.client_key_pem.read_text(), "key": str(pki.client_key_pem), "ca": pki.ca_pem.read_text()}
    props = {k: v.format(**paths) if v.startswith("{") else v for k, v in props.items()}
    error = refused({"security.protocol": "SSL", **props})
    assert error.name == key and reason in error.reason, str(error)


def test_empty_endpoint_identification_disables_the_host_name_check(pki: Pki) -> None:
    props = {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "ssl.endpoint.identification.algorithm": "",
             "sasl.jaas.config": f'{PLAIN} required username="a" password="b";',
             "ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.ca_pem)}
    context = kwargs(props)["ssl_context"]
    assert not context.check_hostname and context.verify_mode == ssl.CERT_REQUIRED


def test_no_truststore_uses_the_system_certificates() -> None:
    assert kwargs({"security.protocol": "SSL"})["ssl_context"].verify_mode == ssl.CERT_REQUIRED


def test_jks_integrity_is_checked(pki: Pki) -> None:
    data = bytearray(pki.truststore_jks.read_bytes())
    data[40] ^= 1
    with pytest.raises(jks.KeystoreError, match="tampered"):
        jks.load(bytes(data), PASSWORD)
    assert jks.load(pki.truststore_jks.read_bytes(), None).certificates, "no password: no integrity check, as Java"


# --- OAUTHBEARER ---------------------------------------------------------------------------------------------

class _TokenEndpoint(BaseHTTPRequestHandler):
    requests: list[dict[str, Any]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"])).decode()
        type(self).requests.append({"auth": self.headers["Authorization"], "body": body,
                                    "type": self.headers["Content-Type"]})
        reply = json.dumps({"access_token": f"token-{len(self.requests)}", "expires_in": 3600}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture
def token_endpoint() -> Iterator[str]:
    _TokenEndpoint.requests = []
    server = HTTPServer(("127.0.0.1", 0), _TokenEndpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/oauth2/token"
    server.shutdown()
    oauth._providers.clear()


def test_oauthbearer_client_credentials(token_endpoint: str) -> None:
    props = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
             "sasl.login.callback.handler.class": oauth.LOGIN_HANDLERS[0],
             "sasl.oauthbearer.token.endpoint.url": token_endpoint,
             "sasl.jaas.config": f'{OAUTH} required clientId="my client" clientSecret="{SECRET}" '
                                 f'scope="kafka:write" extension_logicalCluster="lkc-1";'}
    provider = kwargs(props)["sasl_oauth_token_provider"]
    assert kwargs(props, KafkaConsumer.DEFAULT_CONFIG)["sasl_oauth_token_provider"] is provider, "shared"
    assert provider.token() == "token-1" and provider.token() == "token-1", "reused until it nears expiry"
    assert provider.extensions() == {"logicalCluster": "lkc-1"}
    (request,) = _TokenEndpoint.requests
    assert request["type"] == "application/x-www-form-urlencoded"
    assert request["body"] == "grant_type=client_credentials&scope=kafka%3Awrite"
    assert base64.b64decode(request["auth"].split()[1]).decode() == f"my%20client:{SECRET}"
    assert SECRET not in repr(provider)


def test_oauthbearer_unsecured_tokens_for_test_clusters() -> None:
    props = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
             "sasl.jaas.config": f'{OAUTH} required unsecuredLoginStringClaim_sub="svc" '
                                 'unsecuredLoginListClaim_scope=",a,b";'}
    token = kwargs(props)["sasl_oauth_token_provider"].token()
    header, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=="))
    assert json.loads(base64.urlsafe_b64decode(header + "==")) == {"alg": "none"} and signature == ""
    assert claims["sub"] == "svc" and claims["scope"] == ["a", "b"] and claims["exp"] > claims["iat"]
    oauth._providers.clear()


def test_oauthbearer_needs_credentials_or_a_subject() -> None:
    error = refused({"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER",
                     "sasl.oauthbearer.token.endpoint.url": "https://idp/token",
                     "sasl.jaas.config": f'{OAUTH} required clientId="x";'})
    assert "clientId and clientSecret" in error.reason
    error = refused({"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER",
                     "sasl.jaas.config": f"{OAUTH} required;"})
    assert "unsecuredLoginStringClaim_sub" in error.reason


def test_secrets_never_reach_an_error(pki: Path) -> None:
    error = refused({"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
                     "sasl.jaas.config": f'{PLAIN} required username="a" password="{SECRET}" oops;'})
    assert "[hidden]" in str(error)


@pytest.fixture
def https_token_endpoint(pki: Pki) -> Iterator[str]:
    _TokenEndpoint.requests = []
    server = HTTPServer(("127.0.0.1", 0), _TokenEndpoint)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(pki.dir / "broker.pem"), str(pki.dir / "broker.key"))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{server.server_address[1]}/token"
    server.shutdown()
    oauth._providers.clear()


def test_an_https_token_endpoint_is_trusted_with_the_clients_truststore(https_token_endpoint: str, pki: Pki) -> None:
    props = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
             "sasl.oauthbearer.token.endpoint.url": https_token_endpoint,
             "sasl.jaas.config": f'{OAUTH} required clientId="c" clientSecret="{SECRET}";'}
    with pytest.raises(ConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
        kwargs(props)["sasl_oauth_token_provider"].token()
    trusted = {**props, "ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.ca_pem)}
    assert kwargs(trusted)["sasl_oauth_token_provider"].token() == "token-1", "ssl.* allowed with SASL_PLAINTEXT"
    assert "BEGIN CERTIFICATE" in librdkafka.security_config(trusted)["https.ca.pem"]


def test_without_sasl_jaas_config_the_static_jaas_files_kafka_client_section_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    jaas_file = tmp_path / "client_jaas.conf"
    jaas_file.write_text(f'KafkaClient {{\n  {SCRAM} required username="carol" password="{SECRET}";\n}};\n')
    monkeypatch.setenv("KAFKA_OPTS", f"-Xmx1g -Djava.security.auth.login.config={jaas_file}")
    props = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256"}
    got = kwargs(props)
    assert (got["sasl_plain_username"], got["sasl_plain_password"]) == ("carol", SECRET)
    assert librdkafka.security_config(props)["sasl.username"] == "carol"
    jaas_file.write_text("Client { x required; };")
    error = refused(props)
    assert error.name == "java.security.auth.login.config" and "no KafkaClient section" in error.reason

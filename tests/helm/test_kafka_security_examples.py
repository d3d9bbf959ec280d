"""helm/examples/values-kafka-*.yaml: one example per Kafka mechanism. Each lints strictly and renders valid
manifests, its secrets stay files (the ConfigMap holds only ${dir:...} placeholders), and the rendered
worker.properties, with the mounted Secrets replaced by test material, are accepted by the worker's Kafka client
translation, for its own clients and for the task producers on both libraries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest

from connect.config.environment import environment_properties
from connect.config.providers import ConfigTransformer
from connect.kafka_clients import oauth
from connect.kafka_clients.librdkafka import security_config
from connect.kafka_clients.settings import client_kwargs
from connect.runtime.worker_config import prefixed
from stack.pki import PASSWORD, Pki, make_pki
from stack.procs import REPO_ROOT
from tests.helm.conftest import KUBE_VERSION, Helm, find

EXAMPLES = sorted((REPO_ROOT / "helm" / "examples").glob("values-kafka-*.yaml"))
MECHANISMS = {"values-kafka-scram-tls.yaml": ("SASL_SSL", "SCRAM-SHA-512"), "values-kafka-mtls.yaml": ("SSL", None),
              "values-kafka-sasl-plain.yaml": ("SASL_SSL", "PLAIN"),
              "values-kafka-oauthbearer.yaml": ("SASL_SSL", "OAUTHBEARER")}


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def test_one_example_per_mechanism() -> None:
    assert [p.name for p in EXAMPLES] == sorted(MECHANISMS)


def _mounted(pki: Pki, root: Path) -> Path:
    """What the examples' Secrets hold, as Strimzi, Confluent and an OAuth provider would put it."""
    files = {"kafka-user/password": "connect-secret", "kafka-user/user.crt": pki.client_cert_pem.read_text(),
             "kafka-user/user.key": pki.client_key_pem.read_text(), "cluster-ca/ca.crt": pki.ca_pem.read_text(),
             "cluster-ca/ca.password": PASSWORD, "confluent/key": "API-KEY", "confluent/secret": "api-secret",
             "oauth/client-secret": "0auth-s3cret-value"}
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content)
    return root


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example(helm: Helm, example: Path, pki: Pki, tmp_path: Path) -> None:
    report = helm.lint(example)
    assert report["errors"] == [], report["messages"]
    manifests = helm.template(example)
    for manifest in manifests:
        if not manifest["apiVersion"].startswith("monitoring.coreos.com/"):
            kubernetes_validate.validate(manifest, KUBE_VERSION, strict=True)
    data = find(manifests, "ConfigMap")["data"]
    for secret in ("connect-secret", "api-secret", "0auth-s3cret-value", "BEGIN"):
        assert secret not in str(data)
    mounts = _mounted(pki, tmp_path)
    props = {key: value.replace("/etc/pyconnect/secrets", str(mounts))
             for key, value in environment_properties(data).items()}
    resolved = ConfigTransformer(props).transform(props)
    protocol, mechanism = MECHANISMS[example.name]
    try:
        for settings in ({k: v for k, v in resolved.items() if k.startswith(("security.", "sasl.", "ssl."))},
                         prefixed(resolved, "producer.")):
            kwargs: dict[str, Any] = client_kwargs(settings, {})
            assert kwargs["security_protocol"] == protocol and kwargs.get("sasl_mechanism") == mechanism
            if mechanism in ("PLAIN", "SCRAM-SHA-512"):
                assert kwargs["sasl_plain_password"] in ("connect-secret", "api-secret")
            rdkafka = security_config(settings)
            assert rdkafka["security.protocol"] == protocol
            if protocol == "SSL":
                assert "BEGIN CERTIFICATE" in rdkafka["ssl.certificate.pem"] and "ssl.key.pem" in rdkafka
    finally:
        oauth._providers.clear()

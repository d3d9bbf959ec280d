"""Worker-to-worker requests over https: the TLS context comes from the REST listener's settings."""

from __future__ import annotations

import ssl

import pytest

from connect.api.errors import ConfigError
from connect.distributed.forwarding import client_tls
from stack.pki import PASSWORD, Pki, make_pki


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def test_http_listeners_need_none() -> None:
    assert client_tls({"listeners": "http://0.0.0.0:8083", "ssl.truststore.location": "/x.pem"}) is None


def test_the_listener_truststore_is_trusted_pem_by_default(pki: Pki) -> None:
    context = client_tls({"listeners": "https://0.0.0.0:8443",
                          "listeners.https.ssl.truststore.location": str(pki.ca_pem),
                          "ssl.truststore.location": "/ignored/when/the/listener/has/one.pem"})
    assert context is not None and context.check_hostname and context.verify_mode == ssl.CERT_REQUIRED
    assert [c["subject"] for c in context.get_ca_certs()] == [((("commonName", "ca"),),)]


def test_top_level_settings_and_other_store_types(pki: Pki) -> None:
    context = client_tls({"listeners": "https://0.0.0.0:8443", "ssl.truststore.type": "JKS",
                          "ssl.truststore.location": str(pki.truststore_jks), "ssl.truststore.password": PASSWORD,
                          "ssl.endpoint.identification.algorithm": ""})
    assert context is not None and not context.check_hostname


def test_the_keystore_is_presented_only_when_peers_ask_for_client_certificates(pki: Pki) -> None:
    base = {"listeners": "https://0.0.0.0:8443", "listeners.https.ssl.truststore.location": str(pki.ca_pem),
            "listeners.https.ssl.keystore.location": "/nonexistent/keystore.pem"}
    assert client_tls(base) is not None, "no client auth: the (unreadable) keystore is not read"
    with pytest.raises(ConfigError, match=r"ssl\.keystore\.location"):
        client_tls({**base, "listeners.https.ssl.client.auth": "required"})
    assert client_tls({**base, "listeners.https.ssl.client.auth": "required", "listeners.https.ssl.keystore.type":
                       "PKCS12", "listeners.https.ssl.keystore.location": str(pki.client_p12),
                       "listeners.https.ssl.keystore.password": PASSWORD}) is not None

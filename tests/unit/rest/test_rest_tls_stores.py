"""The https REST listener reads PKCS12 and JKS key and trust stores too, in memory (uvicorn gets a memory-backed
PEM file and a one-time key password)."""

from __future__ import annotations

import ssl

import pytest

from rest.security import tls_settings
from stack.pki import PASSWORD, Pki, make_pki


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.mark.parametrize("kind", ["PKCS12", "JKS"])
def test_binary_keystores_and_truststores(pki: Pki, kind: str) -> None:
    keystore, truststore = (pki.client_p12, pki.truststore_p12) if kind == "PKCS12" else (pki.client_jks,
                                                                                          pki.truststore_jks)
    settings = tls_settings({"listeners.https.ssl.keystore.type": kind,
                             "listeners.https.ssl.keystore.location": str(keystore),
                             "listeners.https.ssl.keystore.password": PASSWORD,
                             "listeners.https.ssl.truststore.type": kind,
                             "listeners.https.ssl.truststore.location": str(truststore),
                             "listeners.https.ssl.truststore.password": PASSWORD,
                             "listeners.https.ssl.client.auth": "required"}, "https")
    assert settings is not None and settings.cert_reqs == ssl.CERT_REQUIRED
    assert settings.password and settings.password != PASSWORD, "a one-time password for the in-memory key"
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(settings.certfile, password=settings.password)
    assert settings.ca_certs is not None
    server.load_verify_locations(settings.ca_certs)
    assert [c["subject"] for c in server.get_ca_certs()] == [((("commonName", "ca"),),)]


def test_pem_stays_a_path(pki: Pki) -> None:
    settings = tls_settings({"ssl.keystore.location": str(pki.client_cert_pem), "ssl.truststore.location":
                             str(pki.ca_pem)}, "https")
    assert settings is not None and settings.certfile == str(pki.client_cert_pem)
    assert settings.ca_certs == str(pki.ca_pem)

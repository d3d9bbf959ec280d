"""REST listener security configured like Connect's: HTTPS from ``listeners=https://...`` with the keystore
settings (PEM files), and HTTP basic authentication as ``BasicAuthSecurityRestExtension`` does it (a JAAS file
naming a properties file of ``user: password`` lines).

* HTTPS: ``listeners.https.ssl.keystore.location`` (or ``ssl.keystore.location``) is a PEM file holding the
  certificate chain and the private key (``ssl.keystore.type=PEM``, the default here), or a PKCS12 or JKS store
  (read in memory); ``ssl.key.password`` decrypts the key; ``ssl.client.auth=required|requested`` with
  ``ssl.truststore.location`` (a PEM CA bundle, or a PKCS12/JKS truststore) checks clients.
* Basic auth: ``rest.extension.classes`` lists
  ``org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension``; the JAAS file comes from
  ``-Djava.security.auth.login.config=...`` in ``KAFKA_OPTS`` (as Kafka's scripts pass it) or
  ``CONNECT_JAAS_CONFIG``; its ``KafkaConnect`` entry's ``file="..."`` is the credentials file.
"""

from __future__ import annotations

import os
import re
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from connect.api.errors import ConfigError
from connect.config.properties import load_properties
from connect.kafka_clients import tls

_STORE_KEYS = ("ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
               "ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password")
BASIC_AUTH_EXTENSION = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"


@dataclass(frozen=True)
class TlsSettings:
    """What uvicorn needs to serve HTTPS."""

    certfile: str
    password: str | None
    ca_certs: str | None
    cert_reqs: int

    def uvicorn_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``uvicorn.Config``."""
        return {"ssl_certfile": self.certfile, "ssl_keyfile_password": self.password,
                "ssl_ca_certs": self.ca_certs, "ssl_cert_reqs": self.cert_reqs}


def tls_settings(props: Mapping[str, str], scheme: str) -> TlsSettings | None:
    """TLS settings when the first listener is ``https``."""
    if scheme != "https":
        return None

    def setting(key: str) -> str | None:
        return props.get(f"listeners.https.{key}") or props.get(key)

    location = setting("ssl.keystore.location")
    if not location:
        raise ConfigError("listeners.https.ssl.keystore.location", None,
                          "an https listener needs a PEM keystore (certificate chain and private key)")
    kind = (setting("ssl.keystore.type") or "PEM").upper()
    password = setting("ssl.key.password") or setting("ssl.keystore.password")
    stores = {key: value for key in _STORE_KEYS if (value := setting(key))}
    if kind != "PEM":  # JKS or PKCS12: read in memory, handed to uvicorn as a memory-backed PEM file
        material = tls.key_material(stores)
        assert material is not None
        pem, password = tls.pem_key_and_chain(*material)
        location = tls.lasting_memory_file(pem)
    ca_certs = setting("ssl.truststore.location")
    if ca_certs and (setting("ssl.truststore.type") or "PEM").upper() != "PEM":
        ca_certs = tls.lasting_memory_file(tls.pem_certificates(tls.trusted_certificates(stores) or []))
    client_auth = (setting("ssl.client.auth") or "none").lower()
    reqs = {"required": ssl.CERT_REQUIRED, "requested": ssl.CERT_OPTIONAL}.get(client_auth, ssl.CERT_NONE)
    return TlsSettings(location, password, ca_certs, reqs)


def _jaas_path(env: Mapping[str, str]) -> str | None:
    if env.get("CONNECT_JAAS_CONFIG"):
        return env["CONNECT_JAAS_CONFIG"]
    match = re.search(r"-Djava\.security\.auth\.login\.config=(\S+)", env.get("KAFKA_OPTS", ""))
    return match.group(1) if match else None


def basic_auth_credentials(props: Mapping[str, str], env: Mapping[str, str] | None = None) -> dict[str, str] | None:
    """``{user: password}`` when the basic-auth extension is configured, else None."""
    extensions = [e.strip() for e in props.get("rest.extension.classes", "").split(",")]
    if BASIC_AUTH_EXTENSION not in extensions:
        return None
    jaas = _jaas_path(os.environ if env is None else env)
    if not jaas:
        raise ConfigError("rest.extension.classes", BASIC_AUTH_EXTENSION,
                          "basic auth needs a JAAS file: -Djava.security.auth.login.config=... in KAFKA_OPTS "
                          "or CONNECT_JAAS_CONFIG")
    text = Path(jaas).read_text(encoding="utf-8")
    entry = re.search(r"KafkaConnect\s*\{(.*?)\}\s*;", text, re.DOTALL)
    found = re.search(r'file\s*=\s*"([^"]+)"', entry.group(1) if entry else "")
    if not found:
        raise ConfigError("java.security.auth.login.config", jaas,
                          'the KafkaConnect entry needs file="<credentials properties>"')
    users = load_properties(found.group(1))
    return {user: value.split(",")[0].strip() for user, value in users.items()}

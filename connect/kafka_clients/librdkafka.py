"""The same Java security settings for librdkafka (the task producers' client): checked exactly as for
kafka-python (:func:`connect.kafka_clients.settings.security_kwargs`), then written as librdkafka's own keys:
``sasl.username``/``sasl.password`` from ``sasl.jaas.config``, OAUTHBEARER as librdkafka's ``oidc`` method (or
its unsecured JWT for test clusters), and every trust or key store (PEM, PKCS12, JKS) as inline PEM
(``ssl.ca.pem``, ``ssl.certificate.pem``, ``ssl.key.pem``), so no store needs converting on disk."""

from __future__ import annotations

import secrets
import ssl
from collections.abc import Mapping
from typing import Any

from cryptography.hazmat.primitives import serialization

from connect.kafka_clients import jaas, oauth, tls
from connect.kafka_clients.settings import jaas_config, security_kwargs


def security_config(settings: Mapping[str, Any]) -> dict[str, str]:
    """librdkafka settings for ``security.protocol``, ``sasl.*`` and ``ssl.*``; raises ``ConfigError`` as the
    kafka-python translation does."""
    checked = security_kwargs(settings)
    protocol: str = checked["security_protocol"]
    config = {"security.protocol": protocol}
    if protocol.startswith("SASL"):
        mechanism: str = checked["sasl_mechanism"]
        config["sasl.mechanism"] = mechanism
        if mechanism == "OAUTHBEARER":
            config.update(_oauthbearer(settings))
        else:
            config["sasl.username"] = checked["sasl_plain_username"]
            config["sasl.password"] = checked["sasl_plain_password"]
    if protocol.endswith("SSL"):
        config.update(_tls(settings))
    return config


def _oauthbearer(settings: Mapping[str, Any]) -> dict[str, str]:
    options = jaas.parse_client(jaas_config(settings)).options
    extensions = ",".join(f"{k[len('extension_'):]}={v}" for k, v in options.items() if k.startswith("extension_"))
    url = str(settings.get("sasl.oauthbearer.token.endpoint.url") or "")
    handler = str(settings.get("sasl.login.callback.handler.class") or "")
    if url and handler != oauth.UNSECURED_HANDLER:
        config = {
            "sasl.oauthbearer.method": "oidc",
            "sasl.oauthbearer.token.endpoint.url": url,
            "sasl.oauthbearer.client.id": str(options.get("clientId")
                                              or settings.get("sasl.oauthbearer.client.credentials.client.id")),
            "sasl.oauthbearer.client.secret": str(options.get("clientSecret") or
                                                  settings.get("sasl.oauthbearer.client.credentials.client.secret")),
        }
        scope = options.get("scope") or settings.get("sasl.oauthbearer.scope")
        if scope:
            config["sasl.oauthbearer.scope"] = str(scope)
        trusted = tls.trusted_certificates(settings) if url.lower().startswith("https:") else None
        if trusted is not None:  # the token endpoint's TLS trusts the client's truststore, as in Kafka
            config["https.ca.pem"] = tls.pem_certificates(trusted).decode()
    else:
        claims = [f"principal={options['unsecuredLoginStringClaim_sub']}"]
        if options.get("unsecuredLoginLifetimeSeconds"):
            claims.append(f"lifeSeconds={options['unsecuredLoginLifetimeSeconds']}")
        scope_list = options.get("unsecuredLoginListClaim_scope")
        if scope_list:
            claims.append("scope=" + ",".join(s for s in scope_list[1:].split(scope_list[0]) if s))
        config = {"enable.sasl.oauthbearer.unsecure.jwt": "true", "sasl.oauthbearer.config": " ".join(claims)}
    if extensions:
        config["sasl.oauthbearer.extensions"] = extensions
    return config


def _tls(settings: Mapping[str, Any]) -> dict[str, str]:
    algorithm = settings.get("ssl.endpoint.identification.algorithm")
    check = "https" if algorithm is None else str(algorithm).strip().lower()
    config = {"ssl.endpoint.identification.algorithm": "https" if check == "https" else "none"}
    trusted = tls.trusted_certificates(settings)
    if trusted is not None:
        config["ssl.ca.pem"] = "".join(c.public_bytes(serialization.Encoding.PEM).decode() for c in trusted)
    else:  # the system's CAs, as kafka-python and Java use: the wheel's librdkafka looks in its build's own paths
        system = ssl.get_default_verify_paths()
        config["ssl.ca.location"] = system.cafile or system.capath or "probe"
    material = tls.key_material(settings)
    if material is not None:
        private, chain = material
        one_time = secrets.token_urlsafe(24)
        config["ssl.key.pem"] = private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(one_time.encode())).decode()
        config["ssl.key.password"] = one_time
        config["ssl.certificate.pem"] = "".join(c.public_bytes(serialization.Encoding.PEM).decode() for c in chain)
    return config

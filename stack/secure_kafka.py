"""A broker with secured listeners, started on demand by the security tests (the default stack stays PLAINTEXT):

* ``SASL_PLAINTEXT`` with PLAIN (users in the listener's JAAS config) and OAUTHBEARER (Kafka's unsecured
  validator, for unsigned test tokens);
* ``SASL_SSL`` with SCRAM-SHA-512 (credentials written at format time with ``kafka-storage format --add-scram``)
  and PLAIN (as Confluent Cloud);
* ``SSL`` requiring client certificates signed by the test CA (:mod:`stack.pki`);
* with an OAuth server's JWKS URL (:mod:`stack.oauth_server`), ``SASL_PLAINTEXT`` with OAUTHBEARER tokens
  validated against its signing keys.

A PLAINTEXT listener stays for the controller quorum, the readiness probe and the tests' own checks.
"""

from __future__ import annotations

from pathlib import Path

from stack import procs
from stack.kafka import KafkaBroker
from stack.pki import PASSWORD, Pki, make_pki

PLAIN_USERS = {"alice": "alice-secret", "admin": "admin-secret"}
SCRAM_USERS = {"connect": "connect-secret"}
PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"


class SecureKafkaBroker(KafkaBroker):
    """Kafka with SASL_PLAINTEXT, SASL_SSL and SSL listeners next to PLAINTEXT, all on 127.0.0.1."""

    name = "kafka-secure"

    def __init__(self, state_dir: Path, jwks_url: str | None = None) -> None:
        """``jwks_url``: an OAuth server's signing keys, for a SASL_PLAINTEXT listener validating OAUTHBEARER
        tokens as a production broker does (Kafka's ``OAuthBearerValidatorCallbackHandler``)."""
        port, controller, sasl_plain, sasl_ssl, mtls, oauth = procs.free_ports(6)
        super().__init__(state_dir, port, controller)
        self.sasl_plaintext_port, self.sasl_ssl_port, self.ssl_port = sasl_plain, sasl_ssl, mtls
        self.oauth_port = oauth
        self.jwks_url = jwks_url
        self.pki: Pki = make_pki(state_dir / "pki")

    @property
    def oauth_bootstrap(self) -> str:
        return f"127.0.0.1:{self.oauth_port}"

    def command(self) -> list[str]:
        command = super().command()
        if self.jwks_url:  # Kafka 4 fetches only allowed OAuth URLs
            command.insert(1, f"-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls={self.jwks_url}")
        return command

    @property
    def sasl_plaintext_bootstrap(self) -> str:
        return f"127.0.0.1:{self.sasl_plaintext_port}"

    @property
    def sasl_ssl_bootstrap(self) -> str:
        return f"127.0.0.1:{self.sasl_ssl_port}"

    @property
    def ssl_bootstrap(self) -> str:
        return f"127.0.0.1:{self.ssl_port}"

    def extra_properties(self) -> dict[str, str]:
        listeners = {"PLAINTEXT": self.port, "SASLPLAIN": self.sasl_plaintext_port, "SCRAMSSL": self.sasl_ssl_port,
                     "MTLS": self.ssl_port}
        if self.jwks_url:
            listeners["OAUTH"] = self.oauth_port
        advertised = ",".join(f"{name}://127.0.0.1:{port}" for name, port in listeners.items())
        users = " ".join(f'user_{u}="{p}"' for u, p in PLAIN_USERS.items())
        oauth = {
            "listener.name.oauth.sasl.enabled.mechanisms": "OAUTHBEARER",
            "listener.name.oauth.oauthbearer.sasl.jaas.config": f"{OAUTH_MODULE} required;",
            "listener.name.oauth.oauthbearer.sasl.server.callback.handler.class":
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
            "listener.name.oauth.oauthbearer.sasl.oauthbearer.jwks.endpoint.url": str(self.jwks_url),
        } if self.jwks_url else {}
        return {
            **oauth,
            "listeners": f"{advertised},CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": advertised,
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASLPLAIN:SASL_PLAINTEXT,"
                                              "SCRAMSSL:SASL_SSL,MTLS:SSL,OAUTH:SASL_PLAINTEXT",
            "listener.name.saslplain.sasl.enabled.mechanisms": "PLAIN,OAUTHBEARER",
            "listener.name.saslplain.plain.sasl.jaas.config": f'{PLAIN_MODULE} required username="admin" '
                                                              f'password="{PLAIN_USERS["admin"]}" {users};',
            "listener.name.saslplain.oauthbearer.sasl.jaas.config": f"{OAUTH_MODULE} required;",
            "listener.name.scramssl.sasl.enabled.mechanisms": "SCRAM-SHA-512,PLAIN",
            "listener.name.scramssl.scram-sha-512.sasl.jaas.config": f"{SCRAM_MODULE} required;",
            "listener.name.scramssl.plain.sasl.jaas.config": f'{PLAIN_MODULE} required username="admin" '
                                                             f'password="{PLAIN_USERS["admin"]}" {users};',
            "listener.name.mtls.ssl.client.auth": "required",
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.location": str(self.pki.broker_p12),
            "ssl.keystore.password": PASSWORD,
            "ssl.key.password": PASSWORD,
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(self.pki.ca_pem),
        }

    def format_arguments(self) -> list[str]:
        return [arg for user, password in SCRAM_USERS.items()
                for arg in ("--add-scram", f"SCRAM-SHA-512=[name={user},password={password}]")]

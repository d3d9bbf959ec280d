"""The secured broker (SASL_PLAINTEXT, SASL_SSL, SSL listeners), started once for the security tests only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from stack.oauth_server import OAuthServer
from stack.secure_kafka import SecureKafkaBroker

OAUTH_CLIENTS = {"pyconnect": "oauth-client-secret"}


@pytest.fixture(scope="session")
def oauth_server() -> Iterator[OAuthServer]:
    server = OAuthServer(OAUTH_CLIENTS).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def secure_kafka(stack_dir: Path, oauth_server: OAuthServer) -> Iterator[SecureKafkaBroker]:
    broker = SecureKafkaBroker(stack_dir / "secure-kafka", jwks_url=oauth_server.jwks_url)
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()

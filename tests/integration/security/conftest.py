"""The secured broker (SASL_PLAINTEXT, SASL_SSL, SSL listeners), started once for the security tests only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from stack.secure_kafka import SecureKafkaBroker


@pytest.fixture(scope="session")
def secure_kafka(stack_dir: Path) -> Iterator[SecureKafkaBroker]:
    broker = SecureKafkaBroker(stack_dir / "secure-kafka")
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()

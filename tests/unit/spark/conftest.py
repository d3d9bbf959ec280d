"""One local SparkSession (local[2], 2 shuffle partitions) for the whole test session."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.unit.spark.support import spark_session


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    session = spark_session()
    yield session
    session.stop()

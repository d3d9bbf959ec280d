"""Fixtures for the Spark jobs against the real stack: one local SparkSession per test session, with the real
spark-sql-kafka jars (fetched by Maven into .cache/ on first use)."""

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

"""Fixtures for the Spark jobs against the real stack: one local SparkSession per test session, with the real
spark-sql-kafka, Delta Lake and S3A jars (fetched by Maven into .cache/ on first use), and a local S3 endpoint
(moto's server mode) for the ``s3a://`` outputs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stack.s3 import S3Server
from tests.unit.spark.support import spark_session


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    session = spark_session()
    yield session
    session.stop()


@pytest.fixture(scope="session")
def s3_bucket(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``s3a://<bucket>``: a bucket of a moto S3 server on 127.0.0.1, with the session's S3A settings for it."""
    server = S3Server(Path(tmp_path_factory.mktemp("s3")) / "moto.log").start()
    try:
        server.create_bucket("spark-jobs")
        conf = spark._jsc.hadoopConfiguration()
        for key, value in server.hadoop_conf().items():
            conf.set(key, value)
        yield "s3a://spark-jobs"
    finally:
        server.stop()

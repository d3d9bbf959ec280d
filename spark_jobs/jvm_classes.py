"""Java classes the jobs call through py4j, named in one step.

``spark._jvm.org.apache.hadoop.fs.Path`` asks the JVM about each dotted part in turn (one round trip each, and
each package part a failed class lookup on Spark's class loader): ~0.5-2 ms a part on a 2-core machine, paid at
every use. :func:`java_class` names the class without asking: a constructor or static method call is then the
only round trip (a static field, one more)."""

from __future__ import annotations

from typing import Any

from py4j.java_gateway import JavaClass
from pyspark.sql import SparkSession

__all__ = ["java_class"]


def java_class(spark: SparkSession, name: str) -> Any:
    """The Java class ``name`` (fully qualified) of ``spark``'s JVM, for constructor and static calls."""
    jvm = spark._jvm
    assert jvm is not None
    return JavaClass(name, jvm._gateway_client)

"""The jars of Spark's Kafka source (``spark-sql-kafka-0-10``) for the pinned pyspark, fetched once with Maven
into the git-ignored cache and handed to Spark with ``spark.jars`` (no Ivy, no network when a job runs).

``python -m stack.spark`` fetches them and prints the comma-separated list (for ``spark-submit --jars``).
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from stack import maven
from stack.procs import CACHE_DIR, REPO_ROOT, StackError

POM = REPO_ROOT / "spark_jobs" / "pom.xml"
SETTINGS = REPO_ROOT / "spark_jobs" / "maven-settings.xml"


def spark_version() -> str:
    """The Spark version pinned in spark_jobs/pom.xml (the same as the pinned pyspark)."""
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    node = ET.parse(POM).getroot().find("m:properties/m:spark.version", ns)
    if node is None or not (node.text or "").strip():
        raise StackError(f"{POM} has no <spark.version> property")
    return (node.text or "").strip()


def libs_dir() -> Path:
    return CACHE_DIR / f"spark-kafka-{spark_version()}" / "libs"


def _complete(libs: Path) -> bool:
    version = spark_version()
    return (libs / f"spark-sql-kafka-0-10_2.13-{version}.jar").is_file() and \
        (libs / f"spark-token-provider-kafka-0-10_2.13-{version}.jar").is_file() and \
        any(libs.glob("kafka-clients-*.jar"))


def kafka_jars() -> list[str]:
    """Absolute paths of the Kafka source jars, downloaded with Maven on first use."""
    libs = maven.ensure_libs(POM, libs_dir(), _complete, f"Spark {spark_version()} Kafka source", SETTINGS)
    return sorted(str(jar) for jar in libs.glob("*.jar"))


def main() -> int:
    try:
        print(",".join(kafka_jars()))
    except StackError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The jars of Spark's Kafka source (``spark-sql-kafka-0-10``) and of Delta Lake (``delta-spark``) for the pinned
pyspark and delta-spark, fetched once with Maven into the git-ignored cache and handed to Spark with
``spark.jars`` (no Ivy, no network when a job runs).

:func:`job_jars` adds the jar of spark_jobs' own JVM functions (:mod:`stack.spark_java`, compiled once).
``python -m stack.spark`` fetches them and prints the comma-separated list (for ``spark-submit --jars``);
``python -m stack.spark s3`` adds Hadoop's S3A connector and its AWS SDK bundle (for ``s3a://`` outputs).
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from stack import maven
from stack.procs import CACHE_DIR, REPO_ROOT, StackError
from stack.spark_java import functions_jar

POM = REPO_ROOT / "spark_jobs" / "pom.xml"
S3_POM = REPO_ROOT / "spark_jobs" / "s3-pom.xml"
SETTINGS = REPO_ROOT / "spark_jobs" / "maven-settings.xml"


def _property(pom: Path, name: str) -> str:
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    node = ET.parse(pom).getroot().find(f"m:properties/m:{name}", ns)
    if node is None or not (node.text or "").strip():
        raise StackError(f"{pom} has no <{name}> property")
    return (node.text or "").strip()


def spark_version() -> str:
    """The Spark version pinned in spark_jobs/pom.xml (the same as the pinned pyspark)."""
    return _property(POM, "spark.version")


def delta_version() -> str:
    """The Delta Lake version pinned in spark_jobs/pom.xml (the same as the pinned delta-spark)."""
    return _property(POM, "delta.version")


def libs_dir() -> Path:
    return CACHE_DIR / f"spark-{spark_version()}-delta-{delta_version()}" / "libs"


def _complete(libs: Path) -> bool:
    version = spark_version()
    return (libs / f"spark-sql-kafka-0-10_2.13-{version}.jar").is_file() and \
        (libs / f"spark-token-provider-kafka-0-10_2.13-{version}.jar").is_file() and \
        any(libs.glob("kafka-clients-*.jar")) and \
        (libs / f"delta-spark_2.13-{delta_version()}.jar").is_file() and \
        (libs / f"delta-storage-{delta_version()}.jar").is_file()


def kafka_jars() -> list[str]:
    """Absolute paths of the Kafka source jars, downloaded with Maven on first use."""
    libs = maven.ensure_libs(POM, libs_dir(), _complete,
                             f"Spark {spark_version()} Kafka source and Delta Lake {delta_version()}", SETTINGS)
    return sorted(str(jar) for jar in libs.glob("*.jar"))


def job_jars() -> list[str]:
    """:func:`kafka_jars` and the jar of spark_jobs' JVM functions: what a job's session is given."""
    jars = kafka_jars()
    return [*jars, functions_jar(spark_version(), [jar for jar in jars if Path(jar).name.startswith("delta-")])]


def hadoop_version() -> str:
    """The Hadoop version of spark_jobs/s3-pom.xml (the one of the hadoop-client jars inside pyspark)."""
    return _property(S3_POM, "hadoop.version")


def _s3_complete(libs: Path) -> bool:
    return (libs / f"hadoop-aws-{hadoop_version()}.jar").is_file() and any(libs.glob("bundle-*.jar"))


def s3_jars() -> list[str]:
    """Absolute paths of Hadoop's S3A connector and the AWS SDK bundle (about 560 MB, fetched on first use)."""
    libs = maven.ensure_libs(S3_POM, CACHE_DIR / f"hadoop-aws-{hadoop_version()}" / "libs", _s3_complete,
                             f"Hadoop {hadoop_version()} S3A connector", SETTINGS)
    return sorted(str(jar) for jar in libs.glob("*.jar"))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        print(",".join(job_jars() + (s3_jars() if "s3" in args else [])))
    except StackError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

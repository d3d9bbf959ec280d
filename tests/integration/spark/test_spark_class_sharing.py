"""The driver JVM's class data sharing archive (spark_jobs.cds) for real: a first process's JVM writes it at exit,
the next one's JVM loads Spark's classes from it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stack.procs import REPO_ROOT

pytestmark = pytest.mark.integration

_JOB = """
import logging
logging.basicConfig(level=logging.INFO)
from spark_jobs.session import session
spark = session("local[1]")
assert spark.range(10).selectExpr("sum(id)").first()[0] == 45
arguments = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()
print("arguments", " ".join(a for a in arguments if "Archive" in a))
"""


def _run(folder: Path, log: Path) -> tuple[str, str]:
    (folder.parent / "conf").mkdir(exist_ok=True)  # Spark's conf folder, on the class path: empty
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYSPARK_GATEWAY_PORT", "PYSPARK_SUBMIT_ARGS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS")}
    env.update({"PYTHONPATH": str(REPO_ROOT), "SPARK_JOBS_CDS_DIR": str(folder),
                "SPARK_CONF_DIR": str(folder.parent / "conf"),
                # where each java process (the launcher's too) says which classes came from an archive
                "JDK_JAVA_OPTIONS": f"-Xlog:class+load=info:file={log}.%p"})
    done = subprocess.run([sys.executable, "-c", _JOB], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=280)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Logging error" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    return done.stdout, done.stderr


def _from_archive(log: Path) -> set[str]:
    """The Spark classes the processes logged to ``log``.* loaded from the dynamic archive."""
    found = set()
    for path in log.parent.glob(f"{log.name}.*"):
        for line in path.read_text(errors="replace").splitlines():
            if "org.apache.spark." in line and "shared objects file (top)" in line:
                found.add(line.split()[1])
    return found


@pytest.mark.timeout(600)
def test_the_first_jvm_writes_the_archive_and_the_next_loads_classes_from_it(tmp_path: Path) -> None:
    folder = tmp_path / "cds"
    out, first_log = _run(folder, tmp_path / "first")
    archives = sorted(p.name for p in folder.iterdir() if p.suffix in (".jsa", ".writing"))
    assert len(archives) == 1 and archives[0].endswith(".jsa"), archives  # written whole, renamed into place
    assert f"-XX:ArchiveClassesAtExit={folder}" in out
    assert "the driver JVM writes its class data sharing archive" in first_log
    assert not _from_archive(tmp_path / "first")

    out, _ = _run(folder, tmp_path / "second")
    assert f"-XX:SharedArchiveFile={folder / archives[0]}" in out
    assert "org.apache.spark.SparkContext" in _from_archive(tmp_path / "second")

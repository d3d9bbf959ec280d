"""The driver JVM's JIT compiler chosen by the run's size (spark_jobs.jit), against the real Kafka: C1 only for a
small run, the default for a large one, a user's own JVM options always kept, nothing when the JVM already runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from spark_jobs import jit
from spark_jobs.materialize import MaterializeOptions, run
from stack.procs import REPO_ROOT
from tests.integration.spark.workload import produce
from tests.integration.support import unique
from tests.unit.spark.support import change_event, json_records

pytestmark = pytest.mark.integration


def _records(count: int, first: int = 0) -> list[tuple[bytes | None, bytes | None]]:
    events = [change_event("insert", "db", "c", {"_id": n, "a": n}) for n in range(first, first + count)]
    return [record for _, record in json_records(events)]


def test_the_records_to_read_decide_the_jit(spark: Any, stack: Any, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PYSPARK_SUBMIT_ARGS", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path / "conf"))  # no spark-defaults.conf
    topic = unique("jit.")
    produce(stack.kafka_bootstrap, topic, _records(30))
    output = tmp_path / "out"
    options = MaterializeOptions(stack.kafka_bootstrap, str(output), topics=(topic,))
    assert jit.pending_records(options) == 30
    assert jit.choose(options, small=30) == {jit.JAVA_OPTIONS: jit.C1_ONLY}  # a small run: C1 only
    assert jit.choose(options, small=29) == {}  # a large one: the JVM's default
    pattern = MaterializeOptions(stack.kafka_bootstrap, f"file://{output}", pattern=rf"{topic}|nothing\..*")
    assert jit.choose(pattern, small=30) == {jit.JAVA_OPTIONS: jit.C1_ONLY}

    # a user's own driver JVM options are kept, wherever they were set
    assert jit.choose(options, {jit.JAVA_OPTIONS: "-Xss4m"}) == {}
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--driver-java-options -Xss4m pyspark-shell")
    assert jit.choose(options) == {}
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS")
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "spark-defaults.conf").write_text(f"# JVM\n{jit.JAVA_OPTIONS}  -Xss4m\n")
    assert jit.choose(options) == {}
    (tmp_path / "conf" / "spark-defaults.conf").write_text("spark.driver.memory 2g\n")
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", "-XX:-TieredCompilation")
    assert jit.choose(options) == {}
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", "-Xss4m")  # not a JIT option: the choice is still made
    assert jit.choose(options) == {jit.JAVA_OPTIONS: jit.C1_ONLY}

    # the committed offsets count: after a run only the new records are to read, in either table format
    for table_format in ("delta", "parquet"):
        stored = MaterializeOptions(stack.kafka_bootstrap, str(tmp_path / table_format), topics=(topic,),
                                    table_format=table_format)
        run(spark, stored)
        assert jit.pending_records(stored) == 0
    produce(stack.kafka_bootstrap, topic, _records(5, first=30))
    assert [jit.pending_records(MaterializeOptions(stack.kafka_bootstrap, str(tmp_path / f), topics=(topic,),
                                                   table_format=f)) for f in ("delta", "parquet")] == [5, 5]
    # not known without the JVM: an output that is not local, a broker that does not answer
    assert jit.pending_records(MaterializeOptions(stack.kafka_bootstrap, "s3a://bucket/out", topics=(topic,))) is None
    assert jit.pending_records(MaterializeOptions("127.0.0.1:1", str(output), topics=(topic,))) is None
    # this process's JVM runs already (the test session's): its options cannot change, nothing is chosen
    assert jit.launch_conf(options) == {}


_PROBE = """
import sys
from pyspark.sql import SparkSession
from spark_jobs import materialize
code = materialize.main(sys.argv[1:])
spark = SparkSession.getActiveSession()
jvm = spark.sparkContext._jvm
arguments = list(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
options = spark.sparkContext.getConf().get("spark.driver.extraJavaOptions", "").split()
print("result", code, "conf:" + ("C1" if "-XX:TieredStopAtLevel=1" in options else "default"),
      "jvm:" + ("C1" if "-XX:TieredStopAtLevel=1" in arguments else "default"),
      "gc:" + ("parallel" if "-XX:+UseParallelGC" in arguments else "default"),
      "c2:" + ("late" if "-XX:Tier4InvocationThreshold=100000" in arguments else "default"),
      "heap:" + ("from-max" if {"-Xms2g", "-Xmx2g", "-XX:MetaspaceSize=256m"} <= set(arguments) else "default"))
"""


@pytest.mark.timeout(300)
def test_the_command_line_starts_a_small_runs_jvm_with_c1_only(stack: Any, tmp_path: Path) -> None:
    topic = unique("jitcli.")
    produce(stack.kafka_bootstrap, topic, _records(20))
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_GATEWAY_PORT", "PYSPARK_SUBMIT_ARGS")}
    cmd = [sys.executable, "-c", _PROBE, "--bootstrap-servers", stack.kafka_bootstrap, "--topics", topic,
           "--output", str(tmp_path / "out"), "--master", "local[1]"]
    done = subprocess.run(cmd, cwd=REPO_ROOT, env={**env, "PYTHONPATH": str(REPO_ROOT)}, capture_output=True,
                          text=True, timeout=280)
    result = [line for line in done.stdout.splitlines() if line.startswith("result ")]
    assert result == ["result 0 conf:C1 jvm:C1 gc:parallel c2:late heap:from-max"], done.stdout + done.stderr
    assert "the C1 JIT compiler only (20 records to read" in done.stderr

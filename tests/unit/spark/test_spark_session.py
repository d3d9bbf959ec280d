"""The job's session leaves py4j's INFO lines out (one of them came from ``__del__`` at interpreter exit, into a
closed stream) unless its logger's level was set."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from spark_jobs.session import DRIVER_GC, DRIVER_JIT, DRIVER_METASPACE, driver_options, initial_heap, quiet_py4j


@pytest.fixture
def py4j_logger() -> Iterator[logging.Logger]:
    logger = logging.getLogger("py4j")
    before = logger.level
    yield logger
    logger.setLevel(before)


def test_py4j_info_lines_are_left_out(py4j_logger: logging.Logger) -> None:
    py4j_logger.setLevel(logging.NOTSET)
    quiet_py4j()
    assert not py4j_logger.isEnabledFor(logging.INFO)
    assert py4j_logger.isEnabledFor(logging.WARNING)


def test_a_level_the_user_set_stays(py4j_logger: logging.Logger) -> None:
    py4j_logger.setLevel(logging.DEBUG)
    quiet_py4j()
    assert py4j_logger.level == logging.DEBUG


@pytest.fixture
def no_user_jvm_options(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> pytest.MonkeyPatch:
    for name in ("PYSPARK_SUBMIT_ARGS", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))  # no spark-defaults.conf there
    return monkeypatch


def test_the_driver_runs_the_parallel_collector_and_later_c2_beside_the_jit_choice(
        no_user_jvm_options: pytest.MonkeyPatch) -> None:
    both = f"{DRIVER_GC} {DRIVER_JIT} {DRIVER_METASPACE}"
    assert driver_options({}) == both
    assert driver_options({"spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1"}) == both
    assert driver_options({}, "2g") == f"{both} -Xms2g"
    assert all(flag.startswith(("-XX:Tier3", "-XX:Tier4")) for flag in DRIVER_JIT.split())
    thresholds = dict(flag.removeprefix("-XX:").split("=") for flag in DRIVER_JIT.split())
    # C1 earlier than the JVM's defaults (200 calls), C2 later (5,000)
    assert int(thresholds["Tier3InvocationThreshold"]) < 200 < 5_000 < int(thresholds["Tier4InvocationThreshold"])


@pytest.mark.parametrize(("memory", "flag"), [("2g", "-Xms2g"), ("1536M", "-Xms1536m"), ("4gb", "-Xms4g"),
                                              ("2048", "-Xms2048m"), ("1t", "-Xms1024g"), (" 3G ", "-Xms3g"),
                                              ("lots", None), ("", None), (None, None), ("0g", None)])
def test_the_heap_starts_at_the_drivers_memory(no_user_jvm_options: pytest.MonkeyPatch, memory: str | None,
                                               flag: str | None) -> None:
    assert initial_heap(memory) == flag


@pytest.mark.parametrize("submit", ["--driver-memory 1g pyspark-shell", "--conf spark.driver.memory=1g pyspark-shell"])
def test_no_initial_heap_when_spark_submit_sets_the_memory(no_user_jvm_options: pytest.MonkeyPatch,
                                                            submit: str) -> None:
    no_user_jvm_options.setenv("PYSPARK_SUBMIT_ARGS", submit)
    assert initial_heap("2g") is None


@pytest.mark.parametrize("where", ["conf", "submit", "tool", "tool-jit"])
def test_the_users_jvm_options_are_kept(no_user_jvm_options: pytest.MonkeyPatch, where: str) -> None:
    conf = {"spark.driver.extraJavaOptions": "-Xss4m"} if where == "conf" else {}
    if where == "submit":
        no_user_jvm_options.setenv("PYSPARK_SUBMIT_ARGS", "--driver-java-options -Xss4m pyspark-shell")
    if where == "tool":
        no_user_jvm_options.setenv("JAVA_TOOL_OPTIONS", "-XX:+UseG1GC")
    if where == "tool-jit":
        no_user_jvm_options.setenv("JDK_JAVA_OPTIONS", "-XX:Tier4InvocationThreshold=5000")
    assert driver_options(conf) is None

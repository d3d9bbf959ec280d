"""The driver JVM's class data sharing archive (spark_jobs.cds): where it is kept, its name per JVM and class path,
one writer at a time, and the rename into place only after the JVM wrote it whole."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spark_jobs import cds

_JARS = ["/x/a.jar", "/x/b.jar"]
_SETTINGS = {"spark.driver.memory": "2g"}


def test_the_folder_is_the_users_cache_unless_set_or_turned_off(monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: Path) -> None:
    monkeypatch.delenv(cds.DIR_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert cds.archive_dir() == tmp_path / "cache" / "spark_jobs" / "cds"
    monkeypatch.setenv(cds.DIR_ENV, str(tmp_path / "mine"))
    assert cds.archive_dir() == tmp_path / "mine"
    for off in ("off", "OFF", ""):
        monkeypatch.setenv(cds.DIR_ENV, off)
        assert cds.archive_dir() is None
        assert cds.plan(_JARS, _SETTINGS) is None


def test_the_name_follows_the_jvm_the_jars_and_the_memory(tmp_path: Path) -> None:
    java, spark_jars = tmp_path / "java", tmp_path / "jars"
    java.write_text("1")
    spark_jars.mkdir()
    (spark_jars / "spark-core.jar").write_text("")
    name = cds.key(_JARS, _SETTINGS, java, spark_jars)
    assert name == cds.key(list(_JARS), dict(_SETTINGS), java, spark_jars)
    assert name != cds.key(_JARS[:1], _SETTINGS, java, spark_jars)
    assert name != cds.key(_JARS, {"spark.driver.memory": "40g"}, java, spark_jars)
    (spark_jars / "spark-sql.jar").write_text("")
    assert name != cds.key(_JARS, _SETTINGS, java, spark_jars)
    changed = cds.key(_JARS, _SETTINGS, java, spark_jars)
    java.write_text("2 and longer")
    assert changed != cds.key(_JARS, _SETTINGS, java, spark_jars)


def test_one_process_writes_an_archive_and_later_ones_use_it(monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:
    monkeypatch.setenv(cds.DIR_ENV, str(tmp_path))
    first = cds.plan(_JARS, _SETTINGS)
    assert first is not None and first.writing is not None
    assert first.writing.is_file() and first.writing.parent == tmp_path  # held from the start
    assert first.java_options.startswith(f"-XX:ArchiveClassesAtExit={first.writing} ")
    assert cds.plan(_JARS, _SETTINGS) is None  # meanwhile: no archive, and no second writer

    first.final.write_bytes(b"archive")
    first.writing.unlink()
    later = cds.plan(_JARS, _SETTINGS)
    assert later == cds.Archive(first.final, None)
    assert later.java_options == f"-XX:SharedArchiveFile={first.final} {cds.QUIET}"


def test_an_archive_a_gone_process_began_is_removed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(cds.DIR_ENV, str(tmp_path))
    mine = cds.plan(_JARS, _SETTINGS)
    assert mine is not None and mine.writing is not None
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True).stdout.strip()
    abandoned = mine.writing.with_name(mine.writing.name.replace(f".{mine.writing.name.split('.')[1]}.",
                                                                 f".{gone}."))
    mine.writing.rename(abandoned)
    again = cds.plan(_JARS, _SETTINGS)
    assert again is not None and again.writing == mine.writing
    assert not abandoned.exists()


_JVM = """
import sys
import time
sys.stdin.read()  # like PySpark's gateway server: exits when its standard input closes
with open(sys.argv[1], "wb") as f:
    f.write(b"classes")
sys.exit(int(sys.argv[2]))
"""


@pytest.mark.parametrize("code", [0, 1])
def test_the_archive_is_renamed_into_place_once_written_whole(tmp_path: Path, code: int) -> None:
    archive = cds.Archive(tmp_path / "a.jsa", tmp_path / "a.123.writing")
    assert archive.writing is not None
    archive.writing.touch()
    process = subprocess.Popen([sys.executable, "-c", _JVM, str(archive.writing), str(code)],
                               stdin=subprocess.PIPE)
    cds._promote(archive, process)
    assert process.returncode == code
    assert not archive.writing.exists()
    assert archive.final.exists() == (code == 0)
    if code == 0:
        assert archive.final.read_bytes() == b"classes"


def test_nothing_is_written_without_a_jvm_to_end(tmp_path: Path) -> None:
    archive = cds.Archive(tmp_path / "a.jsa", tmp_path / "a.123.writing")
    assert archive.writing is not None
    archive.writing.touch()
    cds.promote_at_exit(archive, None)
    assert not archive.writing.exists() and not archive.final.exists()


def test_no_archive_when_a_folder_on_the_class_path_holds_files(monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: Path) -> None:
    monkeypatch.setenv(cds.DIR_ENV, str(tmp_path / "cds"))
    for name in ("HADOOP_CONF_DIR", "YARN_CONF_DIR", "SPARK_DIST_CLASSPATH"):
        monkeypatch.delenv(name, raising=False)
    conf = tmp_path / "conf"
    conf.mkdir()
    monkeypatch.setenv("SPARK_CONF_DIR", str(conf))
    empty = cds.plan(_JARS, _SETTINGS)
    assert empty is not None and empty.writing is not None
    empty.writing.unlink()
    (conf / "spark-defaults.conf").write_text("spark.driver.memory 2g\n")
    assert cds.plan(_JARS, _SETTINGS) is None
    (conf / "spark-defaults.conf").unlink()
    hadoop = tmp_path / "hadoop"
    hadoop.mkdir()
    (hadoop / "core-site.xml").write_text("<configuration/>")
    monkeypatch.setenv("HADOOP_CONF_DIR", str(hadoop))
    assert cds.plan(_JARS, _SETTINGS) is None
    monkeypatch.delenv("HADOOP_CONF_DIR")
    other = cds.plan(_JARS, _SETTINGS)  # another conf folder: another class path, another archive
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path / "elsewhere"))
    assert other is not None and other.writing is not None
    elsewhere = cds.plan(_JARS, _SETTINGS)
    assert elsewhere is not None and elsewhere.final != other.final


def test_archives_unused_for_a_month_are_removed_when_one_is_written(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path) -> None:
    monkeypatch.setenv(cds.DIR_ENV, str(tmp_path))
    stale = tmp_path / "another-jvm.jsa"
    month = time.time() - (cds.UNUSED_DAYS + 1) * 86400
    first = cds.plan(_JARS, _SETTINGS)
    assert first is not None and first.writing is not None
    first.writing.rename(first.final)
    for path in (stale, first.final):
        path.touch()
        os.utime(path, (month, month))
    assert cds.plan(_JARS, _SETTINGS) == cds.Archive(first.final, None)  # used: marked
    assert first.final.stat().st_mtime > month + 86400 and stale.exists()
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path / "other-conf"))  # another class path: a new archive
    second = cds.plan(_JARS, _SETTINGS)
    assert second is not None and second.writing is not None
    assert not stale.exists() and first.final.exists()

"""The job's session reads and writes local paths through spark_jobs.fs (Hadoop's local file system without its
chmod and readlink child processes): the same permissions and statuses as Hadoop's own classes give."""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path
from typing import Any

import pytest

from spark_jobs.session import LOCAL_FILES, local_files


def _path(spark: Any, location: Path) -> Any:
    return spark._jvm.org.apache.hadoop.fs.Path(location.as_uri())


def test_the_session_uses_the_local_files_classes(spark: Any) -> None:
    conf = spark._jsc.hadoopConfiguration()
    for key, value in LOCAL_FILES.items():
        assert conf.get(key.removeprefix("spark.hadoop.")) == value
    fs = _path(spark, Path("/")).getFileSystem(conf)
    assert fs.getClass().getName() == "spark_jobs.fs.LocalFiles"
    assert fs.getRaw().getClass().getName() == "spark_jobs.fs.RawLocalFiles"


def test_created_files_and_folders_get_the_permissions_hadoops_own_classes_give(spark: Any, tmp_path: Path) -> None:
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    ours = _path(spark, tmp_path).getFileSystem(conf)
    hadoops = jvm.org.apache.hadoop.fs.LocalFileSystem()
    hadoops.initialize(jvm.java.net.URI("file:///"), conf)
    permission = jvm.org.apache.hadoop.fs.permission.FsPermission.createImmutable
    modes = {}
    for name, fs in (("ours", ours), ("hadoop", hadoops)):
        target = tmp_path / name / "a" / "b.txt"
        out = fs.create(_path(spark, target), permission(0o640), True, 4096, 1, 1 << 20, None)
        out.write(bytearray(b"hello"))
        out.close()
        assert target.read_bytes() == b"hello"
        created = _mode(target)
        fs.setPermission(_path(spark, target), permission(0o751))
        folder = tmp_path / name / "c"
        assert fs.mkdirs(_path(spark, folder), permission(0o705))
        modes[name] = (created, _mode(target), _mode(folder), _mode(target.with_name(".b.txt.crc")))
    assert modes["ours"] == modes["hadoop"]
    assert modes["ours"][:2] == (0o640, 0o751)


def test_a_rename_through_a_file_context_and_link_statuses(spark: Any, tmp_path: Path) -> None:
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    context = jvm.org.apache.hadoop.fs.FileContext.getFileContext(jvm.java.net.URI(tmp_path.as_uri()), conf)
    assert context.getDefaultFileSystem().getClass().getName() == "spark_jobs.fs.LocalFilesContext"
    source, target = tmp_path / "commit.tmp", tmp_path / "00000000000000000001.json"
    source.write_text("{}")
    # Delta's log store renames its commit files so, refusing to replace one that exists
    options = spark.sparkContext._gateway.new_array(jvm.org.apache.hadoop.fs.Options.Rename, 1)
    options[0] = jvm.org.apache.hadoop.fs.Options.Rename.NONE
    context.rename(_path(spark, source), _path(spark, target), options)
    assert target.read_text() == "{}" and not source.exists()
    fs = _path(spark, tmp_path).getFileSystem(conf)
    plain = fs.getFileLinkStatus(_path(spark, target))
    assert not plain.isSymlink() and plain.getLen() == 2
    link = tmp_path / "link"
    link.symlink_to(target)
    hadoops = jvm.org.apache.hadoop.fs.LocalFileSystem()
    hadoops.initialize(jvm.java.net.URI("file:///"), conf)
    for path in (link, target):  # a link's status is Hadoop's own
        mine, theirs = fs.getFileLinkStatus(_path(spark, path)), hadoops.getFileLinkStatus(_path(spark, path))
        assert (mine.isSymlink(), mine.getLen(), mine.isFile()) == (theirs.isSymlink(), theirs.getLen(),
                                                                     theirs.isFile())
    missing = tmp_path / "missing"
    try:
        fs.getFileLinkStatus(_path(spark, missing))
    except Exception as exc:  # noqa: BLE001 - py4j wraps the Java exception
        assert "FileNotFoundException" in str(exc)
    else:
        raise AssertionError("a missing path has no status")


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def jar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A jar holding the classes, and no file system settings of the user's anywhere."""
    path = tmp_path / "functions.jar"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("spark_jobs/fs/LocalFiles.class", b"")
    (tmp_path / "conf").mkdir()
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path / "conf"))
    for name in ("PYSPARK_SUBMIT_ARGS", "HADOOP_CONF_DIR"):
        monkeypatch.delenv(name, raising=False)
    return str(path)


def test_the_classes_are_chosen_when_a_jar_has_them(jar: str, tmp_path: Path) -> None:
    assert local_files([str(tmp_path / "missing.jar"), jar], {}) == LOCAL_FILES
    assert local_files([str(tmp_path / "missing.jar")], {}) == {}


@pytest.mark.parametrize("where", ["conf", "spark-defaults", "core-site", "submit-args"])
def test_a_local_file_system_the_user_chose_is_kept(jar: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    where: str) -> None:
    conf = {}
    if where == "conf":
        conf = {"spark.hadoop.fs.file.impl": "org.apache.hadoop.fs.RawLocalFileSystem"}
    elif where == "spark-defaults":
        (tmp_path / "conf" / "spark-defaults.conf").write_text(
            "spark.hadoop.fs.AbstractFileSystem.file.impl org.example.Local\n")
    elif where == "core-site":
        (tmp_path / "hadoop").mkdir()
        (tmp_path / "hadoop" / "core-site.xml").write_text(
            "<configuration><property><name>fs.file.impl</name><value>org.example.Local</value></property>"
            "</configuration>")
        monkeypatch.setenv("HADOOP_CONF_DIR", str(tmp_path / "hadoop"))
    else:
        monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--conf spark.hadoop.fs.file.impl=org.example.Local pyspark-shell")
    assert local_files([jar], conf) == {}

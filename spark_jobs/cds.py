"""Class data sharing for the driver JVM that :func:`spark_jobs.session.session` starts: the classes a run loads
(Spark's, Delta's, Hadoop's, the Kafka source's: ~20,000) are read from an archive the first run wrote instead of
being parsed, verified and linked again by every run.

A run that finds no archive for its JVM and class path starts the JVM with ``-XX:ArchiveClassesAtExit`` (the JVM
writes the classes it loaded when it exits) and, at the Python process's exit, ends the JVM and waits for it (the
writing takes ~12 s once), then renames the file into place: a run never maps a partly written archive, which would
crash its JVM. One process at a time writes (it holds ``<name>.<pid>.writing`` from its start); others meanwhile run
without an archive. Later runs start with ``-XX:SharedArchiveFile``. An incremental run of 5,082 records in a new JVM:
the session's start 4.0-4.3 s → 2.0-2.2 s, the run 12.6-13.6 s → 9.0-9.8 s (JVM CPU 16.5-18.0 s → 12.4-13.5 s; 3
interleaved pairs, benchmarks/results.md 2026-11-30).

The archive is kept per JVM build and class path (a hash of the java executable, Spark's jars, the jars added and
the driver's memory, which decides the JVM's pointer encoding) in ``$SPARK_JOBS_CDS_DIR``, by default
``$XDG_CACHE_HOME/spark_jobs/cds`` (``~/.cache/spark_jobs/cds``); ``SPARK_JOBS_CDS_DIR=off`` turns it off. A JVM that
cannot use an archive (another build, a class path that does not match) runs without it, as before; the JVM's own
``cds`` log lines are off (a write reports every class it leaves out). Each run that uses an archive marks it
(its modification time); one that writes a new archive removes those unused for :data:`UNUSED_DAYS`. The JVM
refuses archives when a folder on its class path holds files: with a ``spark-defaults.conf`` in Spark's conf
folder (or Hadoop's conf folder on the class path) nothing is written or used.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import logging
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DIR_ENV", "QUIET", "Archive", "archive_dir", "plan", "promote_at_exit"]

log = logging.getLogger(__name__)

DIR_ENV = "SPARK_JOBS_CDS_DIR"
OFF = "off"
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
UNUSED_DAYS = 30  # an archive no run used for this long is removed when another one is written
EXIT_TIMEOUT = 180.0  # seconds the Python process waits at exit for its JVM to write the archive


@dataclass(frozen=True)
class Archive:
    """The JVM options of one launch: use ``final``, or write ``writing`` (renamed to ``final`` at exit)."""

    final: Path
    writing: Path | None

    @property
    def java_options(self) -> str:
        if self.writing is None:
            return f"-XX:SharedArchiveFile={self.final} {QUIET}"
        return f"-XX:ArchiveClassesAtExit={self.writing} {QUIET}"


def archive_dir() -> Path | None:
    """Where the archives are kept; None when turned off (``SPARK_JOBS_CDS_DIR=off``) or not on a POSIX system."""
    chosen = os.environ.get(DIR_ENV)
    if os.name != "posix" or (chosen is not None and chosen.strip().lower() in (OFF, "")):
        return None
    if chosen:
        return Path(chosen).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "spark_jobs" / "cds"


def _java() -> Path | None:
    """The java executable PySpark's launcher runs (``$JAVA_HOME/bin/java``, else the one on the PATH)."""
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    return Path(found).resolve() if found else None


def _stamp(path: Path) -> list[object]:
    try:
        stat = path.stat()
    except OSError:
        return [str(path)]
    return [str(path), stat.st_size, stat.st_mtime_ns]


def key(jars: Sequence[str], settings: Mapping[str, str], java: Path, spark_jars: Path) -> str:
    """The archive's name for this JVM build and class path (see the module's text)."""
    listed = sorted(p.name for p in spark_jars.iterdir()) if spark_jars.is_dir() else []
    identity = {"java": _stamp(java), "spark_jars": [str(spark_jars), listed], "jars": [_stamp(Path(j)) for j in jars],
                "memory": settings.get("spark.driver.memory", "")}
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:20]


def plan(jars: Sequence[str], settings: Mapping[str, str]) -> Archive | None:
    """The archive of a driver JVM about to start with ``jars`` and ``settings``; None when there is none to use
    or write (turned off, no java found, a folder that cannot be written)."""
    folder, java = archive_dir(), _java()
    if folder is None or java is None:
        return None
    from pyspark.find_spark_home import _find_spark_home

    spark_home: Callable[[], str] = _find_spark_home  # how PySpark's launcher finds it (untyped)
    home = Path(spark_home())
    folders = _class_path_folders(home)
    if any(_has_files(f) for f in folders):
        log.debug("no class data sharing archive: the JVM's class path has folders with files (%s)", folders)
        return None
    name = key([*map(str, folders), *jars], settings, java, home / "jars")
    final = folder / f"{name}.jsa"
    if final.is_file():
        with contextlib.suppress(OSError):  # in use: kept by _remove_unused
            os.utime(final)
        return Archive(final, None)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        log.warning("no class data sharing archive: cannot create %s (%s)", folder, exc)
        return None
    _remove_unused(folder)
    if _remove_abandoned(folder, name):
        log.debug("another process writes the class data sharing archive %s: this JVM runs without", final)
        return None
    writing = folder / f"{name}.{os.getpid()}.writing"
    try:  # taken: one process at a time writes an archive (the JVM writes this file at its exit)
        writing.touch(exist_ok=False)
    except OSError:
        return None
    # said now: at exit a handler's stream may be closed already
    log.info("the driver JVM writes its class data sharing archive %s when this process exits (once per JVM and "
             "class path, ~12 s)", final)
    return Archive(final, writing)


def _class_path_folders(home: Path) -> list[Path]:
    """The folders Spark's launcher puts on the driver's class path: its conf folder, Hadoop's and YARN's, and
    those of ``SPARK_DIST_CLASSPATH``. The JVM neither writes nor uses an archive when one of them holds files."""
    folders = [Path(os.environ.get("SPARK_CONF_DIR") or home / "conf")]
    folders += [Path(os.environ[name]) for name in ("HADOOP_CONF_DIR", "YARN_CONF_DIR") if os.environ.get(name)]
    folders += [Path(p) for p in os.environ.get("SPARK_DIST_CLASSPATH", "").split(os.pathsep)
                if p and not p.endswith((".jar", "*"))]
    return folders


def _has_files(folder: Path) -> bool:
    try:
        return folder.is_dir() and any(folder.iterdir())
    except OSError:
        return True


def _remove_unused(folder: Path) -> None:
    """Remove the archives no run used for :data:`UNUSED_DAYS` (those of a JVM or Spark since replaced)."""
    oldest = time.time() - UNUSED_DAYS * 86400
    for path in folder.glob("*.jsa"):
        with contextlib.suppress(OSError):
            if path.stat().st_mtime < oldest:
                path.unlink()


def _remove_abandoned(folder: Path, name: str) -> bool:
    """Remove the archives of ``name`` that another process began and did not finish (its Python process is gone);
    whether one is still being written by a live process."""
    busy = False
    for path in folder.glob(f"{name}.*.writing"):
        pid = path.name.split(".")[1]
        if pid.isdigit() and not _alive(int(pid)):
            with contextlib.suppress(OSError):
                path.unlink()
        else:
            busy = True
    return busy


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (another user's included)."""
    with contextlib.suppress(ProcessLookupError):
        with contextlib.suppress(PermissionError):
            os.kill(pid, 0)
        return True
    return False


def promote_at_exit(archive: Archive, jvm: subprocess.Popen[bytes] | None) -> None:
    """At this process's exit: end ``jvm`` (closing its standard input, which PySpark's gateway server exits on),
    wait for it to write ``archive.writing`` and rename that to ``archive.final``."""
    if archive.writing is None:
        return
    if jvm is None or jvm.stdin is None:  # not a JVM this process can end: nothing is written
        with contextlib.suppress(OSError):
            archive.writing.unlink()
        return
    atexit.register(_promote, archive, jvm)


def _promote(archive: Archive, jvm: subprocess.Popen[bytes]) -> None:
    writing = archive.writing
    assert writing is not None and jvm.stdin is not None
    from pyspark import SparkContext

    active = SparkContext._active_spark_context
    ours = getattr(SparkContext._gateway, "proc", None) is jvm
    if active is not None and ours:  # stopped first: PySpark's accumulator server reports the JVM's exit as an error
        with contextlib.suppress(Exception):
            active.stop()
    try:
        jvm.stdin.close()
        code = jvm.wait(EXIT_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):  # not logged (at exit): no archive, a later run tries again
        return
    if code == 0 and writing.is_file() and writing.stat().st_size > 0:
        os.replace(writing, archive.final)
    else:
        with contextlib.suppress(OSError):
            writing.unlink()

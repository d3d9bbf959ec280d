"""The jar of spark_jobs' own JVM functions (``spark_jobs/java``), compiled once with the JDK's ``javac`` against
the installed pyspark's jars (and the libraries given, Delta Lake's) into the git-ignored cache, named by a hash of
the sources, the Spark version and the libraries' names (a changed source, another Spark or Delta gives another
jar). A job finds the functions when the jar is on its class path
(``python -m stack.spark`` lists it with the Kafka source jars); without it the job decodes as before
(:mod:`spark_jobs.decode`)."""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import os
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

from stack.procs import CACHE_DIR, REPO_ROOT, StackError

SOURCES = REPO_ROOT / "spark_jobs" / "java"
JAVAC_TIMEOUT = 300.0
JAVA_RELEASE = "17"


def _pyspark_jars() -> Path:
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise StackError("pyspark is not installed: spark_jobs' JVM functions are compiled against its jars")
    return Path(spec.origin).parent / "jars"


def _javac() -> str:
    home = os.environ.get("JAVA_HOME")
    candidate = Path(home) / "bin" / "javac" if home else None
    if candidate is not None and candidate.is_file():
        return str(candidate)
    found = shutil.which("javac")
    if found is None:
        raise StackError("javac (a JDK) is not on PATH: it compiles spark_jobs' JVM functions once")
    return found


def functions_jar(spark_version: str, libraries: Sequence[str] = ()) -> str:
    """The path of the compiled jar of ``spark_jobs/java`` for ``spark_version``, built on first use against
    pyspark's jars and ``libraries`` (jar paths)."""
    sources = sorted(SOURCES.rglob("*.java"))
    digest = hashlib.sha256(spark_version.encode())
    for library in sorted(Path(jar).name for jar in libraries):
        digest.update(library.encode() + b"\0")
    for source in sources:
        digest.update(str(source.relative_to(SOURCES)).encode() + b"\0" + source.read_bytes() + b"\0")
    target = CACHE_DIR / "spark-jobs-java" / f"spark-jobs-functions-{digest.hexdigest()[:16]}.jar"
    if target.is_file():
        return str(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    with (target.parent / ".build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be compiling the same sources right now
        if target.is_file():
            return str(target)
        classes = Path(tempfile.mkdtemp(prefix=".classes-", dir=target.parent))
        try:
            cmd = [_javac(), "--release", JAVA_RELEASE, "-nowarn", "-encoding", "UTF-8",
                   "-cp", os.pathsep.join([str(_pyspark_jars() / "*"), *libraries]), "-d", str(classes),
                   *map(str, sources)]
            try:
                result = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                        timeout=JAVAC_TIMEOUT, check=False)
            except subprocess.TimeoutExpired as exc:
                raise StackError(f"javac did not finish within {JAVAC_TIMEOUT:.0f} s") from exc
            if result.returncode != 0:
                output = (result.stdout + result.stderr).splitlines()
                errors = [line for line in output if "bad path element" not in line]  # pyspark's manifests' paths
                raise StackError(f"javac failed to compile {SOURCES} (exit {result.returncode}):\n"
                                 + "\n".join(errors)[-4000:])
            partial = target.with_suffix(".jar.part")
            with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as jar:
                jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\nCreated-By: stack.spark_java\r\n\r\n")
                for compiled in sorted(classes.rglob("*.class")):
                    jar.write(compiled, compiled.relative_to(classes).as_posix())
            os.replace(partial, target)
        finally:
            shutil.rmtree(classes, ignore_errors=True)
    return str(target)

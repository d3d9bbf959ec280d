"""Jars from Maven Central, fetched once with ``mvn dependency:copy-dependencies`` into the git-ignored cache:
into a temporary directory first and renamed when complete, under a lock, so a half download is never used."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from stack.procs import StackError

MAVEN_TIMEOUT = 1800.0


def ensure_libs(pom: Path, libs: Path, complete: Callable[[Path], bool], what: str,
                settings: Path | None = None) -> Path:
    """The directory ``libs`` holding the runtime dependencies of ``pom``; downloads them when ``complete``
    says they are not all there yet. ``settings``: a Maven settings file (e.g. mirrors) to use."""
    if complete(libs):
        return libs
    libs.parent.mkdir(parents=True, exist_ok=True)
    with (libs.parent / ".download.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be downloading right now; Maven itself is bounded
        if complete(libs):
            return libs
        mvn = shutil.which("mvn")
        if mvn is None:
            raise StackError(f"Maven (mvn) is not on PATH; it is needed once to fetch the {what} jars")
        tmp = Path(tempfile.mkdtemp(prefix=".libs-", dir=libs.parent))
        cmd = [mvn, "-q", "-B", *(["-s", str(settings)] if settings else []), "-f", str(pom),
               "dependency:copy-dependencies", "-DincludeScope=runtime", f"-DoutputDirectory={tmp}"]
        print(f"fetching the {what} jars with Maven into {libs} ...", file=sys.stderr, flush=True)
        try:
            result = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                    timeout=MAVEN_TIMEOUT, check=False)
            if result.returncode != 0:
                raise StackError(f"Maven failed to fetch the {what} jars (exit {result.returncode}): "
                                 f"{' '.join(cmd)}\n{(result.stdout + result.stderr)[-4000:]}")
            if not complete(tmp):
                raise StackError(f"Maven finished but {tmp} lacks the {what} jars")
            if libs.exists():
                shutil.rmtree(libs)
            os.rename(tmp, libs)
        except subprocess.TimeoutExpired as exc:
            raise StackError(f"Maven did not finish within {MAVEN_TIMEOUT:.0f} s: {' '.join(cmd)}") from exc
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return libs

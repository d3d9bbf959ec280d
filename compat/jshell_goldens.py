"""Re-record the goldens that Java prints from a jshell script (``compat/jshell/*.jsh``), run by the ``jshell`` of a
JDK on this machine against the Maven Central jars the other recorders fetch:

* ``javalang``: ``tests/unit/connect/data/javalang_golden.txt``, ``Double.toString``/``Float.toString`` of varied
  values (``javalang_golden.jsh``; a JDK 19+: JDK 17 prints some values with one digit too many);
* ``group-protocol``: ``tests/unit/connect/data/group_protocol_golden.txt``, the bytes of Kafka Connect's group
  protocol (``ConnectProtocol``, ``IncrementalCooperativeConnectProtocol``) from connect-runtime
  (``group_protocol_golden.jsh``, ``group_protocol_v1_golden.jsh``);
* ``java17-unescaped-bmp``: ``tests/unit/mongodb/data/java17_unescaped_bmp_ranges.txt``, the BMP characters the
  MongoDB Java driver Debezium bundles leaves unescaped in JSON strings (``unescaped_bmp.jsh``; a JDK 17, whose
  Unicode 13 tables decide it).

    python -m compat.jshell_goldens [javalang|group-protocol|java17-unescaped-bmp ...]   # all by default

Each file starts with one ``# recorded_with: {...}`` line (the JDK, and the Kafka Connect or Debezium and driver
versions whose classes ran); the lines after it are the scripts' output as printed. Readers skip ``#`` lines.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from compat import java_connect
from compat.debezium import releases
from stack import procs
from stack.procs import StackError

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = Path(__file__).resolve().parent / "jshell"
HEADER = "# recorded_with: "


@dataclass(frozen=True)
class Jdk:
    java: str
    major: int
    version: str  # the first line of ``java -version``

    @property
    def jshell(self) -> str:
        return str(Path(self.java).resolve().with_name("jshell"))


def jdks() -> list[Jdk]:
    """The JDKs of this machine with a jshell: ``JAVA_HOME``'s or the one on PATH first, then ``/usr/lib/jvm/*``."""
    candidates = [procs.java()]
    if os.environ.get("JAVA_HOME") is None:
        candidates += sorted(str(p) for p in Path("/usr/lib/jvm").glob("*/bin/java"))
    found: dict[str, Jdk] = {}
    for java in candidates:
        real = str(Path(java).resolve())
        if real in found or not Path(real).with_name("jshell").is_file():
            continue
        result = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60, check=False)
        first = (result.stderr.splitlines() or ["?"])[0]
        major = re.search(r'version "(\d+)', first)
        found[real] = Jdk(java, int(major.group(1)) if major else 0, first)
    return list(found.values())


def jdk(accepts: Callable[[int], bool], wanted: str) -> Jdk:
    """The first JDK whose major version ``accepts``."""
    for candidate in jdks():
        if accepts(candidate.major):
            return candidate
    raise StackError(f"no {wanted} with a jshell here (set JAVA_HOME to one)")


@dataclass(frozen=True)
class Golden:
    name: str
    out: Path
    scripts: tuple[str, ...]
    jdk: Callable[[], Jdk]
    classpath: Callable[[], tuple[str, dict[str, str]]]  # the class path and the versions it holds


def _no_jars() -> tuple[str, dict[str, str]]:
    return "", {}


def _connect_runtime() -> tuple[str, dict[str, str]]:
    libs = java_connect.ensure_libs()
    return ":".join(str(jar) for jar in sorted(libs.glob("*.jar"))), {"kafka_connect": java_connect.connect_version()}


def _bson() -> tuple[str, dict[str, str]]:
    release = releases.pinned()
    plugin = releases.plugin_path(release) / "debezium-connector-mongodb"
    jar = next(plugin.glob("bson-[0-9]*.jar"))
    return str(jar), {"debezium": release, "mongodb_java_driver": jar.name.removeprefix("bson-").removesuffix(".jar")}


GOLDENS: tuple[Golden, ...] = (
    Golden("javalang", ROOT / "tests" / "unit" / "connect" / "data" / "javalang_golden.txt",
           ("javalang_golden.jsh",), lambda: jdk(lambda major: major >= 19, "JDK 19+"), _no_jars),
    Golden("group-protocol", ROOT / "tests" / "unit" / "connect" / "data" / "group_protocol_golden.txt",
           ("group_protocol_golden.jsh", "group_protocol_v1_golden.jsh"), lambda: jdk(lambda major: major >= 17,
                                                                                        "JDK 17+"), _connect_runtime),
    Golden("java17-unescaped-bmp", ROOT / "tests" / "unit" / "mongodb" / "data" / "java17_unescaped_bmp_ranges.txt",
           ("unescaped_bmp.jsh",), lambda: jdk(lambda major: major == 17, "JDK 17"), _bson),
)


def record(golden: Golden) -> int:
    """Run the golden's scripts and write its file; the number of lines printed."""
    java = golden.jdk()
    classpath, versions = golden.classpath()
    printed = []
    for script in golden.scripts:
        command = [java.jshell, "-q", *(["--class-path", classpath] if classpath else []), str(SCRIPTS / script)]
        result = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False, cwd=ROOT)
        if result.returncode != 0 or not result.stdout.strip():
            raise StackError(f"{script} failed ({result.returncode}):\n{result.stderr[-3000:]}")
        printed += result.stdout.splitlines()
    header = {"java": java.version, **versions, "scripts": [f"compat/jshell/{s}" for s in golden.scripts]}
    golden.out.write_text(HEADER + json.dumps(header) + "\n" + "".join(f"{line}\n" for line in printed), "utf-8")
    return len(printed)


def main(argv: list[str] | None = None) -> int:
    names = sys.argv[1:] if argv is None else argv
    by_name = {g.name: g for g in GOLDENS}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        print(f"unknown golden(s) {unknown}; known: {list(by_name)}", file=sys.stderr)
        return 2
    for golden in [by_name[n] for n in names] or list(GOLDENS):
        count = record(golden)
        print(f"{count} lines written to {golden.out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

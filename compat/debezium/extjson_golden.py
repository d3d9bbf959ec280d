"""Re-record the Extended JSON goldens, one per Debezium release: ``tests/unit/mongodb/data/extjson_golden.jsonl``
(the pinned release, 3.6.1) and ``extjson_golden-<release>.jsonl`` (the others: 3.6.3). Each stored BSON document
(the corpus is the ``bson`` column of the pinned release's file) written by the MongoDB Java driver that the release
bundles, as Debezium writes it: ``strict`` (``after``/``before``), ``relaxed``
(``updateDescription.updatedFields``) and ``keys`` (each top-level value as a record key ``id``). The first line
says which release, driver and JDK produced it.

    python -m compat.debezium.extjson_golden [--release 3.6.1.Final] [--out PATH]

The release defaults to the pinned one; ``tests/unit/mongodb/test_extjson.py`` checks each file with
``debezium.release`` set to its release (3.6.3 differs in the exponent sign of doubles, see
``tests/unit/mongodb/test_driver_doubles.py``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from compat.debezium import harness, releases
from stack import procs

DATA = Path(__file__).resolve().parents[2] / "tests" / "unit" / "mongodb" / "data"
GOLDEN = DATA / "extjson_golden.jsonl"
"""The pinned release's file, whose ``bson`` column is the corpus of every release's."""


def golden_path(release: str) -> Path:
    """The Extended JSON golden of ``release``."""
    return GOLDEN if release == releases.pinned() else DATA / f"extjson_golden-{release}.jsonl"


def cases(path: Path) -> list[dict[str, str]]:
    """The stored cases (name, base64 BSON), without the header line."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [row for row in rows if "bson" in row]


def record(out: Path, release: str) -> int:
    stored = cases(GOLDEN)
    plugin = releases.plugin_path(release) / "debezium-connector-mongodb"
    source = Path(__file__).with_name("DriverExtJson.java")
    javac = str(Path(procs.java()).resolve().with_name("javac"))
    with tempfile.TemporaryDirectory(prefix="driver-extjson-") as tmp:
        subprocess.run([javac, "-d", tmp, "-cp", f"{plugin}/*", str(source)], check=True, timeout=120)
        result = subprocess.run([procs.java(), "-cp", f"{plugin}/*:{tmp}", "DriverExtJson"],
                                input="".join(f"{c['name']}\t{c['bson']}\n" for c in stored), capture_output=True,
                                text=True, check=True, timeout=300)
    written = [json.loads(line) for line in result.stdout.splitlines()]
    header = {"recorded_with": {"debezium": release, "mongodb_java_driver": releases.driver_version(release),
                                "java": releases.java_version()}}
    lines = [json.dumps(header)]
    for case, java in zip(stored, written, strict=True):
        assert case["name"] == java["name"]
        lines.append(json.dumps({"name": case["name"], "bson": case["bson"], "strict": java["strict"],
                                 "relaxed": java["relaxed"], "keys": java["keys"]}, ensure_ascii=False))
    out.write_text("\n".join(lines) + "\n")
    return len(written)


def main(argv: list[str] | None = None) -> int:
    return harness.release_record_main(argv, __doc__, golden_path, record, "documents", minimum=len(cases(GOLDEN)))


if __name__ == "__main__":
    sys.exit(main())

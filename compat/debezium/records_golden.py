"""Re-record ``tests/unit/mongodb/data/debezium_records_golden.jsonl``: each stored change event (the corpus is the
``event`` column of the file itself, base64 BSON change-stream documents) fed through Debezium's own classes as its
streaming source does (``MongoDbOffsetContext``, ``MongoDbSchema``/``MongoDbCollectionSchema``,
``MongoDbChangeRecordEmitter`` with ``ts_ms`` fixed at 1800000000000, ``topic.prefix=fulfillment``), key and value
written by Kafka Connect's JsonConverter (``schemas.enable=true``), the offset by a schemaless one (the offsets
topic's form). The first line says which versions produced it.

    python -m compat.debezium.records_golden [--release 3.6.1.Final] [--out PATH]

Java code in ``DebeziumRecords.java``; the jars are the release's plugin directory and the Kafka Connect libs pinned
in compat/pom.xml (both fetched once into ``.cache``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from compat import java_connect
from compat.debezium import harness, releases
from stack import procs

GOLDEN = Path(__file__).resolve().parents[2] / "tests" / "unit" / "mongodb" / "data" / "debezium_records_golden.jsonl"


def events(path: Path) -> list[str]:
    """The stored change events (base64 BSON), without the header line."""
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    return [row["event"] for row in rows if "event" in row]


def record(out: Path, release: str) -> int:
    stored = events(GOLDEN)
    plugin = releases.plugin_path(release) / "debezium-connector-mongodb"
    classpath = f"{plugin}/*:{java_connect.ensure_libs()}/*"
    java = procs.java()
    javac = str(Path(java).resolve().with_name("javac"))
    with tempfile.TemporaryDirectory(prefix="debezium-records-") as tmp:
        subprocess.run([javac, "-d", tmp, "-cp", classpath, str(Path(__file__).with_name("DebeziumRecords.java"))],
                       check=True, timeout=120)
        result = subprocess.run([java, "-cp", f"{classpath}:{tmp}", "DebeziumRecords"],
                                input="".join(f"{event}\n" for event in stored), capture_output=True, text=True,
                                check=True, timeout=300)
    written = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    header = {"recorded_with": {"debezium": release, "kafka_connect": java_connect.connect_version(),
                                "java": releases.java_version(java)}}
    lines = [json.dumps(header)]
    for event, java_record in zip(stored, written, strict=True):
        lines.append(json.dumps({"event": event, "topic": java_record["topic"], "key": java_record["key"],
                                 "value": java_record["value"], "offset": java_record["offset"]}))
    out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(written)


def main(argv: list[str] | None = None) -> int:
    return harness.release_record_main(argv, __doc__, GOLDEN, record, "records", minimum=len(events(GOLDEN)))


if __name__ == "__main__":
    sys.exit(main())

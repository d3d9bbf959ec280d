"""Re-record ``tests/unit/connect/data/validate_transforms_java.json``: ``PUT /connector-plugins/
FileStreamSourceConnector/config/validate`` with transforms (Connect's SMTs, Debezium's ExtractNewDocumentState),
predicates and converters, answered by the real Kafka Connect with the Debezium MongoDB jars on its class path, plus its
``GET /connector-plugins?connectorsOnly=false``. The requests are the ones stored in the file (its corpus); the
replies are replaced, their documentation texts dropped (Java's words, not compared). Its ``recorded_with`` names
the Kafka Connect, Debezium and JDK versions.

    python -m compat.validate_transforms [--out PATH]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import stack
from compat import java_connect
from compat.debezium import harness, releases
from compat.java_connect import JavaConnect
from compat.rest_side_by_side import http
from stack import procs
from stack.worker import distributed_properties

GOLDEN = Path(__file__).resolve().parents[1] / "tests" / "unit" / "connect" / "data" / "validate_transforms_java.json"
PLUGIN = "FileStreamSourceConnector"


class ClasspathDebeziumConnect(JavaConnect):
    """Java Connect with the Debezium MongoDB plugin's jars on its class path (as the golden was first recorded:
    there, unlike on ``plugin.path``, the plugin scan also lists Debezium's CloudEventsConverter)."""

    def command(self) -> list[str]:
        command = super().command()
        index = command.index("-cp") + 1
        command[index] += f":{harness.plugin_path()}/debezium-connector-mongodb/*"
        return command


def _without_documentation(reply: Any) -> Any:
    for entry in reply.get("configs", []):
        entry.get("definition", {}).pop("documentation", None)
    return reply


def record(out: Path) -> int:
    stored: dict[str, Any] = json.loads(GOLDEN.read_text("utf-8"))
    cases = {name: case for name, case in stored.items() if isinstance(case, dict) and "request" in case}
    with tempfile.TemporaryDirectory(prefix="validate-transforms-") as tmp:
        state = Path(tmp)
        kafka_port, rest_port = stack.free_ports(2)
        endpoints = stack.start(state / "stack", kafka_port=kafka_port, mongo=False)
        connect = ClasspathDebeziumConnect(state / "connect", rest_port,
                                           distributed_properties(endpoints.kafka_bootstrap, rest_port,
                                                                  group_id="validate-transforms"))
        try:
            connect.start()
            result: dict[str, Any] = {}
            for name, case in cases.items():
                reply = http(connect.address, "PUT", f"/connector-plugins/{PLUGIN}/config/validate",
                             body=case["request"])
                if reply.status != 200:
                    raise RuntimeError(f"{name}: validate answered {reply.status}: {reply.text[:300]}")
                result[name] = {"request": case["request"], "reply": _without_documentation(reply.body)}
            plugins = http(connect.address, "GET", "/connector-plugins?connectorsOnly=false")
            result["plugins"] = plugins.body
        finally:
            connect.stop()
            stack.stop(state / "stack")
    header = {"kafka_connect": java_connect.connect_version(), "debezium": releases.pinned(), "java": _java_version()}
    out.write_text(json.dumps({"recorded_with": header, **result}, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return len(cases)


def _java_version() -> str:
    result = subprocess.run([procs.java(), "-version"], capture_output=True, text=True, timeout=60, check=False)
    return (result.stderr.splitlines() or ["?"])[0]


def main(argv: list[str] | None = None) -> int:
    return harness.record_main(argv, __doc__, GOLDEN, record, "validate replies", minimum=1)


if __name__ == "__main__":
    sys.exit(main())

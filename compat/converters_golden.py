"""Re-record ``tests/unit/converters/java_golden.json``: the cases of ``tests/unit/converters/java_golden_cases.py``
run through Kafka Connect's own ``JsonConverter`` (bytes per converter config, or the exception) and
``SimpleHeaderConverter`` (header bytes written, schema and value inferred from header text), from the Kafka Connect
jars pinned in compat/pom.xml (fetched once into ``.cache/connect-<version>/libs``).

    python -m compat.converters_golden [--out PATH]

Needs a JDK 19 or newer (``JAVA_HOME``, ``java`` on PATH or ``/usr/lib/jvm/*``): JDK 17 prints some floats and
doubles with one digit more (``Float.toString``/``Double.toString`` before JDK-4511638), and our converter follows
the newer, shortest output. Schemas cross to Java as JsonConverter's schema JSON (that side is golden-tested by the
same file), values as a typed tree (see ``ConvertersGolden.java``).
"""

from __future__ import annotations

import base64
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from compat import java_connect
from compat.debezium import harness
from connect.api.data import Schema, Struct, Type
from converters.json import JsonConverter
from stack import procs
from stack.procs import StackError

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "unit" / "converters" / "java_golden.json"
SOURCE = Path(__file__).with_name("ConvertersGolden.java")
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_SCHEMAS = JsonConverter()
_SCHEMAS.configure({"schemas.enable": "true"}, False)
_INT_KINDS = {Type.INT8: "int8", Type.INT16: "int16", Type.INT32: "int32", Type.INT64: "int64"}


def schema_json(schema: Schema | None) -> Any:
    """``schema`` as JsonConverter's schema JSON (Java reads it with ``asConnectSchema``)."""
    return None if schema is None else json.loads(_SCHEMAS.as_json_schema(schema))


def _double(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)


def value_json(value: Any, schema: Schema | None) -> Any:
    """``value`` as the typed tree ConvertersGolden.java builds the Java value from (numbers per ``schema``)."""
    kind = None if schema is None else schema.type
    if value is None:
        return None
    if isinstance(value, Struct):
        return {"struct": schema_json(value.schema), "fields": {
            name: value_json(item, value.schema.field(name).schema)  # type: ignore[union-attr]
            for name, item in value.values.items()}}
    if isinstance(value, bool):
        return {"boolean": value}
    if isinstance(value, int) and kind not in (Type.FLOAT32, Type.FLOAT64):
        return {_INT_KINDS.get(kind, "int") if kind is not None else "int": value}
    if isinstance(value, (int, float)):
        return {"float" if kind is Type.FLOAT32 else "double": _double(float(value))}
    if isinstance(value, str):
        return {"string": value}
    if isinstance(value, bytes):
        return {"bytes": base64.b64encode(value).decode()}
    if isinstance(value, Decimal):
        return {"decimal": str(value)}
    if isinstance(value, datetime):
        return {"date_ms": (value - EPOCH) // timedelta(milliseconds=1)}
    if isinstance(value, date):
        return {"date_ms": (value - date(1970, 1, 1)) // timedelta(milliseconds=1)}
    if isinstance(value, time):
        return {"date_ms": (datetime.combine(date(1970, 1, 1), value, UTC) - EPOCH) // timedelta(milliseconds=1)}
    if isinstance(value, list):
        items = None if schema is None else schema.value_schema
        return {"array": [value_json(item, items) for item in value]}
    if isinstance(value, dict):
        keys, values = (None, None) if schema is None else (schema.key_schema, schema.value_schema)
        return {"map": [[value_json(k, keys), value_json(v, values)] for k, v in value.items()]}
    raise TypeError(f"no Java form for {type(value).__name__}")


def cases() -> dict[str, Any]:
    """Every case of java_golden_cases.py in the form ConvertersGolden.java reads."""
    from tests.unit.converters import java_golden_cases as c

    return {
        "json_converter": [{"name": name, "config": c.JSON_CONFIGS[config], "schema": schema_json(schema),
                            "value": value_json(value, schema)} for name, (config, schema, value) in
                           c.JSON_CASES.items()],
        "simple_header_converter": [{"name": name, "schema": schema_json(schema), "value": value_json(value, schema)}
                                    for name, (schema, value) in c.HEADER_CASES.items()],
        "header_inference": list(c.HEADER_TEXTS),
    }


def _major(java: str) -> tuple[int, str]:
    result = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60, check=False)
    first = (result.stderr.splitlines() or ["?"])[0]
    found = re.search(r'version "(\d+)', first)
    return (int(found.group(1)) if found else 0), first


def java_19() -> tuple[str, str]:
    """A ``java`` of JDK 19+ and its version line."""
    candidates = [procs.java()]
    if os.environ.get("JAVA_HOME") is None:
        candidates += sorted(str(p) for p in Path("/usr/lib/jvm").glob("*/bin/java"))
    for java in candidates:
        major, line = _major(java)
        if major >= 19:
            return java, line
    raise StackError(f"no JDK 19+ among {candidates}: set JAVA_HOME to one (JDK 17 prints floats differently)")


def record(out: Path) -> int:
    libs = java_connect.ensure_libs()
    java, java_line = java_19()
    with tempfile.TemporaryDirectory(prefix="converters-golden-") as tmp:
        given, got = Path(tmp) / "cases.json", Path(tmp) / "results.json"
        given.write_text(json.dumps(cases()), encoding="utf-8")
        subprocess.run([java, "-cp", f"{libs}/*", str(SOURCE), str(given), str(got)], check=True, timeout=300)
        results = json.loads(got.read_text("utf-8"))
    header = {"kafka_connect": java_connect.connect_version(), "classes": [
        "org.apache.kafka.connect.json.JsonConverter", "org.apache.kafka.connect.storage.SimpleHeaderConverter"],
        "java": java_line}
    out.write_text(json.dumps({"recorded_with": header, **results}, indent=1, ensure_ascii=False), encoding="utf-8")
    return sum(len(section) for section in results.values())


def main(argv: list[str] | None = None) -> int:
    return harness.record_main(argv, __doc__, GOLDEN, record, "cases", minimum=262)


if __name__ == "__main__":
    sys.exit(main())

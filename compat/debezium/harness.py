"""The real Debezium MongoDB connector (Maven Central, pinned in ``compat/debezium/pom.xml``) as a plugin of the
real Kafka Connect (``compat/pom.xml``), plus the scripted operations and record normalisation shared by the
golden-file and offset hand-over checks.

The plugin jars are fetched once into the git-ignored ``.cache/debezium-mongodb-<version>/plugins/``; the jars
the Connect runtime already provides (Kafka clients, Connect API, SLF4J) are left out of the plugin directory.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import re
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from bson import Binary, Code, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp

import stack
from compat.debezium import releases
from compat.java_connect import JavaConnect, connect_version
from stack.worker import distributed_properties

CONNECTOR_CLASS = "io.debezium.connector.mongodb.MongoDbConnector"


def debezium_version() -> str:
    """The Debezium version pinned in the pom."""
    return releases.pinned()


def plugin_path(release: str | None = None) -> Path:
    """The ``plugin.path`` directory holding ``release``'s MongoDB connector (default: the pinned one)."""
    return releases.plugin_path(release)


class DebeziumConnect(JavaConnect):
    """Apache Kafka Connect (distributed) with the Debezium MongoDB connector on its plugin path."""

    name = "debezium-connect"

    def __init__(self, state_dir: Path, port: int, properties: Mapping[str, str], release: str | None = None,
                 plugins: Path | None = None) -> None:
        super().__init__(state_dir, port, {**properties, "plugin.path": str(plugins or plugin_path(release))})


def plugin_path_without(release: str | None, left_out: tuple[str, ...], into: Path) -> Path:
    """A ``plugin.path`` under ``into`` holding links to ``release``'s plugin jars but those whose names start with
    one of ``left_out`` (then loaded from the Connect runtime's class path)."""
    for plugin in (entry for entry in plugin_path(release).iterdir() if entry.is_dir()):
        target = into / plugin.name
        target.mkdir(parents=True)
        for jar in plugin.iterdir():
            if not jar.name.startswith(left_out):
                (target / jar.name).symlink_to(jar.resolve())
    return into


@contextlib.contextmanager
def running(name: str, release: str | None = None,
            left_out: tuple[str, ...] = ()) -> Iterator[tuple[Any, DebeziumConnect]]:
    """A Kafka broker, a SecantusDB and Debezium on Kafka Connect, on free ports in a temporary directory, all
    stopped on leaving; yields the stack's endpoints and the Connect worker. ``left_out``: prefixes of plugin jars
    left to the runtime's class path (:func:`plugin_path_without`)."""
    with tempfile.TemporaryDirectory(prefix=f"debezium-{name}-") as tmp:
        state = Path(tmp)
        kafka_port, mongo_port, rest_port = stack.free_ports(3)
        endpoints = stack.start(state / "stack", kafka_port=kafka_port, mongo_port=mongo_port)
        properties = distributed_properties(endpoints.kafka_bootstrap, rest_port, group_id=f"debezium-{name}")
        plugins = plugin_path_without(release, left_out, state / "plugins") if left_out else None
        connect = DebeziumConnect(state / "connect", rest_port, properties, release, plugins)
        try:
            connect.start()
            yield endpoints, connect
        finally:
            connect.stop()
            stack.stop(state / "stack")


def post_connector(base: str, body: dict[str, object]) -> None:
    """POST /connectors to the Connect worker at ``base``; anything but 201 raises."""
    status = request(base, "POST", "/connectors", body)
    if status != 201:
        raise RuntimeError(f"POST /connectors answered {status}")


def request(base: str, method: str, path: str, body: Any = None) -> int:
    """One REST call to a Connect worker; its HTTP status."""
    data = None if body is None else json.dumps(body).encode()
    call = urllib.request.Request(f"{base}{path}", data=data, method=method,
                                  headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(call, timeout=60) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as err:
        if err.code >= 500 or (method, path) == ("POST", "/connectors"):
            print(f"{method} {path} answered {err.code}: {err.read()[:2000]!r}", flush=True)
        return int(err.code)


def wait_running(base: str, name: str, timeout: float = 120) -> None:
    """Until connector ``name`` and its first task run on the worker at ``base``; a FAILED task raises."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{base}/connectors/{name}/status", timeout=10) as reply:
                status = json.loads(reply.read())
            tasks = status.get("tasks", [])
            if tasks and tasks[0]["state"] == "FAILED":
                raise AssertionError(tasks[0].get("trace"))
            if status["connector"]["state"] == "RUNNING" and tasks and tasks[0]["state"] == "RUNNING":
                return
        except urllib.error.HTTPError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"{name} never ran on {base}")


def join_group(state_dir: Path, bootstrap: str, group: str, name: str, config: Mapping[str, str]) -> DebeziumConnect:
    """Debezium on Kafka Connect started on a free port in Connect group ``group`` with connector ``name``
    running (created, or already in the group's config topic: it then starts by itself)."""
    port = stack.free_port()
    connect = DebeziumConnect(state_dir / f"debezium-{port}", port,
                              distributed_properties(bootstrap, port, group_id=group))
    connect.start()
    assert request(connect.address, "POST", "/connectors", {"name": name, "config": dict(config)}) in (201, 409)
    wait_running(connect.address, name)
    return connect


def record_main(argv: list[str] | None, doc: str | None, default: Path, record: Callable[[Path], int],
                unit: str, minimum: int = 0) -> int:
    """The command line of a recording script: ``--out`` (``default``), run ``record``, report; 1 when fewer
    than ``minimum`` ``unit`` were written."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=default)
    args = parser.parse_args(argv)
    began = time.monotonic()
    count = record(args.out)
    print(f"{count} {unit} written to {args.out} in {time.monotonic() - began:.0f} s")
    return 0 if count >= minimum else 1


def release_record_main(argv: list[str] | None, doc: str | None, default: Path | Callable[[str], Path],
                        record: Callable[[Path, str], int], unit: str, minimum: int = 0) -> int:
    """:func:`record_main` with ``--release`` (the Debezium releases obtainable here, the pinned one by default);
    ``default``: the output path, or a function of the release giving it."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--release", choices=releases.available(), default=releases.pinned())
    known, rest = parser.parse_known_args(argv)
    out = default(known.release) if callable(default) else default
    return record_main(rest, doc, out, lambda out: record(out, known.release), unit, minimum)


def recorded_with(release: str | None = None) -> str:
    """The first line of a golden JSON Lines file: which Debezium, Kafka Connect, SecantusDB and JDK (whose
    ``Double.toString`` spells the doubles of Debezium's Extended JSON) produced it."""
    from importlib.metadata import version

    return json.dumps({"recorded_with": {"debezium": release or releases.pinned(), "kafka_connect": connect_version(),
                                         "mongodb": f"SecantusDB {version('secantusdb')}",
                                         "java": releases.java_version()}})


def golden_lines(path: Path) -> list[dict[str, Any]]:
    """The records of a golden JSON Lines file, without its ``recorded_with`` header line."""
    # split on newlines only: str.splitlines() also splits on U+2028/U+2029 and U+0085, written unescaped
    rows = [json.loads(line) for line in path.read_text("utf-8").split("\n") if line.strip()]
    return [row for row in rows if "recorded_with" not in row]


# -- the scripted operations --------------------------------------------------------------------------------------
DB = "golden"
TYPES_DOC: dict[str, Any] = {
    "_id": ObjectId("65a0f0c1e4b0a1b2c3d4e5f6"),
    "int32": 42, "int64": Int64(2**40), "double": 3.25, "whole_double": 10.0, "tiny": 1.0e-7, "huge": 1.5e300,
    "nan": float("nan"), "inf": float("inf"), "neg_inf": float("-inf"), "neg_zero": -0.0,
    "decimal": Decimal128("1234.5678901234567890"), "string": "plain", "unicode": "Grüße, 東京, 😀, \u2028",
    "quote": 'say "hi"\\ \n\t', "bool": True, "null": None,
    "date": datetime.datetime(2024, 2, 29, 12, 30, 45, 120000, tzinfo=datetime.UTC),
    "date_1960": datetime.datetime(1960, 1, 1, tzinfo=datetime.UTC),
    "date_2100": datetime.datetime(2100, 12, 31, 23, 59, 59, 999000, tzinfo=datetime.UTC),
    "binary0": Binary(b"kafka", 0), "uuid": Binary(bytes(range(16)), 4), "binary128": Binary(b"\x01\x02", 128),
    "regex": Regex("^ab.*c$", "im"), "timestamp": Timestamp(1700000000, 7), "minkey": MinKey(), "maxkey": MaxKey(),
    "code": Code("function() { return 1; }"),
    "nested": {"a": [1, [2, 3], {"b": None}], "empty": {}, "arr": []},
}
OVERSIZE_THRESHOLD = 10_000
KEY_IDS: list[Any] = [
    1234, Int64(2147483657), 12.5, "string-id", {"company": 32, "dept": "home"},
    datetime.datetime(2017, 10, 19, 9, 47, 33, 123000, tzinfo=datetime.UTC), Decimal128("123.45"),
    Binary(b"kafka", 0),
]


def run_operations(client: Any) -> None:
    """Every event type on fixed documents: inserts of every BSON type and key type, updates ($set, $unset,
    array truncation), a replace, a delete, and a multi-collection transaction."""
    db = client[DB]
    db.create_collection("types")
    db.create_collection("keys")
    db.create_collection("orders")
    types = db["types"]
    types.insert_one(TYPES_DOC)
    types.insert_one({"_id": 2, "items": [1, 2, 3, 4], "name": "two", "drop": "me"})
    types.update_one({"_id": 2}, {"$set": {"name": "TWO", "nested.deep": {"x": Int64(1)}}, "$unset": {"drop": ""}})
    types.update_one({"_id": 2}, {"$push": {"items": {"$each": [], "$slice": 2}}})
    types.replace_one({"_id": 2}, {"replaced": True, "when": datetime.datetime(2020, 1, 1, tzinfo=datetime.UTC)})
    types.delete_one({"_id": TYPES_DOC["_id"]})
    for key in KEY_IDS:
        db["keys"].insert_one({"_id": key, "v": 1})
    with client.start_session() as session, session.start_transaction():
        db["orders"].insert_one({"_id": 1, "qty": 3}, session=session)
        db["types"].insert_one({"_id": 3, "in": "txn"}, session=session)
        db["orders"].update_one({"_id": 1}, {"$inc": {"qty": 1}}, session=session)
    db["orders"].insert_one({"_id": 2, "after": "txn"})
    # oversize documents: over OVERSIZE_THRESHOLD bytes an event is skipped (cursor.oversize.handling.mode=skip)
    big = db["big"]
    big.insert_one({"_id": 1, "blob": "x" * (OVERSIZE_THRESHOLD // 2)})  # large, under the threshold: captured
    big.insert_one({"_id": 2, "blob": "y" * (OVERSIZE_THRESHOLD * 2)})  # over it: skipped
    big.update_one({"_id": 1}, {"$set": {"more": "z" * OVERSIZE_THRESHOLD}})  # now over it: the update is skipped
    big.delete_one({"_id": 2})  # a delete has no document: captured
    big.insert_one({"_id": 3, "small": True})


def connector_config(mongo_uri: str, prefix: str, start_op_time: int) -> dict[str, str]:
    """The config both connectors get: start at ``start_op_time`` (before the operations), no snapshot, events of
    documents over ``OVERSIZE_THRESHOLD`` bytes skipped."""
    return {
        "connector.class": CONNECTOR_CLASS, "mongodb.connection.string": mongo_uri, "topic.prefix": prefix,
        "database.include.list": DB, "snapshot.mode": "no_data", "capture.start.op.time": str(start_op_time),
        "provide.transaction.metadata": "true", "tasks.max": "1",
        "cursor.oversize.handling.mode": "skip", "cursor.oversize.skip.threshold": str(OVERSIZE_THRESHOLD),
    }


def op_time(timestamp: Timestamp) -> int:
    """A BSON timestamp as the long ``capture.start.op.time`` wants."""
    return timestamp.time << 32 | timestamp.inc


# -- normalisation -----------------------------------------------------------------------------------------------
_VARYING_SOURCE = ("ts_ms", "ts_us", "ts_ns", "wallTime", "ord", "lsid", "txnNumber", "version")
_LSID = re.compile(r'\{"id": \{"\$binary": "[^"]*","\$type": "04"\}[^}]*\}(:\d+)?')


_RAW_VARYING = (
    (re.compile(rb'"(ts_ms|ts_us|ts_ns|wallTime|txnNumber)":-?\d+'), rb'"\1":0'),
    (re.compile(rb'"ord":\d+'), rb'"ord":0'),  # the increment within a cluster time; a snapshot's -1 stays
    (re.compile(rb'"lsid":"(?:[^"\\]|\\.)*"'), rb'"lsid":"<lsid>"'),
    # a transaction id: the session id's Extended JSON (a random UUID) and the transaction number; only a string
    # that starts with it (a document holding a UUID is data)
    (re.compile(rb'"\{\\"id\\": \{\\"\$binary\\": \\"[A-Za-z0-9+/=]*\\",\\"\$type\\": \\"04\\"\}'
                rb'(?:[^"\\]|\\.)*"'), rb'"<txn>"'),
)


def raw_text(data: bytes | None) -> str | None:
    """A record key or value as the bytes Connect wrote, with only the run-specific values replaced in the bytes
    themselves (times, cluster-time increments, session and transaction ids): spacing, key order, number and string
    spelling stay as written."""
    if data is None:
        return None
    for pattern, replacement in _RAW_VARYING:
        data = pattern.sub(replacement, data)
    return data.decode("utf-8")


def raw_headers(headers: Any) -> list[list[str | None]]:
    """The record headers as written, the run id replaced."""
    return [[name, None if value is None else ("<run id>" if name == "__debezium.context.runId"
                                               else value.decode("utf-8", "replace"))]
            for name, value in headers or ()]


def normalise(topic: str, key: bytes | None, value: bytes | None, partition: int | None = None,
              headers: Any = None) -> dict[str, Any]:
    """One record with what legitimately differs between runs replaced: times, cluster-time increments, session
    ids and transaction numbers (random per session), the connector version; and its bytes (:func:`raw_text`),
    partition and headers."""
    def scrub(obj: Any, parent: str = "") -> Any:
        if isinstance(obj, dict):
            out = {}
            for k, v in obj.items():
                if parent == "source" and k in _VARYING_SOURCE and v is not None:
                    out[k] = f"<{k}>"
                elif k == "ts_ms" and v is not None:
                    out[k] = "<ts_ms>"
                else:
                    out[k] = scrub(v, k)
            return out
        if isinstance(obj, list):
            return [scrub(v, parent) for v in obj]
        if isinstance(obj, str):
            return _LSID.sub("<txn>", obj)
        return obj
    return {"topic": topic, "partition": partition,
            "key": scrub(json.loads(key)) if key is not None else None,
            "value": scrub(json.loads(value)) if value is not None else None,
            "raw_key": raw_text(key), "raw_value": raw_text(value), "headers": raw_headers(headers)}


def first_record(bootstrap: str, topic: str, timeout: float = 120.0) -> dict[str, Any]:
    """The first record of ``topic`` (e.g. a heartbeat: how many there are depends on timing), normalised."""
    import time

    from kafka import KafkaConsumer

    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                             auto_offset_reset="earliest", metadata_max_age_ms=1000)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=500, max_records=1).values():
                r = batch[0]
                return normalise(r.topic, r.key, r.value, r.partition, r.headers)
        raise TimeoutError(f"no record in {topic} within {timeout:.0f} s")
    finally:
        consumer.close()


def read_records(bootstrap: str, prefix: str, minimum: int, timeout: float = 120.0, quiet: float = 8.0,
                 exact: bool = False) -> list[dict[str, Any]]:
    """Every record of the topics named ``<prefix>.*`` (with ``exact``: of the topic ``prefix``), normalised, in
    topic then offset order: waits for at least ``minimum`` records, then until nothing new arrives for ``quiet``
    seconds."""
    import time

    from kafka import KafkaConsumer

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                             auto_offset_reset="earliest", metadata_max_age_ms=1000)
    try:
        consumer.subscribe(pattern=f"^{re.escape(prefix)}$" if exact else f"^{re.escape(prefix)}\\..*")
        records: list[Any] = []
        deadline = time.monotonic() + timeout
        last_new = time.monotonic()
        while time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=500).values():
                records.extend(batch)
                last_new = time.monotonic()
            if len(records) >= minimum and time.monotonic() - last_new > quiet:
                break
        records.sort(key=lambda r: (r.topic, r.partition, r.offset))
        return [normalise(r.topic, r.key, r.value, r.partition, r.headers) for r in records]
    finally:
        consumer.close()

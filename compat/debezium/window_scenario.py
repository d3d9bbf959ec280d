"""The fourth golden scenario: an incremental snapshot whose chunk windows see concurrent writes to their own keys,
de-duplicated as Debezium does.

    python -m compat.debezium.golden --scenario window --release 3.6.3.Final

Debezium reads each chunk between two watermarks it inserts into the signal collection (``<chunk>-open``, the
chunk's queries, ``<chunk>-close``); when its change stream later delivers a write to a key of the chunk between
the two watermarks, the chunk's ``r`` record of that key is dropped (the streamed event is newer), and what is left
of the chunk is sent when the close watermark is streamed. A write from outside must therefore commit between the
two watermark inserts, which a connector on a local server makes a few milliseconds apart. The trigger here: the
connector talks to SecantusDB through Toxiproxy, and while the snapshot runs a ``latency`` toxic delays every reply
by :data:`LATENCY_MS`, so the chunk's queries and its close watermark come a few latencies after the open
watermark commits. SecantusDB's profiler (level 2 on the scenario's database) records each command once it has
run, in order: the scenario, connected directly, polls ``system.profile`` and makes each window's writes as soon
as its open watermark's insert is there (``opened``, and ``before_query``: these must run before the chunk's query),
or as soon as the chunk's first query (ascending ``_id``) is there after it (``queried``). Afterwards it checks in
the profile that every ``before_query`` write ran before the chunk's query, and in the server's change stream that
every write lies between its window's two watermarks, and fails otherwise (so a recording or a test run never
passes on a missed window).

The chunks (two documents each; ``ints`` holds 1 to 7, 9 and 10) and their writes:

1. ``{1, 2}`` opened: ``1`` updated (its read dropped: only ``2`` is read), ``7`` updated (a later chunk's key:
   streamed, and read later with the update), ``_id 2`` of ``others`` (captured, not snapshotted) updated (the
   window is per collection: ``2`` is still read);
2. ``{3, 4}`` opened: ``3`` replaced, ``4`` updated (every read dropped, nothing sent at the close), ``100``
   inserted (past the maximum key, fixed when the collection's snapshot began: streamed, never read);
3. ``{6, 7}``: ``5`` deleted before the query (so the chunk reads ``6`` and ``7``; the delete and its tombstone
   streamed), ``6`` updated, ``7`` read (with its update of window 1);
4. ``{9, 10}`` queried: ``9`` deleted (its read dropped; the delete and its tombstone streamed), ``8`` inserted
   (inside the chunk's range, after its query: streamed, never read), ``10`` read.

A delete or an insert in the chunk's range is made either before the chunk's query (it changes which keys the
chunk reads) or after it, never at an unknown moment. An update or a replace gives the same records before or
after the query (the key stays in the chunk; the read is dropped). Every chunk sends at most one ``r`` record, so
every record compares as written and in order (Debezium sends a chunk's reads in ``ConcurrentHashMap`` order,
which changes from one JVM to the next: see :mod:`.incremental_scenario`).
"""

from __future__ import annotations

import contextlib
import json
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bson import Int64
from pymongo import uri_parser

from compat.debezium import harness, snapshot_scenario
from stack.toxiproxy import ToxiproxyServer

DB = "golden_win"
SIGNAL_ID = "golden-window-1"
CHUNK = 2
LATENCY_MS = 1000
"""The delay of every reply to the connector while the snapshot runs: a window lasts at least two of them (the open
watermark's acknowledgement, then the chunk query's reply), at least one after the chunk's query; the scenario
reacts within a poll of :data:`POLL_S`."""
POLL_S = 0.02
INTS: list[dict[str, Any]] = [
    {"_id": 1, "name": "one", "n": Int64(2**40)}, {"_id": 2, "double": 1.5e300},
    {"_id": 3, "nested": {"a": [1, {"b": None}]}}, {"_id": 4, "empty": {}, "arr": []},
    {"_id": 5, "unicode": "Grüße, 😀"}, {"_id": 6, "name": "six"}, {"_id": 7, "name": "seven"},
    {"_id": 9, "name": "nine"}, {"_id": 10, "name": "ten"},
]
OTHERS: list[dict[str, Any]] = [{"_id": 2, "name": "other two"}]
Write = tuple[str, int, Callable[[Any], Any]]


@dataclass(frozen=True)
class Window:
    """The writes made in one chunk's window, each (collection, ``_id``, the write on that collection): once its
    open watermark exists (``before_query`` ones must also run before the chunk's query), and once its query has
    run."""

    opened: tuple[Write, ...] = ()
    before_query: tuple[Write, ...] = ()
    queried: tuple[Write, ...] = ()

    @property
    def writes(self) -> tuple[Write, ...]:
        return (*self.opened, *self.before_query, *self.queried)


WINDOWS: tuple[Window, ...] = (
    Window(opened=(("ints", 1, lambda c: c.update_one({"_id": 1}, {"$set": {"name": "ONE", "window": 1}})),
                   ("ints", 7, lambda c: c.update_one({"_id": 7}, {"$set": {"window": 1}})),
                   ("others", 2, lambda c: c.update_one({"_id": 2}, {"$set": {"window": 1}})))),
    Window(opened=(("ints", 3, lambda c: c.replace_one({"_id": 3}, {"replaced": True, "window": 2})),
                   ("ints", 4, lambda c: c.update_one({"_id": 4}, {"$set": {"arr": [2.5]}, "$unset": {"empty": ""}})),
                   ("ints", 100, lambda c: c.insert_one({"_id": 100, "past": "the maximum"})))),
    Window(before_query=(("ints", 5, lambda c: c.delete_one({"_id": 5})),),
           opened=(("ints", 6, lambda c: c.update_one({"_id": 6}, {"$set": {"window": 3}})),)),
    Window(queried=(("ints", 9, lambda c: c.delete_one({"_id": 9})),
                    ("ints", 8, lambda c: c.insert_one({"_id": 8, "name": "eight"})))),
)
STREAMED = sum(len(w.writes) for w in WINDOWS) + 2
"""The writes' records and the deletes' tombstones."""
READS = 3
"""``2`` (chunk 1), ``7`` (chunk 3) and ``10`` (chunk 4): every other read is dropped."""
NOTIFICATIONS = 1 + 1 + len(WINDOWS) + 1 + 1
"""SKIPPED (the initial snapshot), STARTED, IN_PROGRESS per chunk, TABLE_SCAN_COMPLETED, COMPLETED."""
RECORDS = STREAMED + READS + NOTIFICATIONS


def load(client: Any) -> None:
    db = client[DB]
    db["ints"].insert_many(INTS)
    db["others"].insert_many(OTHERS)
    for name in ("signals", "probe"):
        db.create_collection(name)


def config(mongo_uri: str, prefix: str) -> dict[str, str]:
    """The connector config of the scenario (Debezium's and ours alike); ``mongo_uri`` is the proxy's."""
    return {
        "connector.class": harness.CONNECTOR_CLASS, "mongodb.connection.string": mongo_uri, "topic.prefix": prefix,
        "collection.include.list": ",".join(f"{DB}.{c}" for c in ("ints", "others", "signals", "probe")),
        "snapshot.mode": "no_data", "tasks.max": "1", "signal.data.collection": f"{DB}.signals",
        "incremental.snapshot.chunk.size": str(CHUNK),
        "notification.enabled.channels": "sink", "notification.sink.topic.name": notification_topic(prefix),
    }


def notification_topic(prefix: str) -> str:
    return snapshot_scenario.notification_topic(prefix)


@contextlib.contextmanager
def proxied(mongo_uri: str) -> Iterator[tuple[Any, str]]:
    """Toxiproxy in front of the server of ``mongo_uri``: yields the proxy and the connection string that reaches
    the server through it (``directConnection``: SecantusDB advertises its own address, where a driver would move;
    ``replicaSet``: Debezium refuses a replica set's connection string without it)."""
    parsed = uri_parser.parse_uri(mongo_uri)
    host, port = parsed["nodelist"][0]
    replica_set = parsed["options"]["replicaSet"]
    with tempfile.TemporaryDirectory(prefix="window-proxy-") as tmp:
        import stack

        listen, api = stack.free_ports(2)
        server = ToxiproxyServer(Path(tmp), api)
        server.start()
        try:
            proxy = server.client().create_proxy("mongo", listen, f"{host}:{port}")
            yield proxy, f"mongodb://{proxy.address}/?replicaSet={replica_set}&directConnection=true"
        finally:
            server.stop()


def _stream_open(client: Any, bootstrap: str, prefix: str, timeout: float = 120) -> None:
    """Insert probe documents until one is streamed: the change stream is open, so the signal will be seen."""
    deadline = time.monotonic() + timeout
    for n in range(100_000):
        client[DB]["probe"].insert_one({"_id": n})
        try:
            harness.first_record(bootstrap, f"{prefix}.{DB}.probe", timeout=1.0)
            return
        except TimeoutError:
            if time.monotonic() > deadline:
                raise
    raise AssertionError("unreachable")


def _write_in_windows(client: Any, timeout: float = 300) -> None:
    """Make each window's writes once the profiler shows its open watermark's insert (``opened``), then the
    chunk's first query after it (``queried``)."""
    profile = client[DB]["system.profile"]
    watched = {"$or": [{"op": "insert", "ns": f"{DB}.signals", "command.documents.type": "snapshot-window-open"},
                       {"op": "query", "ns": f"{DB}.ints", "command.sort": {"_id": 1}}]}
    opened = queried = 0
    deadline = time.monotonic() + timeout
    while queried < len(WINDOWS):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{queried} of {len(WINDOWS)} chunk windows seen within {timeout:.0f} s")
        ops = [entry["op"] for entry in profile.find(watched, {"op": 1})]  # natural order: as they ran
        opens = [index for index, op in enumerate(ops) if op == "insert"]
        if opened == queried and len(opens) > opened:
            _write(client, (*WINDOWS[opened].before_query, *WINDOWS[opened].opened))
            opened += 1
        elif opened > queried and "query" in ops[opens[opened - 1] + 1:]:
            _write(client, WINDOWS[queried].queried)
            queried += 1
        else:
            time.sleep(POLL_S)


def _write(client: Any, writes: tuple[Write, ...]) -> None:
    for coll, _, write in writes:
        write(client[DB][coll])


def _check_before_queries(client: Any) -> None:
    """Every ``before_query`` write ran after its window's open watermark and before the chunk's first query (as
    SecantusDB's profiler recorded them, in order)."""
    entries = list(client[DB]["system.profile"].find({"ns": {"$in": [f"{DB}.signals", f"{DB}.ints"]}}))
    opens = [index for index, entry in enumerate(entries)
             if entry["op"] == "insert" and entry["command"]["documents"][0].get("type") == "snapshot-window-open"]
    for number, window in enumerate(WINDOWS):
        after_open = entries[opens[number] + 1:]
        query = next(index for index, entry in enumerate(after_open)
                     if entry["op"] == "query" and entry["command"].get("sort") == {"_id": 1})
        for _, doc_id, _ in window.before_query:
            if not any(_profiled_key(entry) == doc_id for entry in after_open[:query]):
                raise AssertionError(f"the write to {doc_id} did not run before chunk {number + 1}'s query")


def _profiled_key(entry: Mapping[str, Any]) -> Any:
    """The ``_id`` a profiled delete or insert of one document wrote (None for anything else)."""
    command = entry["command"]
    if entry["op"] == "remove":
        return command["deletes"][0]["q"].get("_id")
    if entry["op"] == "insert":
        return command["documents"][0].get("_id")
    return None


def _check_windows(client: Any, start: Any, timeout: float = 300) -> None:
    """Read the server's change stream from ``start``: every window's writes must lie between its watermarks."""
    order: list[tuple[str, Any]] = []
    deadline = time.monotonic() + timeout
    closes = 0
    with client[DB].watch(start_at_operation_time=start, max_await_time_ms=500) as stream:
        while closes < len(WINDOWS) and time.monotonic() < deadline:
            event = stream.try_next()
            if event is None:
                continue
            doc_id = event.get("documentKey", {}).get("_id")
            order.append((event["ns"]["coll"], doc_id))
            closes += event["ns"]["coll"] == "signals" and str(doc_id).endswith("-close")
    watermarks = [i for i, (coll, doc_id) in enumerate(order)
                  if coll == "signals" and str(doc_id).endswith(("-open", "-close"))]
    for number, window in enumerate(WINDOWS):
        if len(watermarks) < 2 * number + 2:
            raise AssertionError(f"window {number + 1} never closed: {order}")
        opened, closed = watermarks[2 * number], watermarks[2 * number + 1]
        for coll, doc_id, _ in window.writes:
            if (coll, doc_id) not in order[opened + 1:closed]:
                raise AssertionError(f"the write to {coll} {doc_id} missed window {number + 1}: {order}")


def capture(client: Any, bootstrap: str, prefix: str, create: Callable[[dict[str, str]], None],
            mongo_uri: str) -> list[dict[str, Any]]:
    """Run the scenario against a connector made by ``create(config)`` (reaching the server through a proxy): the
    records of both collections (topic then offset order), then the notifications (ids and times replaced)."""
    load(client)
    with proxied(mongo_uri) as (proxy, proxied_uri):
        create(config(proxied_uri, prefix))
        _stream_open(client, bootstrap, prefix)
        start = client.admin.command("ping")["operationTime"]
        client[DB].command("profile", 2)
        proxy.add_toxic("latency", {"latency": LATENCY_MS})
        data = {"data-collections": [f"{DB}.ints"], "type": "incremental"}
        client[DB]["signals"].insert_one({"_id": SIGNAL_ID, "type": "execute-snapshot", "data": json.dumps(data)})
        _write_in_windows(client)
        _check_windows(client, start)
        _check_before_queries(client)
        proxy.clear()
        topics = {f"{prefix}.{DB}.{c}" for c in ("ints", "others")}
        deadline = time.monotonic() + 180
        records: list[dict[str, Any]] = []
        while time.monotonic() < deadline and len(records) < STREAMED + READS:
            records = [r for r in harness.read_records(bootstrap, prefix, 1, quiet=2) if r["topic"] in topics]
        notes = harness.read_records(bootstrap, notification_topic(prefix), NOTIFICATIONS, quiet=3, exact=True)
    return [*records, *(snapshot_scenario.scrub_notification(note) for note in notes)]

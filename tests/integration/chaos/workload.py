"""The fault matrix's moving parts: a writer applying a known sequence of changes at a steady rate, an observer
reading the topic as a consumer would (through the broker's OBSERVER listener, outside the faults), and the
checks that compare what the consumer saw with MongoDB.

Every write carries a ``seq`` that names it (``"17"``, or ``"17.0"``/``"17.1"`` for the two writes of the
transaction of step 17); a delete is named ``d<id>`` and a snapshot read ``r<id>``. The observer names each
event the same way: an insert or a replace by its ``after``'s ``seq``, an update by its ``updatedFields``'
(the looked-up ``after`` of an update may already hold a later write).
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bson import json_util
from kafka import KafkaConsumer
from pymongo import MongoClient
from pymongo.collection import Collection
from pymongo.errors import DuplicateKeyError, PyMongoError

from tests.integration.support import assign_from_beginning

OP_DEADLINE = 240.0  # one write retried that long at most (MongoDB killed and restarted, or partitioned)


def _retry(action: Any, what: str) -> None:
    deadline = time.monotonic() + OP_DEADLINE
    while True:
        try:
            action()
            return
        except DuplicateKeyError:
            return  # an insert retried after its first try was applied: done
        except PyMongoError as exc:
            if time.monotonic() > deadline:
                raise AssertionError(f"writer: {what} still failing after {OP_DEADLINE:.0f} s: {exc}") from exc
            time.sleep(0.2)


class Writer:
    """Inserts, updates, replaces, deletes and a two-write transaction in a fixed mix at ``rate`` steps a second,
    on documents ``id_base + n``; every write is idempotent, so a write retried after an unknown outcome
    changes nothing twice."""

    def __init__(self, uri: str, db: str, coll: str, *, rate: float = 40.0, seed: int = 19, id_base: int = 0) -> None:
        self.client: MongoClient[dict[str, Any]] = MongoClient(uri, serverSelectionTimeoutMS=2000,
                                                                socketTimeoutMS=10_000, connectTimeoutMS=2000)
        self.coll: Collection[dict[str, Any]] = self.client[db][coll]
        self.rate = rate
        self.rng = random.Random(seed)
        self.next_id = id_base
        self.live: list[int] = []
        #: name of each change written -> ``time.monotonic()`` when MongoDB acknowledged it
        self.written: dict[str, float] = {}
        #: name of each change -> the ``_id`` of the document it changed
        self.doc_of: dict[str, int] = {}
        self.steps = 0
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="chaos-writer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop writing (idempotent); raises if a write failed for good."""
        self._stop.set()
        if self._thread.ident is not None:
            self._thread.join(timeout=OP_DEADLINE + 30)
        assert not self._thread.is_alive(), "writer did not stop"
        self.client.close()
        if self.error is not None:
            raise AssertionError(f"writer failed: {self.error}") from self.error

    def _run(self) -> None:
        started = time.monotonic()
        try:
            while not self._stop.is_set():
                self._step(self.steps)
                self.steps += 1
                self._stop.wait(max(0.0, started + self.steps / self.rate - time.monotonic()))
        except BaseException as exc:  # noqa: BLE001 - reported by stop()
            self.error = exc

    def _new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def _doc(self, seq: str, step: int) -> dict[str, Any]:
        return {"seq": seq, "v": step, "s": "x" * self.rng.randrange(10, 200), "n": {"a": step, "t": [step, seq]}}

    def _step(self, step: int) -> None:
        seq = str(step)
        roll = self.rng.random()
        if len(self.live) < 5 or roll < 0.35:
            doc_id = self._new_id()
            doc = {"_id": doc_id, **self._doc(seq, step)}
            _retry(lambda: self.coll.insert_one(doc), f"insert {doc_id}")
            self.live.append(doc_id)
        elif roll < 0.6:
            doc_id = self.rng.choice(self.live)
            change = {"$set": {"seq": seq, "v": step, "n.a": step}}
            _retry(lambda: self.coll.update_one({"_id": doc_id}, change), f"update {doc_id}")
        elif roll < 0.75:
            doc_id = self.rng.choice(self.live)
            replacement = {**self._doc(seq, step), "replaced": True}
            _retry(lambda: self.coll.replace_one({"_id": doc_id}, replacement), f"replace {doc_id}")
        elif roll < 0.9:
            doc_id = self.live.pop(self.rng.randrange(len(self.live)))
            _retry(lambda: self.coll.delete_one({"_id": doc_id}), f"delete {doc_id}")
            self.doc_of[f"d{doc_id}"] = doc_id
            self.written[f"d{doc_id}"] = time.monotonic()
            return
        else:
            self._transaction(step)
            return
        self.doc_of[seq] = doc_id
        self.written[seq] = time.monotonic()

    def _transaction(self, step: int) -> None:
        new_id, old_id = self._new_id(), self.rng.choice(self.live)
        created = {"_id": new_id, **self._doc(f"{step}.0", step)}
        change = {"$set": {"seq": f"{step}.1", "v": step}}

        def writes(session: Any) -> None:
            self.coll.replace_one({"_id": new_id}, created, upsert=True, session=session)
            self.coll.update_one({"_id": old_id}, change, session=session)

        def run() -> None:
            with self.client.start_session() as session:
                session.with_transaction(writes)

        _retry(run, f"transaction {step}")
        self.live.append(new_id)
        now = time.monotonic()
        self.doc_of[f"{step}.0"], self.doc_of[f"{step}.1"] = new_id, old_id
        self.written[f"{step}.0"] = now
        self.written[f"{step}.1"] = now


@dataclass
class Seen:
    """What the observer read: every event in Kafka order, and when each change first arrived."""

    events: list[tuple[int, str, dict[str, Any]]] = field(default_factory=list)  # (id, name, payload)
    places: list[tuple[int, int]] = field(default_factory=list)  # (partition, offset) of each event in Kafka
    arrived: dict[str, float] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)
    # records the observer's consumer gave again at a (partition, offset) it had already read (after the broker
    # came back, say): not events of the connector's, so not kept
    rereads: int = 0
    read: set[tuple[int, int]] = field(default_factory=set)


def change_name(doc_id: int, body: dict[str, Any]) -> str:
    op = body["op"]
    if op == "d":
        return f"d{doc_id}"
    if op == "r":
        return f"r{doc_id}"
    description = body.get("updateDescription")
    if op == "u" and description and description.get("updatedFields"):
        return str(json.loads(description["updatedFields"])["seq"])
    return str(json_util.loads(body["after"])["seq"])


class Observer:
    """A consumer of ``topic`` from its beginning on its own thread, outside the faults."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.bootstrap = bootstrap
        self.topic = topic
        self.seen = Seen()
        self.lock = threading.Lock()
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="chaos-observer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.ident is not None:
            self._thread.join(timeout=30)

    def _run(self) -> None:
        consumer = KafkaConsumer(bootstrap_servers=self.bootstrap, group_id=None, enable_auto_commit=False)
        try:
            assign_from_beginning(consumer, self.topic, time.monotonic() + 300)
            while not self._stop.is_set():
                for batch in consumer.poll(timeout_ms=200).values():
                    now = time.monotonic()
                    with self.lock:
                        for record in batch:
                            self._add(record, now)
        except BaseException as exc:  # noqa: BLE001 - reported by the checks
            self.error = exc
        finally:
            consumer.close()

    def _add(self, record: Any, now: float) -> None:
        place = (record.partition, record.offset)
        if place in self.seen.read:
            self.seen.rereads += 1
            return
        self.seen.read.add(place)
        if record.value is None:
            return  # a delete's tombstone
        body = json.loads(record.value)["payload"]
        doc_id = int(json_util.loads(json.loads(record.key)["payload"]["id"]))
        name = change_name(doc_id, body)
        self.seen.events.append((doc_id, name, body))
        self.seen.places.append((record.partition, record.offset))
        self.seen.arrived.setdefault(name, now)
        self.seen.counts[name] += 1

    def has(self, names: Any) -> bool:
        with self.lock:
            return all(name in self.seen.arrived for name in names)

    def has_any(self, names: Any) -> bool:
        with self.lock:
            return any(name in self.seen.arrived for name in names)

    def count(self) -> int:
        with self.lock:
            return len(self.seen.events)

    def wait_for(self, names: Any, timeout: float) -> bool:
        """True once every change of ``names`` was read; False after ``timeout`` s."""
        wanted = list(names)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.error is not None:
                raise AssertionError(f"observer failed: {self.error}") from self.error
            if self.has(wanted):
                return True
            time.sleep(0.2)
        return self.has(wanted)

    def history(self, doc_id: int, last: int = 4) -> list[tuple[int, int, str]]:
        """(partition, offset, change name) of the last ``last`` events read of ``doc_id``."""
        with self.lock:
            found = [(*place, name) for (doc, name, _), place in zip(self.seen.events, self.seen.places, strict=True)
                     if doc == doc_id]
        return found[-last:]

    def snapshot_versions(self) -> dict[int, int]:
        """The newest ``v`` a snapshot read (``r``) saw of each document."""
        newest: dict[int, int] = {}
        with self.lock:
            for doc_id, _, body in self.seen.events:
                if body["op"] == "r" and body.get("after"):
                    newest[doc_id] = max(newest.get(doc_id, -1), int(json_util.loads(body["after"])["v"]))
        return newest

    def replay(self, *, by_position: bool = False) -> dict[int, dict[str, Any]]:
        """The collection a consumer rebuilds by applying the events in Kafka order; ``by_position``: as an
        idempotent consumer does, skipping a change event whose source position (``ts_ms``, ``ord``) is not
        after the last one applied to its document (a late copy)."""
        state: dict[int, dict[str, Any]] = {}
        applied: dict[int, tuple[int, int]] = {}
        with self.lock:
            events = list(self.seen.events)
        for doc_id, _, body in events:
            if by_position and body["op"] != "r":
                source = body["source"]
                position = (int(source["ts_ms"]), int(source.get("ord") or 0))
                if position <= applied.get(doc_id, (-1, -1)):
                    continue
                applied[doc_id] = position
            if body["op"] == "d":
                state.pop(doc_id, None)
            elif body.get("after") is not None:
                state[doc_id] = json_util.loads(body["after"])
        return state


def mongo_state(uri: str, db: str, coll: str) -> dict[int, dict[str, Any]]:
    client: MongoClient[dict[str, Any]] = MongoClient(uri, serverSelectionTimeoutMS=30_000)
    try:
        return {int(doc["_id"]): doc for doc in client[db][coll].find()}
    finally:
        client.close()


@dataclass(frozen=True)
class CellResult:
    cell: str
    written: int
    lost: int
    duplicated: int
    recover_s: float
    outcome: str
    superseded: int = 0
    stale: int = 0
    #: the records after the offset committed before the fault (None: not measured in this cell)
    dup_bound: int | None = None
    notes: tuple[str, ...] = ()

    def row(self) -> str:
        bound = "" if self.dup_bound is None else f" (≤ {self.dup_bound})"
        return (f"| {self.cell} | {self.written} | {self.lost} | {self.superseded} | {self.stale} | {self.duplicated}"
                f"{bound} | {self.recover_s:.1f} | {self.outcome} |")

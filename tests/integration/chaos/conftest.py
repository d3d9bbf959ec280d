"""The fault matrix's stack (Toxiproxy in front of Kafka and SecantusDB, started once for the package), the cell
harness, and the results table.

``make test`` runs one cell per fault kind; ``make chaos`` (``CHAOS_MATRIX=full``) runs every cell and writes the
table to ``benchmarks/chaos-results.md``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaConsumer, TopicPartition

from connectors.mongodb.snapshot import incremental_state
from connectors.mongodb.snapshot.progress import SnapshotProgress
from stack import chaos, procs
from stack.chaos import ChaosStack
from stack.worker import ConnectWorker, distributed_properties
from tests.integration.chaos.workload import CellResult, Observer, Writer, mongo_state
from tests.integration.support import Worker, create_connector, stored_offset, unique

FULL = os.environ.get("CHAOS_MATRIX") == "full"
RESULTS_FILE = procs.REPO_ROOT / "benchmarks" / "chaos-results.md"
RECOVER_TIMEOUT = 240.0
WARM_UP_EVENTS = 30

#: Worker settings of every cell: short flush interval (an offset flush is always near), a producer request
#: timeout a SIGSTOP can outlast, and lost workers' work reassigned after 5 s instead of 5 minutes.
WORKER_SETTINGS = {
    "offset.flush.interval.ms": "500",
    "producer.request.timeout.ms": "5000",
    "scheduled.rebalance.max.delay.ms": "5000",
}
#: MongoDB timeouts a partition can outlast.
MONGO_TIMEOUTS = {
    "mongodb.connect.timeout.ms": "5000",
    "mongodb.server.selection.timeout.ms": "5000",
    "mongodb.socket.timeout.ms": "10000",
    "mongodb.heartbeat.frequency.ms": "2000",
}


#: the cells collected, and the same again when every test function of the matrix is among them (-1 if not): the
#: table is recorded only when every cell collected ran
_SELECTED: list[int] = [0, 0]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without ``CHAOS_MATRIX=full`` the cells marked ``chaos_full`` are left out (deselected, not skipped).
    Runs before ``-k``/``-m`` deselect: counts every cell of the matrix (parametrized ones once per case)."""
    here = Path(__file__).parent
    mine = [item for item in items if here in item.path.parents]
    functions = {getattr(item, "originalname", item.name) for item in mine}
    defined = {line[4:].split("(")[0] for line in (here / "test_matrix.py").read_text().splitlines()
               if line.startswith("def test_")}
    _SELECTED[:] = [len(mine), len(mine) if functions == defined else -1]
    if FULL:
        return
    dropped = [item for item in items if item.get_closest_marker("chaos_full")]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if not item.get_closest_marker("chaos_full")]


@pytest.fixture(scope="package")
def chaos_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChaosStack]:
    services = chaos.start(tmp_path_factory.mktemp("chaos-stack"))
    try:
        yield services
    finally:
        services.stop()


@pytest.fixture(scope="package")
def results(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[CellResult]]:
    collected: list[CellResult] = []
    yield collected
    if not collected:
        return
    table = render(collected)
    whole = FULL and _SELECTED[0] == _SELECTED[1] == len(collected)
    target = RESULTS_FILE if whole else tmp_path_factory.getbasetemp() / "chaos-results.md"
    target.write_text(table, encoding="utf-8")
    print(f"\nchaos results ({target}):\n{table}")


def render(rows: list[CellResult]) -> str:
    return (
        "# Fault matrix: latest result\n\n"
        "Written by `make chaos` (tests/integration/chaos/). Each cell: a writer applies inserts, updates, "
        "replaces, deletes and two-write transactions at 40 steps/s through the fault; *written* counts the "
        "changes MongoDB acknowledged, *lost* those no Kafka record carries once the fault healed, *duplicated* "
        "the extra copies (in brackets their bound: the changes after the offset stored last before the fault and "
        "acknowledged before the heal; for a worker killed, the records in Kafka when it died that come after the "
        "offset it had stored last: changes at or past its stream position, snapshot reads past its snapshot's "
        "stored progress, i.e. the last emitted `_id` of each range of an initial snapshot or the last chunk's key "
        "of an incremental one, everything when it had stored none; every duplicate is one of them), "
        "*superseded* "
        "the changes carried by a later snapshot read of their document instead of "
        "their own event (a snapshot started over, as Debezium does when none of its offsets was stored), *stale* "
        "the documents such a snapshot could not know were deleted (no event tells the consumer; Debezium's "
        "neither), "
        "*recover* the seconds from the heal until every change written before it (or the snapshot read "
        "carrying it) was in Kafka. In every cell that passed, the collection rebuilt from the records in Kafka "
        "order equals MongoDB's (less the stale documents).\n\n"
        f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {os.cpu_count()} cores.\n\n"
        "| cell | written | lost | superseded | stale | duplicated | recover (s) | connector after |\n"
        "|---|---|---|---|---|---|---|---|\n" + "".join(row.row() + "\n" for row in rows)
        + "".join(f"\n* {row.cell}: {note}" for row in rows for note in row.notes) + ("\n" if any(
            row.notes for row in rows) else "")
    )


class Cell:
    """One cell: workers of a fresh group behind the proxy, a connector, the writer and the observer."""

    def __init__(self, services: ChaosStack, tmp_path: Path, results: list[CellResult], name: str) -> None:
        self.services = services
        self.tmp_path = tmp_path
        self.results = results
        self.name = name
        self.group = unique("chaos-")
        self.connector = unique("cell-")
        self.prefix = unique("chaos")
        self.db, self.coll = unique("chaosdb_"), "items"
        self.topic = f"{self.prefix}.{self.db}.{self.coll}"
        self.workers: list[Worker] = []
        self.mongo_uri, self.worker_mongo_uri = services.mongo_uri, services.worker_mongo_uri
        self.writer = Writer(services.mongo_uri, self.db, self.coll)
        self.observer = Observer(services.observer_bootstrap, self.topic)
        self.expected_extra: list[str] = []
        #: the snapshot may start over from a new position: a change is then carried by the snapshot's read of
        #: its document (superseded) instead of its own event, as in Debezium
        self.snapshot_may_restart = False
        #: (sec, ord) of the offset stored last before the fault (None: not read, the loose bound applies)
        self.committed: tuple[int, int] | None = None
        #: a worker killed and started again: what it stored last and where the topic ended when it died
        self.resumed: Resumed | None = None
        #: what the connector went through before it ran again (a FAILED status the cell expected)
        self.outcome_before = ""
        self.notes: list[str] = []
        #: the consumer applies a change only when it is newer than its document's last one (late copies of a
        #: worker cut off from Kafka may arrive after the new owner's records)
        self.position_aware = False

    def note(self, text: str) -> None:
        """A line about this cell under the results table (the cell's result must be recorded)."""
        self.results[-1] = dataclasses.replace(self.results[-1], notes=(*self.results[-1].notes, text))

    def use_mongo(self, server_uri: str, worker_uri: str) -> None:
        """Capture another SecantusDB (before :meth:`start`): the writer writes there, the worker reads it through
        ``worker_uri``."""
        self.writer.client.close()
        self.mongo_uri, self.worker_mongo_uri = server_uri, worker_uri
        self.writer = Writer(server_uri, self.db, self.coll)

    # -- set-up ------------------------------------------------------------------------------------------------
    def new_worker(self, extra: dict[str, str] | None = None, *, wait: bool = True,
                   bootstrap: str | None = None) -> Worker:
        port = procs.free_port()
        props = distributed_properties(bootstrap or self.services.worker_bootstrap, port, group_id=self.group,
                                       extra={**WORKER_SETTINGS, **(extra or {})})
        process = ConnectWorker(self.tmp_path / f"worker-{len(self.workers)}", port, props)
        if wait:
            process.start()
        else:
            process.prepare()
        worker = Worker(process)
        self.workers.append(worker)
        return worker

    @property
    def worker(self) -> Worker:
        return self.workers[0]

    def connector_config(self, **extra: str) -> dict[str, str]:
        return {"connector.class": "io.debezium.connector.mongodb.MongoDbConnector",
                "mongodb.connection.string": self.worker_mongo_uri, "topic.prefix": self.prefix,
                "collection.include.list": f"{self.db}.{self.coll}", **MONGO_TIMEOUTS, **extra}

    def start(self, *, writer: bool = True, config: dict[str, str] | None = None) -> None:
        """A worker, the connector (with ``config`` over the cell's) RUNNING, the observer, and (``writer``) the
        writer warmed up."""
        if not self.workers:
            self.new_worker()
        create_connector(self.worker, self.connector, self.connector_config(**(config or {})), timeout=120)
        self.observer.start()
        if writer:
            self.writer.start()
            self.wait_events(WARM_UP_EVENTS)
            self.read_committed()

    def read_committed(self) -> None:
        """Remember the position of the offset stored last (the fault comes after: the duplicate bound counts
        the records after it)."""
        offset = stored_offset(self.services.observer_bootstrap, f"{self.group}-offsets", self.connector)
        if offset is not None and "sec" in offset and "ord" in offset and not offset.get("initsync"):
            self.committed = (int(offset["sec"]), int(offset["ord"]))

    def kill_and_restart(self) -> None:
        """SIGKILL the worker and start it again; in between, note the offset it stored last and the end of the
        topic: the records it may send again are those in Kafka then that come after that offset."""
        self.worker.process.kill()
        bootstrap = self.services.observer_bootstrap
        self.resumed = Resumed(stored_offset(bootstrap, f"{self.group}-offsets", self.connector),
                               partition_ends(bootstrap, self.topic))
        self.worker.process.start()

    def wait_events(self, count: int, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while self.observer.count() < count:
            assert time.monotonic() < deadline, f"{self.name}: fewer than {count} events after {timeout:.0f} s"
            assert self.writer.error is None, f"writer failed: {self.writer.error}"
            time.sleep(0.1)

    # -- after the fault ---------------------------------------------------------------------------------------
    def finish(self, healed: float, *, status_from: Worker | None = None) -> CellResult:
        """Keep writing until a change written after the heal reached Kafka, then check the cell and record it."""
        try:
            return self._finish(healed, status_from or self.worker)
        finally:
            self.observer.stop()

    def _finish(self, healed: float, status_from: Worker) -> CellResult:
        deadline = healed + RECOVER_TIMEOUT
        while time.monotonic() < deadline and self.writer.error is None:
            after = [n for n, at in self.writer.written.copy().items() if at > healed]  # copy(): atomic
            if after and self.observer.has_any(after[-100:]):
                break
            time.sleep(0.2)
        self.writer.stop()
        expected = dict(self.writer.written)
        self._wait_delivered([*expected, *self.expected_extra], timeout=max(30.0, deadline - time.monotonic()))
        status = status_from.wait_status(self.connector, _all_running, timeout=180)
        seen = self.observer.seen
        with self.observer.lock:
            missing = [n for n in [*expected, *self.expected_extra] if n not in seen.arrived]
            duplicated = sum(count - 1 for count in seen.counts.values())
            bound = self._resumed_bound() if self.resumed is not None else self._duplicate_bound(healed)
            backlog = [seen.arrived[n] - healed for n, at in expected.items() if at <= healed and n in seen.arrived]
            backlog += [at - healed for n, at in seen.arrived.items() if n.startswith("r") and at > healed]
        superseded = self._superseded(missing) if self.snapshot_may_restart else set()
        lost = sorted(n for n in missing if n not in superseded)
        result = CellResult(self.name, len(expected), len(lost), duplicated, max([0.0, *backlog]),
                            self.outcome_before + status["connector"]["state"] + "/"
                            + ",".join(t["state"] for t in status["tasks"]), len(superseded), dup_bound=bound)
        self.results.append(result)
        wanted = mongo_state(self.mongo_uri, self.db, self.coll)
        # A snapshot that starts over reads what exists then: a document deleted after the first attempt read
        # it and before the second began gets no delete event (Debezium's too); it stays with the consumer.
        unseen_deletes = {self.writer.doc_of[n] for n in superseded if n.startswith("d")}

        def rebuilt_less_stale() -> dict[int, Any]:
            return {doc: body for doc, body in self.observer.replay(by_position=self.position_aware).items()
                    if doc in wanted or doc not in unseen_deletes}

        state_deadline = time.monotonic() + 30
        while rebuilt_less_stale() != wanted and time.monotonic() < state_deadline:
            time.sleep(0.2)
        rebuilt = self.observer.replay(by_position=self.position_aware)
        stale = {doc for doc in set(rebuilt) - set(wanted) if doc in unseen_deletes}
        result = dataclasses.replace(result, stale=len(stale))
        self.results[-1] = result
        assert not lost, f"{self.name}: {len(lost)} changes never reached Kafka, first {lost[:10]}"
        rebuilt = {doc: body for doc, body in rebuilt.items() if doc not in stale}
        assert rebuilt == wanted, (f"{self.name}: the consumer's collection differs from MongoDB's: "
                                   f"{_difference(rebuilt, wanted)}; last events read of those documents "
                                   f"{_histories(self.observer, rebuilt, wanted)}; records read twice by the "
                                   f"observer {self.observer.seen.rereads}")
        limit = len(expected) + len(self.expected_extra) if bound is None else bound
        assert duplicated <= limit, f"{self.name}: {duplicated} duplicates, more than {limit}"
        return result

    def _duplicate_bound(self, healed: float) -> int | None:
        """With the committed position read before the fault: the changes after it that MongoDB acknowledged
        before the heal (only those can have been sent before the fault and again after it). Every duplicated
        change must be among them. Called with the observer's lock held."""
        if self.committed is None:
            return None
        seen, written = self.observer.seen, self.writer.written
        after = {name for _, name, body in seen.events
                 if name in written and written[name] <= healed and _position(body) >= self.committed}
        repeated = {name for name, count in seen.counts.items() if count > 1}
        early = sorted(repeated - after - {n for n in repeated if n.startswith("r") or written.get(n, 0) > healed})
        assert not early, (f"{self.name}: changes at or before the committed offset {self.committed} or written "
                           f"after the heal were sent twice: {early[:10]}")
        return len(after)

    def _resumed_bound(self) -> int:
        """For a worker killed and started again: the changes and snapshot reads in Kafka when it died that come
        after the offset it stored last (:meth:`Resumed.after`), the only ones it may send again. Every
        duplicated one must be among them. Called with the observer's lock held."""
        assert self.resumed is not None
        seen, ns = self.observer.seen, f"{self.db}.{self.coll}"
        after = {name for (doc_id, name, body), place in zip(seen.events, seen.places, strict=True)
                 if self.resumed.before_death(place) and self.resumed.after(ns, doc_id, body)}
        early = sorted(name for name, count in seen.counts.items() if count > 1 and name not in after)
        assert not early, (f"{self.name}: records at or before the offset stored last before the kill "
                           f"({self.resumed.describe(ns)}) were sent twice: {early[:10]}")
        return len(after)

    def _wait_delivered(self, names: list[str], timeout: float) -> None:
        """Until every change of ``names`` was read, or (a snapshot may have started over) the missing ones are
        all carried by snapshot reads; at most ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while not self.observer.wait_for(names, timeout=1.0) and time.monotonic() < deadline:
            if self.snapshot_may_restart:
                with self.observer.lock:
                    missing = [n for n in names if n not in self.observer.seen.arrived]
                if len(self._superseded(missing)) == len(missing):
                    return

    def _superseded(self, missing: list[str]) -> set[str]:
        """The missing changes a snapshot read made later carries: the read saw that write or a newer one of the
        document (``v`` is the writer's step, growing per document), or the document is gone (deleted before
        the new snapshot read it: the consumer rightly never has it)."""
        newest = self.observer.snapshot_versions()
        gone = set(self.writer.doc_of.values()) - set(mongo_state(self.mongo_uri, self.db, self.coll))
        def carried(name: str) -> bool:
            doc = self.writer.doc_of.get(name)
            if doc is None:
                return False
            return doc in gone or (not name.startswith("d") and newest.get(doc, -1) >= int(name.split(".")[0]))

        return {name for name in missing if carried(name)}

    def stop_workers(self) -> None:
        for worker in self.workers:
            worker.process.stop(timeout=20)
            worker.http.close()


@dataclasses.dataclass(frozen=True)
class Resumed:
    """A worker killed and started again: the offset it had stored last (None: none) and the end offset of each
    partition of the topic when it died."""

    offset: dict[str, Any] | None
    ends: dict[int, int]

    def before_death(self, place: tuple[int, int]) -> bool:
        partition, offset = place
        return offset < self.ends.get(partition, 0)

    def after(self, ns: str, doc_id: int, body: dict[str, Any]) -> bool:
        """Whether the restarted task sends this record again: a snapshot read past the stored progress of its
        snapshot (initial: the ``_id`` range's last emitted ``_id``; incremental: the last chunk's last key), a
        change at or after the stored stream position; everything when no offset was stored."""
        offset = self.offset
        if offset is None:
            return True
        if body["op"] != "r":
            return _position(body) >= (int(offset.get("sec", -1)), int(offset.get("ord", -1)))
        if body["source"].get("snapshot") == "incremental":
            state = incremental_state.decode(offset)
            current = next((p for p in state.queue if p.ns == ns), None) if state is not None else None
            if state is None or current is None:  # no snapshot stored as running: it starts over, or it is done
                return state is None
            return not current.started or doc_id > current.after
        if not offset.get("initsync"):
            return False  # the initial snapshot was stored as done
        progress = SnapshotProgress.decode(offset.get("snapshot_progress"))
        if progress.completed(ns):
            return False
        for part in progress.ranges(ns) or []:
            if (part.low is None or doc_id >= part.low) and (part.high is None or doc_id < part.high):
                return not part.done and (not part.started or doc_id > part.after)
        return True  # no range begun: the snapshot starts over

    def describe(self, ns: str) -> str:
        if self.offset is None:
            return "none"
        keys = {k: v for k, v in self.offset.items() if k in ("sec", "ord", "initsync")}
        progress = SnapshotProgress.decode(self.offset.get("snapshot_progress"))
        ranges = [("done" if r.done else f"after {r.after}" if r.started else "pending")
                  for r in progress.ranges(ns) or []]
        incremental = incremental_state.decode(self.offset)
        return f"{keys}, ranges {ranges}, incremental {incremental}"


def partition_ends(bootstrap: str, topic: str) -> dict[int, int]:
    """The end offset of each partition of ``topic`` ({} before it exists)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
    try:
        tps = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or ()]
        return {tp.partition: end for tp, end in consumer.end_offsets(tps).items()} if tps else {}
    finally:
        consumer.close()


def _position(body: dict[str, Any]) -> tuple[int, int]:
    """The (sec, ord) of an event's ``source`` block, as its offset stores them."""
    source = body["source"]
    return int(source["ts_ms"]) // 1000, int(source.get("ord") or 0)


def _all_running(status: dict[str, Any]) -> bool:
    return (status["connector"]["state"] == "RUNNING" and bool(status["tasks"])
            and all(t["state"] == "RUNNING" for t in status["tasks"]))


def _difference(rebuilt: dict[int, Any], wanted: dict[int, Any]) -> str:
    missing = sorted(set(wanted) - set(rebuilt))[:5]
    extra = sorted(set(rebuilt) - set(wanted))[:5]
    changed = sorted(k for k in set(wanted) & set(rebuilt) if wanted[k] != rebuilt[k])[:5]
    return f"missing {missing}, extra {extra}, different {[(k, rebuilt[k], wanted[k]) for k in changed[:2]]}"


def _histories(observer: Observer, rebuilt: dict[int, Any], wanted: dict[int, Any]) -> dict[int, Any]:
    differing = sorted(k for k in set(rebuilt) | set(wanted) if rebuilt.get(k) != wanted.get(k))[:5]
    return {k: observer.history(k) for k in differing}


def leader_url(worker: Worker) -> str | None:
    """The leader's REST URL in the last ``Joined group`` line of ``worker``'s log."""
    found = re.findall(r"Joined group at generation \d+ .*?leader \S+ at (\S+)\)", procs.tail(worker.process.log_path,
                                                                                         2000))
    return found[-1] if found else None


@pytest.fixture
def cell(request: pytest.FixtureRequest, chaos_stack: ChaosStack, tmp_path: Path,
         results: list[CellResult]) -> Iterator[Cell]:
    chaos_stack.heal()
    current = Cell(chaos_stack, tmp_path, results, request.node.callspec.id if hasattr(request.node, "callspec")
                   else request.node.name.removeprefix("test_"))
    try:
        yield current
    finally:
        chaos_stack.heal()
        with contextlib.suppress(AssertionError):
            current.writer.stop()
        current.observer.stop()
        current.stop_workers()


def fault_window(hold: float, inject: Callable[[], object], heal: Callable[[], object]) -> float:
    """Inject, hold the fault ``hold`` s (the fault's length, not a synchronisation), heal; the heal's time."""
    inject()
    try:
        time.sleep(hold)
    finally:
        heal()
    return time.monotonic()

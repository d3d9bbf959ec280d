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

from stack import chaos, procs
from stack.chaos import ChaosStack
from stack.worker import ConnectWorker, distributed_properties
from tests.integration.chaos.workload import CellResult, Observer, Writer, mongo_state
from tests.integration.support import Worker, create_connector, unique

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


#: how many cells of the whole matrix this session runs (the table is recorded only when it runs them all)
_SELECTED: list[int] = [0, 0]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without ``CHAOS_MATRIX=full`` the cells marked ``chaos_full`` are left out (deselected, not skipped)."""
    here = Path(__file__).parent
    _SELECTED[:] = [sum(1 for item in items if here in item.path.parents), _matrix_size(here)]
    if FULL:
        return
    dropped = [item for item in items if item.get_closest_marker("chaos_full")]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if not item.get_closest_marker("chaos_full")]


def _matrix_size(here: Path) -> int:
    return sum(line.startswith("def test_") for line in (here / "test_matrix.py").read_text().splitlines())


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
        "the extra copies, *superseded* the changes carried by a later snapshot read of their document instead of "
        "their own event (a snapshot started over, as Debezium does when none of its offsets was stored), *stale* "
        "the documents such a snapshot could not know were deleted (no event tells the consumer; Debezium's "
        "neither), "
        "*recover* the seconds from the heal until every change written before it was in "
        "Kafka. In every cell that passed, the collection rebuilt from the records in Kafka order equals MongoDB's "
        "(less the stale documents).\n\n"
        f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {os.cpu_count()} cores.\n\n"
        "| cell | written | lost | superseded | stale | duplicated | recover (s) | connector after |\n"
        "|---|---|---|---|---|---|---|---|\n" + "".join(row.row() + "\n" for row in rows)
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
        self.writer = Writer(services.mongo_uri, self.db, self.coll)
        self.observer = Observer(services.observer_bootstrap, self.topic)
        self.expected_extra: list[str] = []
        #: the snapshot may start over from a new position: a change is then carried by the snapshot's read of
        #: its document (superseded) instead of its own event, as in Debezium
        self.snapshot_may_restart = False

    # -- set-up ------------------------------------------------------------------------------------------------
    def new_worker(self, extra: dict[str, str] | None = None, *, wait: bool = True) -> Worker:
        port = procs.free_port()
        props = distributed_properties(self.services.worker_bootstrap, port, group_id=self.group,
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
                "mongodb.connection.string": self.services.worker_mongo_uri, "topic.prefix": self.prefix,
                "collection.include.list": f"{self.db}.{self.coll}", **MONGO_TIMEOUTS, **extra}

    def start(self, *, writer: bool = True, **connector_extra: str) -> None:
        """A worker, the connector RUNNING, the observer, and (``writer``) the writer warmed up."""
        if not self.workers:
            self.new_worker()
        create_connector(self.worker, self.connector, self.connector_config(**connector_extra), timeout=120)
        self.observer.start()
        if writer:
            self.writer.start()
            self.wait_events(WARM_UP_EVENTS)

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
            after = [n for n, at in list(self.writer.written.items()) if at > healed]
            if after and self.observer.has(after[:1]):
                break
            time.sleep(0.2)
        self.writer.stop()
        expected = dict(self.writer.written)
        self.observer.wait_for([*expected, *self.expected_extra], timeout=max(30.0, deadline - time.monotonic()))
        status = status_from.wait_status(self.connector, _all_running, timeout=120)
        seen = self.observer.seen
        with self.observer.lock:
            missing = [n for n in [*expected, *self.expected_extra] if n not in seen.arrived]
            duplicated = sum(count - 1 for count in seen.counts.values())
            backlog = [seen.arrived[n] - healed for n, at in expected.items() if at <= healed and n in seen.arrived]
        superseded = self._superseded(missing) if self.snapshot_may_restart else set()
        lost = sorted(n for n in missing if n not in superseded)
        result = CellResult(self.name, len(expected), len(lost), duplicated, max([0.0, *backlog]),
                            status["connector"]["state"] + "/" + ",".join(t["state"] for t in status["tasks"]),
                            len(superseded))
        self.results.append(result)
        wanted = mongo_state(self.services.mongo_uri, self.db, self.coll)
        state_deadline = time.monotonic() + 30
        while self.observer.replay() != wanted and time.monotonic() < state_deadline:
            time.sleep(0.2)
        rebuilt = self.observer.replay()
        # A snapshot that starts over reads what exists then: a document deleted after the first attempt read
        # it and before the second began gets no delete event (Debezium's too); it stays with the consumer.
        unseen_deletes = {self.writer.doc_of[n] for n in superseded if n.startswith("d")}
        stale = {doc for doc in set(rebuilt) - set(wanted) if doc in unseen_deletes}
        result = dataclasses.replace(result, stale=len(stale))
        self.results[-1] = result
        assert not lost, f"{self.name}: {len(lost)} changes never reached Kafka, first {lost[:10]}"
        rebuilt = {doc: body for doc, body in rebuilt.items() if doc not in stale}
        assert rebuilt == wanted, (f"{self.name}: the consumer's collection differs from MongoDB's: "
                                   f"{_difference(rebuilt, wanted)}")
        assert duplicated <= len(expected) + len(self.expected_extra), f"{self.name}: {duplicated} duplicates"
        return result

    def _superseded(self, missing: list[str]) -> set[str]:
        """The missing changes a snapshot read made later carries: the read saw that write or a newer one of the
        document (``v`` is the writer's step, growing per document), or the document is gone (deleted before
        the new snapshot read it: the consumer rightly never has it)."""
        newest = self.observer.snapshot_versions()
        gone = set(self.writer.doc_of.values()) - set(mongo_state(self.services.mongo_uri, self.db, self.coll))
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


def _all_running(status: dict[str, Any]) -> bool:
    return (status["connector"]["state"] == "RUNNING" and bool(status["tasks"])
            and all(t["state"] == "RUNNING" for t in status["tasks"]))


def _difference(rebuilt: dict[int, Any], wanted: dict[int, Any]) -> str:
    missing = sorted(set(wanted) - set(rebuilt))[:5]
    extra = sorted(set(rebuilt) - set(wanted))[:5]
    changed = sorted(k for k in set(wanted) & set(rebuilt) if wanted[k] != rebuilt[k])[:5]
    return f"missing {missing}, extra {extra}, different {[(k, rebuilt[k], wanted[k]) for k in changed[:2]]}"


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

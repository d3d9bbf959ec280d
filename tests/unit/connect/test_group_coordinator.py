"""A distributed worker's membership without a broker: the cluster view applying eager and cooperative
assignments, and the coordinator's tick (revocations, leader-only writes, forwarding targets, session keys)
over an in-memory config store and a group member that hands over scripted assignments."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import pytest

from connect.api.errors import ConnectError
from connect.distributed import protocol as gp
from connect.distributed.cluster import NO_LEADER, STALE_CONFIG, ClusterView, RequestTargetError
from connect.distributed.coordinator import GroupCoordinator
from connect.distributed.member import _WorkerCoordinator
from connect.runtime.rest_errors import ConflictError
from connect.runtime.worker_config import WorkerConfig
from connect.storage.config_state import ConnectorTaskId
from connect.storage.memory import MemoryConfigStore

A0, A1, B0 = ConnectorTaskId("a", 0), ConnectorTaskId("a", 1), ConnectorTaskId("b", 0)


class ScriptedMember:
    """Stands in for the Kafka group member: each poll hands over the next scripted assignment."""

    def __init__(self) -> None:
        self.view: ClusterView | None = None
        self.script: list[tuple[str, gp.Assignment]] = []
        self.rebalancing = False
        self.client_id = "connect-me:8083"
        self.rejoins = 0
        self.generation = 0
        self.stopped = False
        self.coordinator_unknown = False

    def client_metrics(self) -> list[tuple[str, str, dict[str, str], float]]:
        return []

    def poll(self, timeout: float) -> None:
        if self.script and self.view is not None:
            protocol, assignment = self.script.pop(0)
            self.generation += 1
            self.view.offer(self.generation, "me", protocol, assignment)

    def request_rejoin(self) -> None:
        self.rejoins += 1

    def stop(self) -> None:
        self.stopped = True


class Listener:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def revoke_all(self) -> None:
        self.calls.append("revoke_all")

    def stop_unowned(self) -> None:
        self.calls.append("stop_unowned")


def _coordinator(protocol: str = "sessioned", **extra: str) -> tuple[GroupCoordinator, ScriptedMember,
                                                                      MemoryConfigStore]:
    props: Mapping[str, str] = {"bootstrap.servers": "unused:9092", "group.id": "g", "config.storage.topic": "c",
                                "offset.storage.topic": "o", "status.storage.topic": "s",
                                "connect.protocol": protocol, **extra}
    config, _ = WorkerConfig.parse(props, distributed=True)
    member = ScriptedMember()
    view = ClusterView(member, "http://me:8083")  # type: ignore[arg-type]  # the scripted stand-in
    member.view = view
    store = MemoryConfigStore()
    ready, stop = threading.Event(), threading.Event()
    ready.set()
    return GroupCoordinator(view, config, store, ready, stop), member, store


def _assignment(leader: str = "me", connectors: tuple[str, ...] = (), tasks: tuple[ConnectorTaskId, ...] = (),
                **extra: Any) -> gp.Assignment:
    return gp.Assignment(gp.NO_ERROR, leader, f"http://{leader}:8083", -1, connectors, tasks, **extra)


def test_an_eager_assignment_is_the_whole_share_and_a_rebalance_revokes_everything() -> None:
    coordinator, member, _ = _coordinator("eager")
    listener = Listener()
    member.script.append((gp.EAGER, _assignment(connectors=("a",), tasks=(A0, A1))))
    coordinator.join(threading.Event(), listener)
    assert coordinator.owns_connector("a") and coordinator.owns_task(A1) and not coordinator.owns_task(B0)
    assert coordinator.leads and coordinator.generation() == 1
    member.rebalancing = True
    coordinator.tick(listener)
    assert listener.calls == ["revoke_all"] and not coordinator.owns_task(A0)
    with pytest.raises(ConflictError, match=re.escape(STALE_CONFIG)):
        coordinator.require_leader()


def test_a_cooperative_revocation_stops_what_was_taken_and_rejoins() -> None:
    coordinator, member, _ = _coordinator("compatible")
    listener = Listener()
    member.script.append((gp.COMPATIBLE, _assignment(connectors=("a", "b"), tasks=(A0, B0), version=1)))
    coordinator.join(threading.Event(), listener)
    member.script.append((gp.COMPATIBLE, _assignment(revoked_connectors=("b",), revoked_tasks=(B0,), version=1)))
    coordinator.tick(listener)
    assert listener.calls == ["stop_unowned"] and member.rejoins == 1
    assert coordinator.owns_connector("a") and not coordinator.owns_connector("b")
    assert coordinator.owns_task(A0) and not coordinator.owns_task(B0)
    member.script.append((gp.COMPATIBLE, _assignment(tasks=(A1,), version=1)))
    coordinator.tick(listener)
    assert coordinator.owns_task(A0) and coordinator.owns_task(A1), "cooperative: work is kept, new work added"


def test_rounds_received_together_are_applied_in_order_none_skipped() -> None:
    """A worker back from a pause rejoins as a new member reporting work it held (its task failed meanwhile): the
    leader revokes it as a duplicate and the next round gives it back. Both rounds can complete within one poll;
    the revocation must still stop the work, so that the assignment after it starts it anew."""
    coordinator, member, _ = _coordinator("compatible")
    listener = Listener()
    member.script.append((gp.COMPATIBLE, _assignment(connectors=("a",), tasks=(A0,), version=1)))
    coordinator.join(threading.Event(), listener)
    view = coordinator.cluster
    view.offer(6, "me", gp.COMPATIBLE, _assignment(revoked_connectors=("a",), revoked_tasks=(A0,), version=1))
    view.offer(7, "me", gp.COMPATIBLE, _assignment(connectors=("a",), tasks=(A0,), version=1))
    coordinator.tick(listener)
    assert listener.calls == ["stop_unowned"] and not coordinator.owns_task(A0)
    assert member.rejoins == 0, "the follow-up round is already here"
    coordinator.tick(listener)
    assert coordinator.generation() == 7 and coordinator.owns_connector("a") and coordinator.owns_task(A0)


def test_a_member_the_group_dropped_gives_up_its_work_and_rejoins_reporting_none() -> None:
    """Back from a pause longer than the session, the group has given this worker's work to another one; a round
    revoking it from this worker as a duplicate may never reach it. It reports no allocation in the join, stops
    everything before applying the next assignment, and starts what that assignment gives it."""
    coordinator, member, _ = _coordinator("compatible")
    listener = Listener()
    member.script.append((gp.COMPATIBLE, _assignment(leader="other", connectors=("a",), tasks=(A0,), version=1)))
    coordinator.join(threading.Event(), listener)
    view = coordinator.cluster
    view.lose()
    assert view.allocation() is None, "the join's metadata claims nothing"
    view.offer(7, "me-again", gp.COMPATIBLE, _assignment(leader="other", tasks=(A0,), version=1))
    coordinator.tick(listener)
    assert listener.calls == ["revoke_all"] and not coordinator.owns_connector("a") and not coordinator.owns_task(A0)
    coordinator.tick(listener)
    assert coordinator.generation() == 7 and coordinator.owns_task(A0) and not coordinator.owns_connector("a")


def test_the_member_reports_a_loss_only_after_it_had_joined() -> None:
    lost: list[int] = []
    fake = SimpleNamespace(_member=SimpleNamespace(joined=False, on_lost=lambda: lost.append(1)))
    asyncio.run(_WorkerCoordinator._on_join_prepare_async(fake, -1, ""))  # type: ignore[arg-type] # the first join
    assert lost == []
    fake._member.joined = True
    asyncio.run(_WorkerCoordinator._on_join_prepare_async(fake, 5, "m"))  # type: ignore[arg-type] # a rejoin in the group
    assert lost == []
    asyncio.run(_WorkerCoordinator._on_join_prepare_async(fake, -1, ""))  # type: ignore[arg-type] # after the generation was reset
    assert lost == [1]


def test_a_follower_forwards_writes_to_the_leader_and_names_the_owner() -> None:
    coordinator, member, _ = _coordinator("compatible")
    member.script.append((gp.COMPATIBLE, _assignment(leader="other", tasks=(A0,), version=1)))
    coordinator.join(threading.Event(), Listener())
    assert not coordinator.leads
    with pytest.raises(RequestTargetError) as raised:
        coordinator.require_leader()
    assert raised.value.url == "http://other:8083" and raised.value.status == 409
    assert coordinator.require_owner_or_leader(A0)
    with pytest.raises(RequestTargetError):
        coordinator.require_owner_or_leader(B0)


def test_the_leader_says_who_runs_a_task_or_that_it_does_not_know() -> None:
    coordinator, member, _ = _coordinator("compatible")
    member.script.append((gp.COMPATIBLE, _assignment(tasks=(A0,), version=1)))
    coordinator.join(threading.Event(), Listener())
    coordinator.cluster.leader_owners = {B0: "http://peer:8083"}
    with pytest.raises(RequestTargetError) as raised:
        coordinator.require_owner_or_leader(B0)
    assert raised.value.url == "http://peer:8083"
    with pytest.raises(ConflictError, match="Cannot find the worker"):
        coordinator.require_owner_or_leader(A1)


def test_no_leader_url_is_a_conflict_not_a_forward() -> None:
    coordinator, member, _ = _coordinator("compatible")
    member.script.append((gp.COMPATIBLE, gp.Assignment(gp.NO_ERROR, "other", "", -1, version=1)))
    coordinator.join(threading.Event(), Listener())
    with pytest.raises(ConflictError, match=re.escape(NO_LEADER)):
        coordinator.require_leader()


def test_the_sessioned_leader_writes_a_session_key_and_checks_signatures() -> None:
    coordinator, member, store = _coordinator("sessioned")
    member.script.append((gp.SESSIONED, _assignment(version=2)))
    coordinator.join(threading.Event(), Listener())
    key = store.snapshot().session_key
    assert key is not None, "the leader wrote a session key"
    coordinator.after_reconcile(store.snapshot())
    assert store.snapshot().session_key == key, "a fresh key is kept"
    with pytest.raises(ConnectError):
        coordinator.verify_internal_request(b"{}", {})


def test_new_connectors_request_a_rebalance() -> None:
    coordinator, member, store = _coordinator("compatible")
    member.script.append((gp.COMPATIBLE, _assignment(version=1)))
    coordinator.join(threading.Event(), Listener())
    store.put_connector_config("a", {"connector.class": "x"}, None)
    coordinator.after_reconcile(store.snapshot())
    assert member.rejoins == 1


def test_a_leader_on_other_topics_refuses_a_starting_worker() -> None:
    coordinator, member, _ = _coordinator("compatible")
    coordinator._ready.clear()
    member.script.append((gp.COMPATIBLE, _assignment(config_topic="elsewhere", version=1)))
    with pytest.raises(ConnectError, match="must use the same config, offset and status topics"):
        coordinator.join(threading.Event(), Listener())


class FencableStore(MemoryConfigStore):
    """A config store with a fencable writer, recording the coordinator's claims and releases."""

    def __init__(self) -> None:
        super().__init__()
        self.held = False
        self.calls: list[str] = []
        self.fenced = False
        self.refuse_claims = 0

    def claim_write_privileges(self) -> None:
        self.calls.append("claim")
        if self.refuse_claims:
            self.refuse_claims -= 1
            raise ConnectError("Failed to create and initialize fencable producer for config topic")
        self.held = True

    def relinquish_write_privileges(self) -> None:
        self.calls.append("relinquish")
        self.held = False

    def needs_write_privileges(self) -> bool:
        return not self.held

    def take_write_fenced(self) -> bool:
        fenced, self.fenced = self.fenced, False
        return fenced


def _with_fencable_store() -> tuple[GroupCoordinator, ScriptedMember, FencableStore]:
    coordinator, member, _ = _coordinator()
    store = FencableStore()
    coordinator._config_store = store
    return coordinator, member, store


def test_the_leader_claims_the_config_topic_and_a_follower_gives_it_up() -> None:
    coordinator, member, store = _with_fencable_store()
    member.script = [(gp.SESSIONED, _assignment(version=2)), (gp.SESSIONED, _assignment("other", version=2))]
    coordinator.tick(Listener())
    assert store.calls == ["claim"] and store.held
    coordinator.tick(Listener())
    assert store.calls == ["claim", "relinquish"] and not store.held


def test_a_failed_claim_is_retried_while_the_worker_leads() -> None:
    coordinator, member, store = _with_fencable_store()
    store.refuse_claims = 1
    member.script = [(gp.SESSIONED, _assignment(version=2))]
    coordinator.tick(Listener())
    assert store.calls == ["claim"] and not store.held
    coordinator.tick(Listener())  # no new assignment: the leader claims again
    assert store.calls == ["claim", "claim"] and store.held


def test_a_fenced_leader_rejoins_before_it_claims_again() -> None:
    coordinator, member, store = _with_fencable_store()
    member.script = [(gp.SESSIONED, _assignment(version=2))]
    coordinator.tick(Listener())
    store.held, store.fenced = False, True  # a privileged write failed: the store gave up its producer
    member.rebalancing = True  # the rejoin the coordinator asks for is under way
    coordinator.tick(Listener())
    assert member.rejoins == 1 and store.calls == ["claim"]  # no claim while the group decides who leads


def test_a_worker_cut_off_from_the_coordinator_revokes_its_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Connect's KAFKA-9184: heartbeat.interval.ms (3 s) without a reachable coordinator, the worker stops its
    connectors and tasks once and asks to rejoin; the next assignment gives them back."""
    coordinator, member, _ = _coordinator()
    listener = Listener()
    member.script.append(("sessioned", _assignment(connectors=("a",), tasks=(A0,))))
    coordinator.tick(listener)
    assert coordinator.owns_connector("a") and coordinator.owns_task(A0)
    clock = [100.0]
    monkeypatch.setattr("connect.distributed.coordinator.time.monotonic", lambda: clock[0])
    member.coordinator_unknown = True
    coordinator.tick(listener)
    clock[0] += 2.9
    coordinator.tick(listener)
    assert "revoke_all" not in listener.calls and coordinator.owns_task(A0)
    clock[0] += 0.2
    rejoins = member.rejoins
    coordinator.tick(listener)
    coordinator.tick(listener)
    assert listener.calls.count("revoke_all") == 1 and member.rejoins == rejoins + 1
    assert not coordinator.owns_connector("a") and not coordinator.owns_task(A0)
    member.coordinator_unknown = False
    member.script.append(("sessioned", _assignment(connectors=("a",), tasks=(A0,))))
    coordinator.tick(listener)
    assert coordinator.owns_connector("a") and coordinator.owns_task(A0)


def test_a_config_wait_gives_up_once_the_worker_is_cut_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """The coordinator hands the config store its cut-off check: a write or read to the end the herder thread is
    blocked in gives up once the coordinator has been unreachable for heartbeat.interval.ms (so the revocation
    on the next tick does not wait for the write's 30 s bound), and not before."""
    coordinator, member, store = _coordinator()
    member.script.append(("sessioned", _assignment(connectors=("a",), tasks=(A0,))))
    coordinator.tick(Listener())
    clock = [100.0]
    monkeypatch.setattr("connect.distributed.coordinator.time.monotonic", lambda: clock[0])
    assert store._interrupt() is None
    member.coordinator_unknown = True
    assert store._interrupt() is None
    clock[0] += 3.0
    reason = store._interrupt()
    assert reason is not None and reason.startswith("the group coordinator was unreachable for 3000 ms")
    member.coordinator_unknown = False
    assert store._interrupt() is None


def test_a_blocked_config_topic_wait_raises_a_retriable_error_when_interrupted() -> None:
    from concurrent.futures import Future

    from connect.api.errors import RetriableError
    from connect.storage.kafka import KafkaConfigStore

    store = KafkaConfigStore("configs", {"bootstrap.servers": "unused:9092"})
    asked = []

    def interrupt() -> str | None:
        asked.append(1)
        return "cut off" if len(asked) >= 2 else None

    store.set_interrupt(interrupt)
    with pytest.raises(RetriableError, match="Writing to the config topic was given up: cut off"):
        store._wait(Future(), 30, "Writing to the config topic")
    done: Future[None] = Future()
    done.set_result(None)
    store._wait(done, 30, "Writing to the config topic")
    assert len(asked) == 2

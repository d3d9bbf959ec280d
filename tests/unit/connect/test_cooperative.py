"""The incremental cooperative assignor (KIP-415) as the leader runs it, round after round."""

from __future__ import annotations

from connect.distributed import protocol as gp
from connect.distributed.assignors import CooperativeAssignor
from connect.storage.config_state import ConfigState, ConnectorTaskId, TargetState


def _snapshot(tasks: dict[str, int]) -> ConfigState:
    snap = ConfigState(offset=5)
    for name, count in tasks.items():
        snap.connector_configs[name] = {}
        snap.target_states[name] = TargetState.STARTED
        snap.task_counts[name] = count
        for n in range(count):
            snap.task_configs[ConnectorTaskId(name, n)] = {}
    return snap


class Group:
    """Members that apply what the leader says, as the herder does."""

    def __init__(self, delay_ms: int = 0) -> None:
        self.now = 0.0
        self.assignor = CooperativeAssignor(delay_ms, lambda: self.now)
        self.owned: dict[str, set[object]] = {}
        self.urls: dict[str, str] = {}  # a member's REST URL when not http://<member>/

    def join(self, *members: str) -> None:
        for member in members:
            self.owned.setdefault(member, set())

    def leave(self, member: str) -> None:
        del self.owned[member]

    def round(self, snap: ConfigState) -> dict[str, gp.Assignment]:
        metadata = {m: gp.WorkerMetadata(self.urls.get(m, f"http://{m}/"), 5, version=1, allocation=gp.Assignment(
            0, "", "", 5, tuple(i for i in items if isinstance(i, str)),
            tuple(i for i in items if isinstance(i, ConnectorTaskId)), version=1)) for m, items in self.owned.items()}
        result = self.assignor.assign(sorted(self.owned)[0], metadata, snap)
        for member, a in result.items():
            self.owned[member] -= {*a.revoked_connectors, *a.revoked_tasks}
            self.owned[member] |= {*a.connectors, *a.tasks}
        return result

    def settle(self, snap: ConfigState, rounds: int = 6) -> None:
        for _ in range(rounds):
            result = self.round(snap)
            if not any(a.revoked_connectors or a.revoked_tasks or a.delay_ms for a in result.values()):
                return

    def everything(self) -> list[object]:
        return sorted((i for items in self.owned.values() for i in items), key=str)


def test_new_work_goes_to_the_least_loaded_and_nothing_runs_twice() -> None:
    group = Group()
    group.join("a", "b", "c")
    snap = _snapshot({"x": 3, "y": 3})
    group.settle(snap)
    expected = sorted(["x", "y", *(ConnectorTaskId(n, i) for n in "xy" for i in range(3))], key=str)
    assert group.everything() == expected
    assert sorted(sum(isinstance(i, ConnectorTaskId) for i in items) for items in group.owned.values()) == [2, 2, 2]


def test_a_joining_member_gets_a_share_through_revocation_rounds() -> None:
    group = Group()
    group.join("a")
    snap = _snapshot({"x": 4})
    group.settle(snap)
    assert len(group.owned["a"]) == 5
    group.join("b")
    first = group.round(snap)
    assert first["a"].revoked_tasks, "the over-loaded member gives work back"
    assert not first["b"].tasks, "revoked work is assigned in the follow-up round, never twice at once"
    group.settle(snap)
    tasks = {m: sum(isinstance(i, ConnectorTaskId) for i in items) for m, items in group.owned.items()}
    assert tasks == {"a": 2, "b": 2}


def _b_gone(delay_ms: int) -> tuple[Group, ConfigState, set[object]]:
    """Members ``a`` and ``b`` share a connector and its two tasks, then ``b`` leaves: the group, the configs and
    what ``b`` held."""
    group = Group(delay_ms=delay_ms)
    group.join("a", "b")
    snap = _snapshot({"x": 2})
    group.settle(snap)
    lost = set(group.owned["b"])
    group.leave("b")
    return group, snap, lost


def test_work_of_a_departed_member_waits_for_the_delay_then_moves() -> None:
    group, snap, lost = _b_gone(10_000)
    held = group.round(snap)
    assert held["a"].delay_ms == 10_000 and not (set(held["a"].connectors) | set(held["a"].tasks)) & lost
    group.now += 4
    assert group.round(snap)["a"].delay_ms == 6_000
    group.now += 7
    final = group.round(snap)
    assert final["a"].delay_ms == 0 and lost <= {*final["a"].connectors, *final["a"].tasks}
    assert len(group.everything()) == 3


def test_work_of_a_member_back_under_a_new_id_without_it_is_not_held() -> None:
    """The group dropped ``b`` (paused past its session); it gave its work up and rejoins as ``b2`` from the same
    worker (its REST URL), reporting nothing: the work is assigned at once, not held for the delay."""
    group, snap, lost = _b_gone(10_000)
    assert group.round(snap)["a"].delay_ms == 10_000, "gone: held for it"
    group.urls["b2"] = "http://b/"
    group.join("b2")
    back = group.round(snap)
    assert all(a.delay_ms == 0 for a in back.values())
    assert lost <= {i for a in back.values() for i in (*a.connectors, *a.tasks)}
    assert len(group.everything()) == 3


def test_a_lone_worker_dropped_and_back_gets_its_work_at_once() -> None:
    group = Group(delay_ms=300_000)
    group.join("a")
    snap = _snapshot({"x": 2})
    group.settle(snap)
    group.leave("a")
    group.urls["a2"] = "http://a/"
    group.join("a2")
    back = group.round(snap)["a2"]
    assert back.delay_ms == 0 and len(back.connectors) + len(back.tasks) == 3


def test_deleted_work_is_revoked() -> None:
    group = Group()
    group.join("a", "b")
    group.settle(_snapshot({"x": 1, "y": 1}))
    result = group.round(_snapshot({"x": 1}))
    revoked = {i for a in result.values() for i in (*a.revoked_connectors, *a.revoked_tasks)}
    assert revoked == {"y", ConnectorTaskId("y", 0)}
    assert "y" not in group.everything()

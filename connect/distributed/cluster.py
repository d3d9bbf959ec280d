"""What a distributed worker knows about its group: its assignment, the leader, and where work runs.

Owned by the herder thread. The group member's callbacks (kafka-python's thread) only hand over a new
assignment through :meth:`ClusterView.offer`; the herder applies it with :meth:`ClusterView.take`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from connect.distributed import protocol as gp
from connect.distributed.assignors import CooperativeAssignor
from connect.distributed.member import WorkerGroupMember
from connect.runtime.rest_errors import ConflictError, ConnectRestError
from connect.runtime.worker_config import WorkerConfig
from connect.storage.base import ConfigStore
from connect.storage.config_state import ConfigState, ConnectorTaskId

log = logging.getLogger(__name__)

NO_LEADER = ("Cannot complete request momentarily due to no known leader URL, likely because a rebalance "
             "was underway.")
STALE_CONFIG = ("Cannot complete request momentarily due to stale configuration (typically caused by a "
                "concurrent config change)")


class RequestTargetError(ConnectRestError):
    """The request must be served by another worker (the leader, or the owner of a connector or task)."""

    def __init__(self, url: str, message: str) -> None:
        super().__init__(409, message)
        self.url = url


@dataclass(frozen=True)
class Received:
    """An assignment handed over by the group member."""

    generation: int
    member_id: str
    protocol: str
    assignment: gp.Assignment

    @property
    def revoked(self) -> bool:
        """True when work is taken away (a follow-up rebalance is due once it stopped)."""
        return bool(self.assignment.revoked_connectors or self.assignment.revoked_tasks)


@dataclass(frozen=True)
class Lost:
    """The group dropped this member: its work may be running elsewhere already."""

    member_id: str


class ClusterView:
    """This worker's place in the group."""

    def __init__(self, member: WorkerGroupMember, url: str) -> None:
        self.member = member
        self.url = url
        self.member_id = ""
        self.generation = -1
        self.assignment: gp.Assignment | None = None
        self.protocol: str | None = None
        self.connectors: set[str] = set()
        self.tasks: set[ConnectorTaskId] = set()
        self.rejoin_at: float | None = None
        self.leader_owners: dict[str | ConnectorTaskId, str] = {}
        # assignments not yet applied, oldest first: under the cooperative protocol each is a change (assigned and
        # revoked work), so none may be skipped; a member that lost its membership rejoins with its stale
        # allocation, and the round that revokes it as a duplicate can be followed at once by the one that
        # assigns it again (it must stop it, then start it anew)
        self._received: list[Received | Lost] = []
        self._lock = threading.Lock()
        self._items: tuple[frozenset[str], frozenset[ConnectorTaskId]] | None = None

    # --- called from the group member's thread ----------------------------------------------------
    def offer(self, generation: int, member_id: str, protocol: str, assignment: gp.Assignment) -> None:
        """Hand over a new assignment (applied on the herder thread, after those handed over before it)."""
        with self._lock:
            self._received.append(Received(generation, member_id, protocol, assignment))

    def lose(self) -> None:
        """The group dropped this member (a pause or a partition longer than ``session.timeout.ms``) and it is
        about to rejoin as a new one. The group may have given its work to others already, and a round that revokes
        that work from it as a duplicate can be missed (a rejoin before its SyncGroup completes): like a consumer's
        lost partitions under cooperative rebalancing (KIP-429), the work is given up. It joins reporting no
        allocation (this runs on the group member's thread before the join's metadata is built, while the herder
        thread waits in the poll) and the herder stops the connectors and tasks before it applies any later
        assignment."""
        with self._lock:
            self._received.append(Lost(self.member_id))
        self.assignment = None
        self.connectors, self.tasks = set(), set()

    def allocation(self) -> gp.Assignment | None:
        """What this worker runs, as the allocation of its ``compatible`` metadata (None before any)."""
        if self.assignment is None:
            return None
        a = self.assignment
        return gp.Assignment(gp.NO_ERROR, a.leader, a.leader_url, a.config_offset, tuple(sorted(self.connectors)),
                             tuple(sorted(self.tasks)), version=max(a.version, 1))

    # --- herder thread ----------------------------------------------------------------------------
    def take(self) -> Received | Lost | None:
        """The oldest assignment (or loss of membership) received and not yet taken, if any."""
        with self._lock:
            return self._received.pop(0) if self._received else None

    @property
    def pending(self) -> bool:
        """True when an assignment is waiting to be taken."""
        with self._lock:
            return bool(self._received)

    def apply(self, received: Received, snapshot: ConfigState) -> None:
        """Make ``received`` the current assignment."""
        self.generation, self.member_id, self.assignment = received.generation, received.member_id, received.assignment
        self.protocol = received.protocol
        self._items = _items(snapshot)
        a = received.assignment
        if a.version == 0:  # eager: the whole assignment
            self.connectors, self.tasks = set(a.connectors), set(a.tasks)
        else:
            self.connectors = (self.connectors - set(a.revoked_connectors)) | set(a.connectors)
            self.tasks = (self.tasks - set(a.revoked_tasks)) | set(a.tasks)
        if a.delay_ms > 0:
            self.rejoin_at = time.monotonic() + a.delay_ms / 1000
        log.info("Joined group at generation %s as %s (%s protocol, leader %s at %s): connectors %s, tasks %s%s",
                 received.generation, received.member_id, received.protocol, a.leader, a.leader_url,
                 sorted(self.connectors), sorted(str(t) for t in self.tasks),
                 f", rebalance again in {a.delay_ms} ms" if a.delay_ms else "")

    @property
    def eager(self) -> bool:
        """True when the group runs the eager protocol (everything is revoked before a rejoin)."""
        return self.protocol in (None, gp.EAGER)

    def revoke(self) -> None:
        """Forget the assignment (eager protocol: everything is revoked before a rejoin)."""
        self.assignment = None
        self.connectors, self.tasks = set(), set()

    def rejoin_due(self) -> bool:
        """True once a scheduled rebalance delay has passed."""
        if self.rejoin_at is not None and time.monotonic() >= self.rejoin_at:
            self.rejoin_at = None
            return True
        return False

    @property
    def is_leader(self) -> bool:
        """True when this worker leads the group."""
        return self.assignment is not None and self.assignment.leader == self.member_id

    def owns_connector(self, name: str) -> bool:
        """True when this worker runs the Connector instance ``name``."""
        return name in self.connectors

    def owns_task(self, task_id: ConnectorTaskId) -> bool:
        """True when this worker runs the task."""
        return task_id in self.tasks

    def needs_rebalance(self, snapshot: ConfigState) -> bool:
        """True when connectors or task configs were added or removed since the assignment."""
        return self.assignment is not None and self._items is not None and _items(snapshot) != self._items

    def require_leader(self) -> None:
        """Raise what Connect answers when this worker cannot serve a leader-only write now."""
        if self.assignment is None or self.member.rebalancing:
            raise ConflictError(STALE_CONFIG)
        if not self.is_leader:
            if not self.assignment.leader_url:
                raise ConflictError(NO_LEADER)
            raise RequestTargetError(self.assignment.leader_url, NO_LEADER)

    def owner_url(self, item: str | ConnectorTaskId) -> str | None:
        """Leader only: the REST URL of the worker that runs ``item``."""
        return self.leader_owners.get(item)


def _items(snapshot: ConfigState) -> tuple[frozenset[str], frozenset[ConnectorTaskId]]:
    return frozenset(snapshot.connector_configs), frozenset(snapshot.task_configs)



def join_group(config: WorkerConfig, settings: Mapping[str, Any], store: ConfigStore, ready: threading.Event,
               ) -> ClusterView:
    """The group membership of a distributed worker: the subprotocols it offers (``compatible`` then
    ``default``, or only ``default`` when ``connect.protocol=eager``) and the leader's assignors."""
    url, topic = config.rest_url(), config.config_storage_topic
    names = {"eager": [gp.EAGER], "compatible": [gp.COMPATIBLE, gp.EAGER],
             "sessioned": [gp.SESSIONED, gp.COMPATIBLE, gp.EAGER]}[config.connect_protocol]
    cooperative = CooperativeAssignor(config.scheduled_rebalance_max_delay_ms, time.monotonic)
    view: list[ClusterView] = []

    def protocols() -> list[tuple[str, gp.WorkerMetadata]]:
        offset = store.snapshot().offset
        allocation = view[0].allocation()
        return [(name, gp.WorkerMetadata(url, offset, topic, gp.VERSIONS[name],
                                         allocation if gp.VERSIONS[name] else None)) for name in names]

    def assign(protocol: str, leader: str, members: Mapping[str, gp.WorkerMetadata]) -> dict[str, gp.Assignment]:
        version = gp.VERSIONS.get(protocol, 1)
        others = sorted({m.config_topic for m in members.values() if m.config_topic not in (None, topic)})
        if others and not ready.is_set():
            # a worker that joins a running group with other topics refuses itself, not the group
            refusal = gp.Assignment(gp.CONFIG_MISMATCH, leader, url, store.snapshot().offset,
                                    config_topic=others[0], version=version)
            return {member: refusal for member in members}
        if store.snapshot().offset < max((m.config_offset for m in members.values()), default=-1):
            store.refresh(config.worker_sync_timeout_ms / 1000)
        allocations: dict[str, tuple[str | ConnectorTaskId, ...]]
        if version == 0:
            result = gp.eager_assign(leader, members, store.snapshot())
            allocations = {m: (*a.connectors, *a.tasks) for m, a in result.items()}
        else:
            result = {m: replace(a, version=version) for m, a in gp.assign_group(
                leader, members, store.snapshot(), cooperative.assign, version).items()}
            allocations = {m: tuple(items) for m, items in cooperative.previous.items() if m}
        view[0].leader_owners = gp.owners(allocations, members)
        return result

    assert config.group_id is not None
    member = WorkerGroupMember(
        settings, group_id=config.group_id, client_id=f"connect-{config.worker_id()}", protocols=protocols,
        assignor=assign, on_assigned=lambda g, m, p, a: view[0].offer(g, m, p, a), on_lost=lambda: view[0].lose(),
        session_timeout_ms=config.session_timeout_ms, heartbeat_interval_ms=config.heartbeat_interval_ms,
        rebalance_timeout_ms=config.rebalance_timeout_ms)
    view.append(ClusterView(member, url))
    return view[0]

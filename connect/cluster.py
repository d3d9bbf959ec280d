"""What a distributed worker knows about its group: its assignment, the leader, and where work runs.

Owned by the herder thread. The group member's callbacks (kafka-python's thread) only hand over a new
assignment through :meth:`ClusterView.offer`; the herder applies it with :meth:`ClusterView.take`.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from connect import group_protocol as gp
from connect.errors import ConflictError, ConnectRestError
from connect.group_member import WorkerGroupMember
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
    assignment: gp.Assignment


class ClusterView:
    """This worker's place in the group."""

    def __init__(self, member: WorkerGroupMember, url: str) -> None:
        self.member = member
        self.url = url
        self.member_id = ""
        self.generation = -1
        self.assignment: gp.Assignment | None = None
        self._received: Received | None = None
        self._lock = threading.Lock()
        self._items: tuple[frozenset[str], frozenset[ConnectorTaskId]] | None = None

    # --- called from the group member's thread ----------------------------------------------------
    def offer(self, generation: int, member_id: str, assignment: gp.Assignment) -> None:
        """Hand over a new assignment (applied on the herder thread)."""
        with self._lock:
            self._received = Received(generation, member_id, assignment)

    # --- herder thread ----------------------------------------------------------------------------
    def take(self) -> Received | None:
        """The assignment received since the last call, if any."""
        with self._lock:
            received, self._received = self._received, None
        return received

    def apply(self, received: Received, snapshot: ConfigState) -> None:
        """Make ``received`` the current assignment."""
        self.generation, self.member_id, self.assignment = received.generation, received.member_id, received.assignment
        self._items = _items(snapshot)
        a = received.assignment
        log.info("Joined group at generation %s as %s (leader %s at %s): connectors %s, tasks %s",
                 received.generation, received.member_id, a.leader, a.leader_url, list(a.connectors),
                 [str(t) for t in a.tasks])

    def revoke(self) -> None:
        """Forget the assignment (eager protocol: everything is revoked before a rejoin)."""
        self.assignment = None

    @property
    def is_leader(self) -> bool:
        """True when this worker leads the group."""
        return self.assignment is not None and self.assignment.leader == self.member_id

    def owns_connector(self, name: str) -> bool:
        """True when this worker runs the Connector instance ``name``."""
        return self.assignment is not None and name in self.assignment.connectors

    def owns_task(self, task_id: ConnectorTaskId) -> bool:
        """True when this worker runs the task."""
        return self.assignment is not None and task_id in self.assignment.tasks

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
        members, assignments = self.member.leader_view
        return gp.owners(assignments, members).get(item)


def _items(snapshot: ConfigState) -> tuple[frozenset[str], frozenset[ConnectorTaskId]]:
    return frozenset(snapshot.connector_configs), frozenset(snapshot.task_configs)


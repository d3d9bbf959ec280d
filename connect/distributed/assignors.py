"""Incremental cooperative assignment (Connect's ``compatible`` subprotocol, KIP-415), leader side.

Members keep running their work through a rebalance and report it in their metadata. The leader revokes what
was deleted or runs twice, assigns new work to the least-loaded members (connectors and tasks balanced
separately), holds back the work of a member that left for up to ``scheduled.rebalance.max.delay.ms`` (it may
come back; a worker back under a new member id, its REST URL the same, gets it at once), and when the group is
otherwise stable revokes the excess of over-loaded members so the next round can give it to the others. A
revocation or a delay makes the members rejoin for a follow-up round.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

from connect.distributed import protocol as gp
from connect.storage.config_state import ConfigState, ConnectorTaskId

log = logging.getLogger(__name__)

Item: TypeAlias = str | ConnectorTaskId


def _split(items: Iterable[Item]) -> tuple[tuple[str, ...], tuple[ConnectorTaskId, ...]]:
    """Connectors and tasks, each sorted."""
    pool = list(items)
    return (tuple(sorted(i for i in pool if isinstance(i, str))),
            tuple(sorted(i for i in pool if isinstance(i, ConnectorTaskId))))


@dataclass
class CooperativeAssignor:
    """The leader's memory between rounds: the last total allocation and the scheduled rebalance."""

    max_delay_ms: int
    clock: Callable[[], float]
    previous: dict[str, set[Item]] = field(default_factory=dict)
    deadline: float | None = None
    # the REST URL of the worker each item was last given to (held items keep their departed owner's)
    last_url: dict[Item, str] = field(default_factory=dict)

    def assign(self, leader: str, members: Mapping[str, gp.WorkerMetadata], snapshot: ConfigState,
               ) -> dict[str, gp.Assignment]:
        own = members[leader]
        configured: set[Item] = set(snapshot.connector_configs)
        configured |= {t for name in snapshot.connectors() for t in snapshot.tasks(name)}
        current = {m: _allocation(md) for m, md in members.items()}
        revoked: dict[str, set[Item]] = {m: set() for m in members}
        holders: dict[Item, list[str]] = {}
        for member, items in current.items():
            for item in items:
                holders.setdefault(item, []).append(member)
        for item, owners in holders.items():
            if item not in configured or len(owners) > 1:  # deleted, or running twice
                for member in owners:
                    revoked[member].add(item)
        running = {m: items - revoked[m] for m, items in current.items()}
        reported: set[Item] = set().union(*current.values())
        lost = {i for items in self.previous.values() for i in items} - reported
        lost &= configured
        # the work of a worker that is back under a new member id reporting none of it (the group had dropped it:
        # it gave its work up, see ClusterView.lose) is not held for it: it is here; assigned now
        present = {md.url for md in members.values()}
        returned = {i for i in lost if self.last_url.get(i) in present}
        delay = self._delay(lost - returned)
        held = (lost - returned) if delay > 0 else set()
        taken: set[Item] = set().union(*running.values(), *revoked.values())
        unassigned = configured - taken - held
        assigned: dict[str, set[Item]] = {m: set() for m in members}
        self._assign_least_loaded(sorted(unassigned, key=str), running, assigned)
        if not held and not any(revoked.values()) and not unassigned:
            self._revoke_excess(running, revoked)
        self.previous = {m: (running[m] - revoked[m]) | assigned[m] for m in members}
        if held:
            self.previous[""] = held  # still owed to the group: tracked until reassigned
        self.last_url = {**{i: self.last_url[i] for i in held if i in self.last_url},
                         **{i: members[m].url for m, items in self.previous.items() if m for i in items}}
        result = {}
        for member in members:
            connectors, tasks = _split(assigned[member])
            gone_connectors, gone_tasks = _split(revoked[member])
            result[member] = gp.Assignment(gp.NO_ERROR, leader, own.url, snapshot.offset, connectors, tasks,
                                           own.config_topic, 1, gone_connectors, gone_tasks, delay)
        return result

    def _delay(self, lost: set[Item]) -> int:
        """The remaining scheduled-rebalance delay in ms (0: reassign lost work now)."""
        if not lost or self.max_delay_ms <= 0:
            self.deadline = None
            return 0
        now = self.clock()
        if self.deadline is None:
            self.deadline = now + self.max_delay_ms / 1000
            log.info("%s item(s) of departed workers held back for up to %s ms", len(lost), self.max_delay_ms)
        remaining = int((self.deadline - now) * 1000)
        if remaining <= 0:
            self.deadline = None
            log.info("Scheduled rebalance delay expired: reassigning %s item(s)", len(lost))
            return 0
        return remaining

    @staticmethod
    def _assign_least_loaded(items: list[Item], running: Mapping[str, set[Item]],
                             assigned: dict[str, set[Item]]) -> None:
        for item in items:
            kind = type(item)

            def load(member: str, kind: type = kind) -> tuple[int, str]:
                count = sum(isinstance(i, kind) for i in running[member] | assigned[member])
                return count, member
            assigned[min(assigned, key=load)].add(item)

    @staticmethod
    def _revoke_excess(running: Mapping[str, set[Item]], revoked: dict[str, set[Item]]) -> None:
        """Load balancing: bring every member down to the ceiling of the average, per kind."""
        for kind in (str, ConnectorTaskId):
            counts = {m: [i for i in items if isinstance(i, kind)] for m, items in running.items()}
            total = sum(len(v) for v in counts.values())
            if not total or len(counts) < 2:
                continue
            ceiling = math.ceil(total / len(counts))
            if max(len(v) for v in counts.values()) - min(len(v) for v in counts.values()) <= 1:
                continue
            for member, items in counts.items():
                for item in sorted(items, key=str)[ceiling:]:
                    revoked[member].add(item)


def _allocation(metadata: gp.WorkerMetadata) -> set[Item]:
    allocation = metadata.allocation
    if allocation is None:
        return set()
    return {*allocation.connectors, *allocation.tasks}

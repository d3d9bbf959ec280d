"""Zombie fencing (KIP-618; Connect's ``DistributedHerder.fenceZombieSourceTasks`` and ``ZombieFencing``).

Before the tasks of a new generation of an exactly-once source connector start, the leader fences the transactional
producers of the previous generation (how many: the connector's ``tasks-fencing-<connector>`` record in the config
topic), then writes the new generation's task count. A task asks for it before it initializes its producer; on a
follower the request goes to the leader as Connect's internal ``PUT /connectors/{connector}/fence``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping

from connect.api.errors import ConnectError, NotFoundError
from connect.distributed.cluster import RequestTargetError
from connect.distributed.forwarding import forward_fence
from connect.runtime.herder import Herder
from connect.runtime.rest_errors import ConflictError
from connect.storage.config_state import ConnectorTaskId

log = logging.getLogger(__name__)


class ZombieFencing:
    """One worker's side of zombie fencing: performs it as the leader, forwards it otherwise."""

    def __init__(self, herder: Herder, timeout: float = 90.0) -> None:
        self._herder = herder
        self._timeout = timeout
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def _lock(self, name: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(name, threading.Lock())

    def fence(self, name: str) -> None:
        """Leader only (else :class:`RequestTargetError`): fence ``name``'s previous task generation if its latest
        task configs came after its latest task count record, then write the new count. Concurrent requests for one
        connector wait for the round under way, after which nothing is pending."""
        with self._lock(name):
            plan = self._herder.submit(lambda: self._plan(name)).result(self._timeout)
            if plan is None:
                return
            to_fence, to_record, generation, config = plan
            if to_fence:
                log.info("[%s] Fencing out %s task producers of the previous generation", name, to_fence)
                self._herder.worker.fence_producers(name, to_fence, config)
            self._herder.submit(lambda: self._record(name, to_record, generation)).result(self._timeout)

    def fence_or_forward(self, name: str) -> None:
        """What an exactly-once task runs before it initializes its producer."""
        try:
            self.fence(name)
        except RequestTargetError as exc:
            log.debug("[%s] Forwarding zombie fencing request to the leader at %s", name, exc.url)
            forward_fence(exc.url, name, self._herder.config_store.snapshot().session_key)

    def generation(self, name: str) -> int:
        """The generation of ``name``'s task configs the herder starts tasks from (herder thread)."""
        return self._herder.reconciler.snapshot.task_config_generations.get(name, 0)

    def verify(self, task_id: ConnectorTaskId, generation: int) -> None:
        """After an exactly-once task initialized its producer (Connect's ``verifyTaskGenerationAndOwnership``): its
        task configs are still the latest and the task is still this worker's, else it must not start."""
        def check() -> None:
            self._herder.config_store.refresh(self._timeout)
            latest = self._herder.config_store.snapshot().task_config_generations.get(task_id.connector, 0)
            if latest != generation:
                raise ConnectError(f"Cannot start source task {task_id} with exactly-once support as the connector "
                                   "has already generated a new set of task configs")
            if not self._herder.membership.owns_task(task_id):
                raise ConnectError(f"Cannot start source task {task_id} as it has already been revoked from this "
                                   "worker")
        self._herder.submit(check).result(self._timeout)

    def _plan(self, name: str) -> tuple[int, int, int, Mapping[str, str]] | None:
        herder = self._herder
        herder.membership.require_leader()
        herder.config_store.refresh(self._timeout)
        snapshot = herder.config_store.snapshot()
        if name not in snapshot.connector_configs:
            raise NotFoundError(f"Connector {name} not found")
        if name not in snapshot.pending_fencing:
            log.debug("Skipping zombie fencing round for connector %s as all old task generations have already been "
                      "fenced out", name)
            return None
        record, count = snapshot.task_count_records.get(name), snapshot.task_counts.get(name, 0)
        # no record: no transactional producer ran yet; one task before and after: the new one fences the old itself
        to_fence = 0 if record is None or (record == 1 and count == 1) else record
        return to_fence, count, snapshot.task_config_generations.get(name, 0), snapshot.connector_configs[name]

    def _record(self, name: str, count: int, generation: int) -> None:
        herder = self._herder
        herder.config_store.refresh(self._timeout)
        if generation < herder.config_store.snapshot().task_config_generations.get(name, 0):
            raise ConflictError("Fencing failed because new task configurations were generated for the connector")
        log.debug("Writing task count record %s for connector %s", count, name)
        herder.config_store.put_task_count_record(name, count)

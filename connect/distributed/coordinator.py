"""The herder's group duties in distributed mode (Connect's ``DistributedHerder`` rebalance handling): joining,
applying assignments (eager or incremental cooperative), the session key, and who may serve a write."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping

from connect.api.errors import ConnectError
from connect.distributed import protocol as gp
from connect.distributed import session_keys
from connect.distributed.cluster import ClusterView, RequestTargetError
from connect.runtime.rest_errors import ConflictError
from connect.runtime.worker import Worker
from connect.storage.base import ConfigStore
from connect.storage.config_state import ConfigState, ConnectorTaskId

log = logging.getLogger(__name__)


class GroupMembership:
    """Mixed into the herder; every method runs on the herder thread unless it says otherwise."""

    worker: Worker
    config_store: ConfigStore
    ready: threading.Event
    cluster: ClusterView | None
    _stop: threading.Event
    _assigned: dict[ConnectorTaskId, dict[str, str]]
    _sync_timeout: float

    def _join_group(self) -> None:
        """Block until the first assignment (or stop), saying what it waits for."""
        assert self.cluster is not None
        waited = 0.0
        while not self._stop.is_set() and self.cluster.assignment is None:
            self._tick_group()
            waited += 1
            if self.cluster.assignment is None and waited % 30 == 0:
                log.info("Still waiting to join group %s", self.worker.config.group_id)

    def _tick_group(self) -> None:
        cluster = self.cluster
        assert cluster is not None
        if cluster.rejoin_due():
            log.info("Scheduled rebalance delay passed: rejoining the group")
            cluster.member.request_rejoin()
        if cluster.member.rebalancing and cluster.eager and cluster.assignment is not None:
            log.info("Rebalance started: stopping every connector and task of this worker (eager protocol)")
            self._revoke_all()
        try:
            cluster.member.poll(0.5)
        except Exception as exc:  # noqa: BLE001 - membership errors are retried on the next tick
            log.warning("Group membership failed, retrying: %s", exc)
            self._stop.wait(0.5)
            return
        received = cluster.take()
        if received is None:
            return
        theirs, own = received.assignment.config_topic, self.worker.config.config_storage_topic
        if theirs is not None and theirs != own:
            message = (f"This worker uses config.storage.topic '{own}', but the leader of group "
                       f"'{self.worker.config.group_id}' at {received.assignment.leader_url} uses '{theirs}': every "
                       "worker of a group must use the same config, offset and status topics")
            if not self.ready.is_set():
                raise ConnectError(message)
            log.error("%s; waiting 10 s, then rejoining", message)
            self._stop.wait(10)
            cluster.member.request_rejoin()
            return
        if received.assignment.failed:
            log.warning("The leader's config is behind a member's: reading the config topic, then rejoining")
            self.config_store.refresh(self._sync_timeout)
            cluster.member.request_rejoin()
            return
        if self.config_store.snapshot().offset < received.assignment.config_offset:
            self.config_store.refresh(self._sync_timeout)
        snapshot = self.config_store.snapshot()
        cluster.apply(received, snapshot)
        self._ensure_session_key(snapshot)
        if received.revoked:  # incremental cooperative: stop what was taken away, then a follow-up round
            self._stop_unowned()
            cluster.member.request_rejoin()

    def _ensure_session_key(self, snap: ConfigState) -> None:
        """Leader under ``sessioned``: write a session key when there is none or it is older than its TTL."""
        cluster = self.cluster
        if cluster is None or cluster.protocol != gp.SESSIONED or not cluster.is_leader:
            return
        if session_keys.expired(snap.session_key, self.worker.config.inter_worker_key_ttl_ms):
            log.info("Writing a new session key for internal requests")
            key = session_keys.new_key()
            self.config_store.put_session_key(key.key, key.algorithm, key.created_ms)

    def verify_internal_request(self, body: bytes, headers: Mapping[str, str]) -> None:
        """Under ``sessioned``, an internal request must carry a valid signature (Connect's 400/403/503)."""
        if self.cluster is not None and self.cluster.protocol == gp.SESSIONED:
            session_keys.verify(self.config_store.snapshot().session_key, body, headers)

    def _stop_unowned(self) -> None:
        stale = [tid for tid in self._assigned if not self._owns_task(tid)]
        self.worker.stop_tasks(stale)
        for tid in stale:
            del self._assigned[tid]
        for name in list(self.worker.connectors):
            if not self._owns_connector(name):
                self.worker.stop_connector(name, report=False)

    def _revoke_all(self) -> None:
        assert self.cluster is not None
        self.worker.stop_tasks(list(self.worker.tasks))
        self._assigned.clear()
        for name in list(self.worker.connectors):
            self.worker.stop_connector(name, report=False)
        self.cluster.revoke()

    def _owns_connector(self, name: str) -> bool:
        return self.cluster is None or self.cluster.owns_connector(name)

    def _owns_task(self, task_id: ConnectorTaskId) -> bool:
        return self.cluster is None or self.cluster.owns_task(task_id)

    @property
    def _leads(self) -> bool:
        return self.cluster is None or self.cluster.is_leader

    def require_leader(self) -> None:
        """Raise Connect's forward-or-409 error unless this worker may write connector configs now."""
        if self.cluster is not None:
            self.cluster.require_leader()

    def _require_owner_or_leader(self, item: str | ConnectorTaskId) -> bool:
        """True when this worker runs ``item``; raises a request-target error naming the worker to ask."""
        if isinstance(item, str) and self._owns_connector(item):
            return True
        if isinstance(item, ConnectorTaskId) and self._owns_task(item):
            return True
        self.require_leader()
        assert self.cluster is not None
        url = self.cluster.owner_url(item)
        if url is None:
            raise ConflictError(f"Cannot find the worker that runs {item}; a rebalance may be under way")
        raise RequestTargetError(url, f"{item} runs on another worker")

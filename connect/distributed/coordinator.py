"""A distributed worker's membership (Connect's ``DistributedHerder`` rebalance handling): joining the group,
applying assignments (eager or incremental cooperative), the session key, and who may serve a write.

Runs on the herder thread only; the group member's own thread hands assignments over through
:class:`~connect.distributed.cluster.ClusterView`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping

from connect.api.errors import ConnectError
from connect.distributed import protocol as gp
from connect.distributed import session_keys
from connect.distributed.cluster import ClusterView, Lost, RequestTargetError
from connect.distributed.forwarding import forward_task_configs
from connect.runtime.membership import RebalanceListener
from connect.runtime.rest_errors import ConflictError
from connect.runtime.worker_config import WorkerConfig
from connect.runtime.worker_metrics import RebalanceMetrics
from connect.storage.base import ConfigStore
from connect.storage.config_state import ConfigState, ConnectorTaskId

log = logging.getLogger(__name__)


class GroupCoordinator:
    """This worker's share of the group's work, and the leader's duties when it leads."""

    poll_timeout = 0.2

    def __init__(self, cluster: ClusterView, config: WorkerConfig, config_store: ConfigStore,
                 ready: threading.Event, stop: threading.Event, rebalance: RebalanceMetrics | None = None) -> None:
        """``ready`` is set once the herder started (before it, a config-topic mismatch is fatal); ``stop`` is the
        herder's stop event, so waits end when the worker stops; ``rebalance`` records the rebalances."""
        self.cluster = cluster
        self._config = config
        self._config_store = config_store
        self._ready = ready
        self._stop = stop
        self._sync_timeout = config.worker_sync_timeout_ms / 1000
        self._rebalance = rebalance or RebalanceMetrics()
        self._rebalance.assigned_to(cluster.member.client_id, lambda: (len(cluster.connectors), len(cluster.tasks)),
                                    cluster.member.client_metrics)
        self._unreachable_since: float | None = None
        # a config-topic write or read the herder thread waits on gives up once this worker is cut off, so the
        # revocation below is not held up behind it (the write's own bound is 30 s)
        config_store.set_interrupt(self.cut_off)

    @property
    def rebalancing(self) -> bool:
        return self.cluster.member.rebalancing

    @property
    def leads(self) -> bool:
        return self.cluster.is_leader

    def generation(self) -> int:
        return max(self.cluster.generation, 0)

    def join(self, stop: threading.Event, listener: RebalanceListener) -> None:
        """Block until the first assignment (or stop), saying what it waits for."""
        waited = 0
        while not stop.is_set() and self.cluster.assignment is None:
            self.tick(listener)
            waited += 1
            if self.cluster.assignment is None and waited % 30 == 0:
                log.info("Still waiting to join group %s", self._config.group_id)

    def tick(self, listener: RebalanceListener) -> None:
        cluster = self.cluster
        self._revoke_when_cut_off(listener)
        if self._config_store.take_write_fenced() and cluster.is_leader:
            # a privileged write failed, most likely because a newer leader fenced this one while it was away: rejoin,
            # and claim the privileges again only if the group still makes this worker its leader
            log.warning("Failed to write to config topic as leader; rejoining the group, then reclaiming write "
                        "privileges for the config topic if still the leader")
            cluster.member.request_rejoin()
        if cluster.rejoin_due():
            log.info("Scheduled rebalance delay passed: rejoining the group")
            cluster.member.request_rejoin()
        if cluster.member.rebalancing and cluster.eager and cluster.assignment is not None:
            log.info("Rebalance started: stopping every connector and task of this worker (eager protocol)")
            listener.revoke_all()
            cluster.revoke()
        if cluster.member.rebalancing:
            self._rebalance.started()
        try:
            cluster.member.poll(0.5)
        except Exception as exc:  # noqa: BLE001 - membership errors are retried on the next tick
            log.warning("Group membership failed, retrying: %s", exc)
            self._stop.wait(0.5)
            return
        received = cluster.take()
        if isinstance(received, Lost):
            log.info("This worker was dropped from group %s (the coordinator no longer knew member %s or its "
                     "generation): stopping its connectors and tasks, which the group may have given to other "
                     "workers; it rejoins without them", self._config.group_id, received.member_id)
            listener.revoke_all()
            return
        if received is None:
            if cluster.is_leader and not cluster.member.rebalancing and self._config_store.needs_write_privileges():
                self._claim_write_privileges("as the leader, after an earlier attempt failed", backoff=0.25)
            return
        theirs, own = received.assignment.config_topic, self._config.config_storage_topic
        if theirs is not None and theirs != own:
            message = (f"This worker uses config.storage.topic '{own}', but the leader of group "
                       f"'{self._config.group_id}' at {received.assignment.leader_url} uses '{theirs}': every "
                       "worker of a group must use the same config, offset and status topics")
            if not self._ready.is_set():
                raise ConnectError(message)
            log.error("%s; waiting 10 s, then rejoining", message)
            self._stop.wait(10)
            cluster.member.request_rejoin()
            return
        if received.assignment.failed:
            log.warning("The leader's config is behind a member's: reading the config topic, then rejoining")
            self._config_store.refresh(self._sync_timeout)
            cluster.member.request_rejoin()
            return
        if self._config_store.snapshot().offset < received.assignment.config_offset:
            self._config_store.refresh(self._sync_timeout)
        snapshot = self._config_store.snapshot()
        cluster.apply(received, snapshot)
        self._rebalance.completed_with(received.generation, received.assignment.leader_url, received.protocol)
        if cluster.is_leader:
            # as the leader, this worker may now write connector configs, session keys and task count records
            self._claim_write_privileges("after being elected leader during rebalance")
        else:  # another worker leads and has fenced this one's producer, if it had one: a later claim starts afresh
            self._config_store.relinquish_write_privileges()
        self._ensure_session_key(snapshot)
        if received.revoked:  # incremental cooperative: stop what was taken away, then a follow-up round
            listener.stop_unowned()
            if not cluster.pending:  # (unless the follow-up round's assignment is already here)
                cluster.member.request_rejoin()

    def _claim_write_privileges(self, when: str, backoff: float = 0.0) -> None:
        try:
            self._config_store.claim_write_privileges()
        except ConnectError as exc:
            log.error("Unable to claim write privileges for config topic %s: %s", when, exc)
            self._stop.wait(backoff)

    def cut_off(self) -> str | None:
        """Why this worker must stop its work (None while it may run it): the group coordinator has been
        unreachable for ``heartbeat.interval.ms`` and the worker still holds an assignment. Asked on the herder
        thread by each tick and by a config-topic wait the herder thread is blocked in."""
        cluster = self.cluster
        if not getattr(cluster.member, "coordinator_unknown", False):
            self._unreachable_since = None
            return None
        now = time.monotonic()
        if self._unreachable_since is None:
            self._unreachable_since = now
        elapsed_ms = (now - self._unreachable_since) * 1000
        if cluster.assignment is None or elapsed_ms < self._config.heartbeat_interval_ms:
            return None
        return f"the group coordinator was unreachable for {elapsed_ms:.0f} ms"

    def _revoke_when_cut_off(self, listener: RebalanceListener) -> None:
        """As Connect's ``WorkerCoordinator.poll`` (KAFKA-9184): once the group coordinator has been unreachable
        for ``heartbeat.interval.ms``, stop this worker's connectors and tasks, so that they do not run while the
        worker is not a member of the group (the group gives them to other workers); it rejoins when it can.
        A herder request blocked in a config-topic write gives up as soon as :meth:`cut_off` says so, so the
        revocation comes on the next tick rather than after the write's 30 s bound."""
        reason = self.cut_off()
        if reason is None:
            return
        cluster = self.cluster
        log.info("%s: revoking this worker's connectors %s and tasks %s to avoid running them while not a member "
                 "of the group", reason[0].upper() + reason[1:], sorted(cluster.connectors),
                 sorted(str(t) for t in cluster.tasks))
        listener.revoke_all()
        cluster.revoke()
        cluster.member.request_rejoin()

    def after_reconcile(self, snapshot: ConfigState) -> None:
        if self.cluster.needs_rebalance(snapshot):
            log.info("Connectors or task configs changed: requesting a rebalance")
            self.cluster.member.request_rejoin()
        self._ensure_session_key(snapshot)

    def _ensure_session_key(self, snapshot: ConfigState) -> None:
        """Leader under ``sessioned``: write a session key when there is none or it is older than its TTL."""
        if self.cluster.protocol != gp.SESSIONED or not self.cluster.is_leader:
            return
        if session_keys.expired(snapshot.session_key, self._config.inter_worker_key_ttl_ms):
            log.info("Writing a new session key for internal requests")
            key = session_keys.new_key()
            self._config_store.put_session_key(key.key, key.algorithm, key.created_ms)

    def verify_internal_request(self, body: bytes, headers: Mapping[str, str]) -> None:
        """Under ``sessioned``, an internal request must carry a valid signature (Connect's 400/403/503)."""
        if self.cluster.protocol == gp.SESSIONED:
            session_keys.verify(self._config_store.snapshot().session_key, body, headers)

    def owns_connector(self, name: str) -> bool:
        return self.cluster.owns_connector(name)

    def owns_task(self, task_id: ConnectorTaskId) -> bool:
        return self.cluster.owns_task(task_id)

    def require_leader(self) -> None:
        self.cluster.require_leader()

    def require_owner_or_leader(self, item: str | ConnectorTaskId) -> bool:
        if self.owns_connector(item) if isinstance(item, str) else self.owns_task(item):
            return True
        self.require_leader()
        url = self.cluster.owner_url(item)
        if url is None:
            raise ConflictError(f"Cannot find the worker that runs {item}; a rebalance may be under way")
        raise RequestTargetError(url, f"{item} runs on another worker")

    def publish_task_configs(self, name: str, configs: list[dict[str, str]], snapshot: ConfigState) -> None:
        if self.leads:
            self._config_store.put_task_configs(name, configs)
            return
        assignment = self.cluster.assignment
        if assignment is None:
            raise ConflictError(f"Cannot send the task configs of {name}: no known leader (a rebalance is under way)")
        key = snapshot.session_key if self.cluster.protocol == gp.SESSIONED else None
        forward_task_configs(assignment.leader_url, name, configs, key)

    def stop(self) -> None:
        self.cluster.member.stop()

"""The herder's reconciliation: what runs in the worker is brought in line with the config topic and this
worker's share of the group (Connect's ``DistributedHerder.tick`` after a config update)."""

from __future__ import annotations

import logging

from connect.distributed import protocol as gp
from connect.distributed.cluster import ClusterView
from connect.distributed.coordinator import GroupMembership
from connect.distributed.forwarding import forward_task_configs
from connect.runtime.worker import Worker
from connect.storage.base import ConfigStore, StatusStore
from connect.storage.config_state import ConfigState, ConnectorTaskId, TargetState

log = logging.getLogger(__name__)


class Reconciler(GroupMembership):
    """Mixed into the herder; runs on the herder thread only."""

    worker: Worker
    config_store: ConfigStore
    status_store: StatusStore
    cluster: ClusterView | None
    _snapshot: ConfigState
    _known: set[str]
    _failed_connectors: dict[str, dict[str, str]]
    _reconfigure: set[str]
    _assigned: dict[ConnectorTaskId, dict[str, str]]

    def _restart_from_request(self, name: str, include_tasks: bool, only_failed: bool) -> None:
        raise NotImplementedError  # the herder's

    def _apply_logger_level(self, namespace: str, level: str) -> None:
        raise NotImplementedError  # the herder's

    def _reconcile(self) -> None:
        snap = self.config_store.snapshot()
        self._snapshot = snap
        for namespace, level in self.config_store.take_logger_levels():
            self._apply_logger_level(namespace, level)
        for request in self.config_store.take_restart_requests():
            self._restart_from_request(request.connector, request.include_tasks, request.only_failed)
        if self.cluster is not None and self.cluster.needs_rebalance(snap):
            log.info("Connectors or task configs changed: requesting a rebalance")
            self.cluster.member.request_rejoin()
        self._stop_removed_connectors(snap)
        for name in snap.connectors():
            if self._owns_connector(name):
                self._reconcile_connector(name, snap)
        for name in sorted(self._reconfigure):
            self._publish_task_configs(name, snap)
        self._reconfigure.clear()
        self._reconcile_tasks(snap)
        self._forget_deleted(snap)  # after the tasks stopped, so their last status writes are tombstoned too
        self._ensure_session_key(snap)

    def _stop_removed_connectors(self, snap: ConfigState) -> None:
        for name in list(self.worker.connectors):
            if name not in snap.connector_configs:  # deleted: UNASSIGNED with no version, as Connect writes it
                self.worker.forget_version(name)
                self.worker.stop_connector(name)
            elif snap.target_state(name) is TargetState.STOPPED or not self._owns_connector(name):
                self.worker.stop_connector(name, report=False)
        if not self._leads:
            return
        for name, count in snap.task_counts.items():
            for number in self.status_store.tasks(name):
                if number >= count and ConnectorTaskId(name, number) not in self._assigned:
                    self.status_store.put_task(ConnectorTaskId(name, number), None)

    def _forget_deleted(self, snap: ConfigState) -> None:
        for name in self._known - set(snap.connector_configs) if self._leads else ():
            self.status_store.put_connector(name, None)
            for number in self.status_store.tasks(name):
                self.status_store.put_task(ConnectorTaskId(name, number), None)
            self.status_store.reset_topics(name)
            self._failed_connectors.pop(name, None)
        self._known = set(snap.connector_configs)

    def _reconcile_connector(self, name: str, snap: ConfigState) -> None:
        config = snap.connector_configs[name]
        target = snap.target_state(name)
        self.worker.remember_version(name, config)
        if target is TargetState.STOPPED:
            if snap.task_counts.get(name) and self._leads:
                self.config_store.put_task_configs(name, [])
            self.worker.put_connector_state(name, "STOPPED")
            return
        running = self.worker.connectors.get(name)
        if not (running is not None and running[1] == config) and self._failed_connectors.get(name) != config:
            if running is not None:  # a config update: UNASSIGNED, then RUNNING again
                self.worker.stop_connector(name)
            if self.worker.start_connector(name, config):
                self._failed_connectors.pop(name, None)
                self._reconfigure.add(name)
            else:
                self._failed_connectors[name] = config
        if name in self.worker.connectors:
            self.worker.put_connector_state(name, "PAUSED" if target is TargetState.PAUSED else "RUNNING")

    def _publish_task_configs(self, name: str, snap: ConfigState) -> None:
        if name not in self.worker.connectors:
            return
        try:
            configs = self.worker.connector_task_configs(name)
        except Exception as exc:  # noqa: BLE001 - the connector's failure, reported in its status
            self.worker.stop_connector(name, report=False)
            self.worker._connector_failed(name, exc)
            self._failed_connectors[name] = snap.connector_configs[name]
            return
        current = [snap.task_configs.get(t) for t in snap.tasks(name)]
        if configs == current:
            return
        if self._leads:
            log.info("[%s] Writing %s task config(s)", name, len(configs))
            self.config_store.put_task_configs(name, configs)
        else:
            assert self.cluster is not None and self.cluster.assignment is not None
            key = self._snapshot.session_key if self.cluster.protocol == gp.SESSIONED else None
            forward_task_configs(self.cluster.assignment.leader_url, name, configs, key)

    def _reconcile_tasks(self, snap: ConfigState) -> None:
        desired = {
            tid: cfg for tid, cfg in snap.task_configs.items()
            if tid.connector in snap.connector_configs and snap.target_state(tid.connector) is not TargetState.STOPPED
            and self._owns_task(tid)
        }
        stale = [tid for tid, cfg in self._assigned.items() if desired.get(tid) != cfg]
        if stale:
            self.worker.stop_tasks(stale)
            for tid in stale:
                del self._assigned[tid]
        for tid in sorted(desired):
            if tid not in self._assigned:
                self.worker.start_task(tid, desired[tid], snap.connector_configs[tid.connector])
                self._assigned[tid] = desired[tid]
            runner = self.worker.tasks.get(tid)
            if runner is not None:
                if snap.target_state(tid.connector) is TargetState.PAUSED:
                    runner.pause()
                else:
                    runner.resume()

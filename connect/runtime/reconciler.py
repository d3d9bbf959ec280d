"""Reconciliation: what runs in the worker is brought in line with the stored configuration and this worker's
share of the cluster (Connect's ``DistributedHerder.tick`` after a config update). Runs on the herder thread
only."""

from __future__ import annotations

import logging

from connect.runtime.loggers import default_loggers
from connect.runtime.membership import Membership
from connect.runtime.worker import Worker
from connect.storage.base import ConfigStore, StatusStore
from connect.storage.config_state import ConfigState, ConnectorTaskId, TargetState

log = logging.getLogger(__name__)


class Reconciler:
    """Starts, stops and restarts connectors and tasks; the herder's view of what runs here."""

    def __init__(self, worker: Worker, config_store: ConfigStore, status_store: StatusStore,
                 membership: Membership) -> None:
        self.worker = worker
        self.config_store = config_store
        self.status_store = status_store
        self.membership = membership
        self.snapshot = ConfigState()
        self._known: set[str] = set()
        self._failed_connectors: dict[str, dict[str, str]] = {}
        self._reconfigure: set[str] = set()
        self._assigned: dict[ConnectorTaskId, dict[str, str]] = {}

    def refresh_snapshot(self) -> ConfigState:
        """Take the store's latest snapshot as the one reads are served from."""
        self.snapshot = self.config_store.snapshot()
        return self.snapshot

    def request_reconfiguration(self, name: str) -> None:
        """Recompute the connector's task configs on the next reconcile."""
        self._reconfigure.add(name)

    def forget_failure(self, name: str) -> None:
        """A new config was written: try to start the connector again even if its last config failed."""
        self._failed_connectors.pop(name, None)

    def reconcile(self) -> None:
        """Bring the worker in line with the config store's latest snapshot."""
        snap = self.refresh_snapshot()
        for namespace, level in self.config_store.take_logger_levels():
            _apply_logger_level(namespace, level)
        for request in self.config_store.take_restart_requests():
            self.restart_from_request(request.connector, request.include_tasks, request.only_failed)
        self._stop_removed_connectors(snap)
        for name in snap.connectors():
            if self.membership.owns_connector(name):
                self._reconcile_connector(name, snap)
        for name in sorted(self._reconfigure):
            self._publish_task_configs(name, snap)
        self._reconfigure.clear()
        self._reconcile_tasks(snap)
        self._forget_deleted(snap)  # after the tasks stopped, so their last status writes are tombstoned too
        self.membership.after_reconcile(snap)

    # --- rebalance listener ------------------------------------------------------------------------
    def revoke_all(self) -> None:
        """Stop every connector and task of this worker."""
        self.worker.stop_tasks(list(self.worker.tasks))
        self._assigned.clear()
        for name in list(self.worker.connectors):
            self.worker.stop_connector(name, report=False)

    def stop_unowned(self) -> None:
        """Stop the connectors and tasks this worker no longer owns."""
        stale = [tid for tid in self._assigned if not self.membership.owns_task(tid)]
        self.worker.stop_tasks(stale)
        for tid in stale:
            del self._assigned[tid]
        for name in list(self.worker.connectors):
            if not self.membership.owns_connector(name):
                self.worker.stop_connector(name, report=False)

    # --- restarts ------------------------------------------------------------------------------------
    def restart_plan(self, name: str, include_tasks: bool, only_failed: bool,
                     failed: tuple[str, ...] = ("FAILED",)) -> tuple[bool, list[ConnectorTaskId]]:
        """What a restart request covers: the connector unless only failed ones are asked for, and tasks."""
        status = self.status_store.connector(name)
        connector = not only_failed or (status is not None and status.state in failed)
        tasks = [] if not include_tasks else [
            ConnectorTaskId(name, n) for n, s in sorted(self.status_store.tasks(name).items())
            if not only_failed or s.state in failed
        ]
        return connector, tasks

    def restart_from_request(self, name: str, include_tasks: bool, only_failed: bool) -> None:
        """Carry out a restart request read from the config topic (marked RESTARTING when it was made)."""
        if name not in self.snapshot.connector_configs:
            return
        connector, tasks = self.restart_plan(name, include_tasks, only_failed, ("FAILED", "RESTARTING"))
        if connector and self.membership.owns_connector(name):
            self.restart_connector(name)
        for task_id in tasks:
            if self.membership.owns_task(task_id):
                self.restart_task(task_id)

    def restart_connector(self, name: str) -> None:
        """Stop the Connector instance and start it again with its stored config."""
        config = self.snapshot.connector_configs.get(name)
        if config is None or self.snapshot.target_state(name) is TargetState.STOPPED:
            return
        self._failed_connectors.pop(name, None)
        self.worker.stop_connector(name, report=False)
        if self.worker.start_connector(name, config):
            self._reconfigure.add(name)
        else:
            self._failed_connectors[name] = config

    def restart_task(self, task_id: ConnectorTaskId) -> None:
        """Stop the task and start it again with its stored config."""
        config = self.snapshot.task_configs.get(task_id)
        if config is None:
            return
        self.worker.stop_tasks([task_id])
        self._assigned.pop(task_id, None)
        self.worker.start_task(task_id, config, self.snapshot.connector_configs[task_id.connector])
        self._assigned[task_id] = config

    # --- reconciliation steps ----------------------------------------------------------------------
    def _stop_removed_connectors(self, snap: ConfigState) -> None:
        for name in list(self.worker.connectors):
            if name not in snap.connector_configs:  # deleted: UNASSIGNED with no version, as Connect writes it
                self.worker.forget_version(name)
                self.worker.stop_connector(name)
            elif snap.target_state(name) is TargetState.STOPPED or not self.membership.owns_connector(name):
                self.worker.stop_connector(name, report=False)
        if not self.membership.leads:
            return
        for name, count in snap.task_counts.items():
            for number in self.status_store.tasks(name):
                if number >= count and ConnectorTaskId(name, number) not in self._assigned:
                    self.status_store.put_task(ConnectorTaskId(name, number), None)

    def _forget_deleted(self, snap: ConfigState) -> None:
        for name in self._known - set(snap.connector_configs) if self.membership.leads else ():
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
            if snap.task_counts.get(name) and self.membership.leads:
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
            self.worker.connector_failed(name, exc)
            self._failed_connectors[name] = snap.connector_configs[name]
            return
        current = [snap.task_configs.get(t) for t in snap.tasks(name)]
        if configs == current:
            return
        log.info("[%s] %s %s task config(s)", name, "Writing" if self.membership.leads else "Sending the leader",
                 len(configs))
        self.membership.publish_task_configs(name, configs, snap)

    def _reconcile_tasks(self, snap: ConfigState) -> None:
        desired = {
            tid: cfg for tid, cfg in snap.task_configs.items()
            if tid.connector in snap.connector_configs and snap.target_state(tid.connector) is not TargetState.STOPPED
            and self.membership.owns_task(tid)
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


def _apply_logger_level(namespace: str, level: str) -> None:
    """A cluster-scope log level read from the config topic."""
    try:
        default_loggers().set_level(namespace, level)
    except ValueError:
        log.warning("Ignoring cluster log level %s for %s: not a level", level, namespace)

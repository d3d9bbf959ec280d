"""The herder: the control plane behind the REST API (Connect's ``DistributedHerder`` and
``StandaloneHerder``).

One thread owns the cluster state. REST handlers submit commands and wait on futures; config-store
changes wake the thread, which then reconciles what runs in the :class:`~connect.worker.Worker` with
the stored configuration. With in-memory stores this is standalone mode; with Kafka stores it is
distributed mode (a single member for now: it always acts as the leader).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any, TypeVar

from connect import group_protocol as gp
from connect import plugins, session_keys, validation
from connect.api.errors import AlreadyExistsError, ConnectError, NotFoundError
from connect.cluster import ClusterView, RequestTargetError
from connect.entities import ConnectorInfo, ConnectorStateInfo, Created, StateInfo, TaskInfo
from connect.errors import BadRequestError, ConflictError
from connect.forwarding import forward_task_configs
from connect.storage.base import ConfigStore, StatusStore
from connect.storage.config_state import ConfigState, ConnectorTaskId, TargetState
from connect.worker import Worker

log = logging.getLogger(__name__)
T = TypeVar("T")
_WAKE = object()


def validation_errors(props: Mapping[str, str], worker_defaults: Mapping[str, str] | None = None) -> list[str]:
    """Every problem of a connector config, checked without contacting external systems: the same report as
    ``PUT /connector-plugins/{p}/config/validate``, each error prefixed with its key when it does not name it."""
    desc = plugins.find(plugins.CONNECTORS, props.get("connector.class", ""))
    assert desc is not None
    report = validation.validate_connector_config(props, desc, worker_defaults=worker_defaults)
    errors: list[str] = []
    for entry in report["configs"]:
        key = entry["value"]["name"]
        errors.extend(e if key in e else f"{key}: {e}" for e in entry["value"]["errors"])
    return list(dict.fromkeys(errors))


class Herder:
    """Single-threaded owner of connector configs, target states and task assignment."""

    def __init__(self, worker: Worker, config_store: ConfigStore, status_store: StatusStore, *,
                 kafka_cluster_id: str | None = None) -> None:
        self.worker = worker
        self.config_store = config_store
        self.status_store = status_store
        self.kafka_cluster_id = kafka_cluster_id
        self.ready = threading.Event()
        self.failure: ConnectError | None = None
        self._queue: queue.Queue[Any] = queue.Queue()
        self._stop = threading.Event()
        self._snapshot = ConfigState()
        self._known: set[str] = set()
        self._failed_connectors: dict[str, dict[str, str]] = {}
        self._reconfigure: set[str] = set()
        self._assigned: dict[ConnectorTaskId, dict[str, str]] = {}
        self.cluster: ClusterView | None = None
        self._sync_timeout = worker.config.worker_sync_timeout_ms / 1000
        self._thread = threading.Thread(target=self._run, name="herder", daemon=True)

    # --- lifecycle ------------------------------------------------------------------------------
    def attach(self, cluster: ClusterView) -> None:
        """Distributed mode: run only what the group assigns to this worker (call before :meth:`start`)."""
        self.cluster = cluster

    def start(self) -> None:
        """Start the herder thread (stores must already be started)."""
        self.config_store.set_listener(lambda: self._queue.put(_WAKE))
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop every connector and task, then the thread; idempotent."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._queue.put(_WAKE)
        self._thread.join(timeout)

    def _safe_reconcile(self) -> None:
        try:
            self._reconcile()
        except Exception:
            log.exception("Reconciling connectors and tasks failed; retrying on the next tick")

    def _run(self) -> None:
        try:
            self._main_loop()
        except ConnectError as exc:
            log.error("%s", exc)
            self.failure = exc
            self.ready.set()
        finally:
            self.worker.stop()
            if self.cluster is not None:
                self.cluster.member.stop()
            log.info("Herder stopped")

    def _main_loop(self) -> None:
        if self.cluster is not None:
            self._join_group()
        self._safe_reconcile()
        self.ready.set()
        log.info("Herder started")
        while not self._stop.is_set():
            if self.cluster is not None:
                self._tick_group()
            try:
                items = [self._queue.get(timeout=0.2 if self.cluster is not None else 1.0)]
            except queue.Empty:
                items = []
            while not self._queue.empty():
                items.append(self._queue.get_nowait())
            for item in items:
                if item is not _WAKE:
                    self._execute(*item)
            if not self._stop.is_set():
                self._safe_reconcile()

    # --- group membership (distributed mode, herder thread) ---------------------------------------
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

    def _execute(self, fn: Callable[[], Any], future: Future[Any]) -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(fn())
        except Exception as exc:  # noqa: BLE001 - handed to the caller through the future
            future.set_exception(exc)

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        """Run ``fn`` on the herder thread."""
        future: Future[T] = Future()
        self._queue.put((fn, future))
        return future

    # --- reads (served from the last snapshot, never forwarded) ----------------------------------
    def connectors(self) -> list[str]:
        """Names of the existing connectors."""
        return self._snapshot.connectors()

    def _config(self, name: str) -> dict[str, str]:
        config = self._snapshot.connector_configs.get(name)
        if config is None:
            raise NotFoundError(f"Connector {name} not found")
        return config

    def connector_info(self, name: str) -> ConnectorInfo:
        """Config, tasks and type of a connector."""
        config = self._config(name)
        return ConnectorInfo(name, dict(config), self._snapshot.tasks(name), self._connector_type(config))

    def connector_config(self, name: str) -> dict[str, str]:
        """The raw stored config."""
        return dict(self._config(name))

    def task_infos(self, name: str) -> list[TaskInfo]:
        """The connector's committed task configs."""
        self._config(name)
        snap = self._snapshot
        return [TaskInfo(tid, dict(snap.task_configs[tid])) for tid in snap.tasks(name)]

    def connector_status(self, name: str) -> ConnectorStateInfo:
        """Connector and task states from the status store."""
        status = self.status_store.connector(name)
        if status is None:
            raise NotFoundError(f"No status found for connector {name}")
        config = self._snapshot.connector_configs.get(name, {})
        version = self._plugin_version(config)
        tasks = [StateInfo(s.state, s.worker_id, s.trace or None, n, version)
                 for n, s in sorted(self.status_store.tasks(name).items())]
        return ConnectorStateInfo(name, StateInfo(status.state, status.worker_id, status.trace or None, None, version),
                                  tasks, self._connector_type(config))

    def task_status(self, name: str, task: int) -> StateInfo:
        """One task's state."""
        status = self.status_store.task(ConnectorTaskId(name, task))
        if status is None:
            raise NotFoundError(f"No status found for task {name}-{task}")
        version = self._plugin_version(self._snapshot.connector_configs.get(name, {}))
        return StateInfo(status.state, status.worker_id, status.trace or None, task, version)

    @staticmethod
    def _plugin_version(config: Mapping[str, str]) -> str | None:
        desc = plugins.find(plugins.CONNECTORS, config.get("connector.class", ""))
        return None if desc is None else desc.version

    @staticmethod
    def _connector_type(config: Mapping[str, str]) -> str:
        desc = plugins.find(plugins.CONNECTORS, config.get("connector.class", ""))
        return "unknown" if desc is None else desc.type

    # --- writes ---------------------------------------------------------------------------------
    def put_connector_config(self, name: str, config: Mapping[str, str], *, allow_replace: bool,
                             initial_state: TargetState | None = None) -> Future[Created]:
        """Create or update a connector after validating its config."""
        props = dict(config)
        self._validate(props)
        return self.submit(lambda: self._put_config(name, props, allow_replace, initial_state))

    def _put_config(self, name: str, props: dict[str, str], allow_replace: bool,
                    initial_state: TargetState | None) -> Created:
        self.require_leader()
        self.config_store.refresh(30)
        exists = name in self.config_store.snapshot().connector_configs
        if exists and not allow_replace:
            raise AlreadyExistsError(f"Connector {name} already exists")
        self.config_store.put_connector_config(name, props, None if exists else initial_state)
        self._snapshot = self.config_store.snapshot()
        self._failed_connectors.pop(name, None)
        info = ConnectorInfo(name, props, [] if not exists else self._snapshot.tasks(name),
                             self._connector_type(props))
        log.info("[%s] Connector config %s", name, "updated" if exists else "created")
        return Created(not exists, info)

    def delete_connector(self, name: str) -> Future[None]:
        """Delete a connector (its offsets stay in the offset store, as in Connect)."""
        def delete() -> None:
            self.require_leader()
            self.config_store.refresh(30)
            if name not in self.config_store.snapshot().connector_configs:
                raise NotFoundError(f"Connector {name} not found")
            self.config_store.remove_connector_config(name)
            log.info("[%s] Connector deleted", name)
        return self.submit(delete)

    def patch_connector_config(self, name: str, patch: Mapping[str, str | None]) -> Future[Created]:
        """Merge ``patch`` into the stored config (a None value removes the key), validate, write."""
        current = self._config(name)
        merged = {k: v for k, v in {**current, **patch}.items() if v is not None}
        merged["name"] = name
        return self.put_connector_config(name, merged, allow_replace=True)

    def _exists(self, name: str, message: str) -> None:
        self.config_store.refresh(30)
        if name not in self.config_store.snapshot().connector_configs:
            raise NotFoundError(message)

    def pause_connector(self, name: str) -> Future[None]:
        """Target state PAUSED: tasks stop polling but keep their resources."""
        return self.submit(lambda: self._set_target(name, TargetState.PAUSED))

    def resume_connector(self, name: str) -> Future[None]:
        """Target state STARTED (from PAUSED or STOPPED)."""
        return self.submit(lambda: self._set_target(name, TargetState.STARTED))

    def stop_connector(self, name: str) -> Future[None]:
        """Target state STOPPED: an empty task set first, then the state (tasks shut down, offsets kept)."""
        def stop() -> None:
            self.require_leader()
            self._exists(name, f"Unknown connector {name}")
            self.config_store.put_task_configs(name, [])
            self.config_store.put_target_state(name, TargetState.STOPPED)
        return self.submit(stop)

    def _set_target(self, name: str, state: TargetState) -> None:
        self._exists(name, f"Unknown connector {name}")
        self.config_store.put_target_state(name, state)

    def restart_connector(self, name: str, include_tasks: bool, only_failed: bool) -> Future[ConnectorStateInfo | None]:
        """KIP-745 restart: None for a plain restart (done now), else the state showing RESTARTING."""
        def restart() -> ConnectorStateInfo | None:
            self._exists(name, f"Unknown connector: {name}")
            if not include_tasks and not only_failed:
                if self._require_owner_or_leader(name):
                    self._restart_instance(name)
                return None
            self.require_leader()
            if self.status_store.connector(name) is None:
                raise NotFoundError(f"Status for connector {name} not found")
            self._mark_restarting(name, include_tasks, only_failed)
            self.config_store.put_restart_request(name, include_tasks, only_failed)
            return self.connector_status(name)
        return self.submit(restart)

    def _restart_plan(self, name: str, include_tasks: bool, only_failed: bool,
                      failed: tuple[str, ...] = ("FAILED",)) -> tuple[bool, list[ConnectorTaskId]]:
        """What a restart request covers: the connector unless only failed ones are asked for, and tasks."""
        status = self.status_store.connector(name)
        connector = not only_failed or (status is not None and status.state in failed)
        tasks = [] if not include_tasks else [
            ConnectorTaskId(name, n) for n, s in sorted(self.status_store.tasks(name).items())
            if not only_failed or s.state in failed
        ]
        return connector, tasks

    def _mark_restarting(self, name: str, include_tasks: bool, only_failed: bool) -> None:
        connector, tasks = self._restart_plan(name, include_tasks, only_failed)
        if connector:
            self.worker.put_connector_state(name, "RESTARTING")
        for task_id in tasks:
            self.worker.put_task_state(task_id, "RESTARTING")

    def _restart_from_request(self, name: str, include_tasks: bool, only_failed: bool) -> None:
        """Carry out a restart request read from the config topic (marked RESTARTING when it was made)."""
        if name not in self._snapshot.connector_configs:
            return
        connector, tasks = self._restart_plan(name, include_tasks, only_failed, ("FAILED", "RESTARTING"))
        if connector and self._owns_connector(name):
            self._restart_instance(name)
        for task_id in tasks:
            if self._owns_task(task_id):
                self._restart_task_now(task_id)

    def _restart_instance(self, name: str) -> None:
        config = self._snapshot.connector_configs.get(name)
        if config is None or self._snapshot.target_state(name) is TargetState.STOPPED:
            return
        self._failed_connectors.pop(name, None)
        self.worker.stop_connector(name, report=False)
        if self.worker.start_connector(name, config):
            self._reconfigure.add(name)
        else:
            self._failed_connectors[name] = config

    def restart_task(self, name: str, task: int) -> Future[None]:
        """Restart one task (stop it, start it again with its config)."""
        def restart() -> None:
            self._exists(name, f"Unknown connector: {name}")
            task_id = ConnectorTaskId(name, task)
            if task_id not in self._snapshot.task_configs:
                raise NotFoundError(f"Unknown task: {task_id}")
            if self._require_owner_or_leader(task_id):
                self._restart_task_now(task_id)
        return self.submit(restart)

    def _restart_task_now(self, task_id: ConnectorTaskId) -> None:
        config = self._snapshot.task_configs.get(task_id)
        if config is None:
            return
        self.worker.stop_tasks([task_id])
        self._assigned.pop(task_id, None)
        self.worker.start_task(task_id, config, self._snapshot.connector_configs[task_id.connector])
        self._assigned[task_id] = config

    def publish_logger_level(self, namespace: str, level: str) -> Future[None]:
        """Cluster-scope log level: written to the config topic, applied by every worker that reads it."""
        return self.submit(lambda: self.config_store.put_logger_level(namespace, level))

    @staticmethod
    def _apply_logger_level(namespace: str, level: str) -> None:
        from connect.loggers import default_loggers

        try:
            default_loggers().set_level(namespace, level)
        except ValueError:
            log.warning("Ignoring cluster log level %s for %s: not a level", level, namespace)

    def health(self, timeout: float = 10.0) -> str:
        """``healthy``, ``starting`` or ``unhealthy``, as KIP-1017 checks it: a no-op through the herder."""
        if not self.ready.is_set():
            return "starting"
        try:
            self.submit(lambda: None).result(timeout)
        except Exception:  # noqa: BLE001 - any failure or timeout means unhealthy
            return "unhealthy"
        return "healthy"

    def request_task_reconfiguration(self, name: str) -> None:
        """Called by a connector (any thread): recompute its task configs."""
        self.submit(lambda: self._reconfigure.add(name))

    def _validate(self, props: Mapping[str, str]) -> None:
        connector_class = props.get("connector.class")
        if not connector_class:
            raise BadRequestError(f"Connector config {validation.java_map(props)} contains no connector type")
        if plugins.find(plugins.CONNECTORS, connector_class) is None:
            raise BadRequestError(plugins.connector_not_found(connector_class))
        errors = validation_errors(self.worker.transformer.transform(props), self.worker.config.validation_defaults())
        if errors:
            raise BadRequestError(
                f"Connector configuration is invalid and contains the following {len(errors)} error(s):\n"
                + "\n".join(errors)
                + "\nYou can also find the above list of errors at the endpoint "
                  "`/connector-plugins/{connectorType}/config/validate`"
            )

    # --- reconciliation (herder thread only) -----------------------------------------------------
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

    def put_task_configs(self, name: str, configs: list[dict[str, str]]) -> Future[None]:
        """The internal ``POST /connectors/{c}/tasks``: a connector's owner hands its task configs to the leader."""
        def put() -> None:
            self.require_leader()
            self._exists(name, f"Connector {name} not found")
            if configs and self._snapshot.target_state(name) is TargetState.STOPPED:
                raise BadRequestError("Cannot submit non-empty set of task configs for stopped connector")
            current = [self._snapshot.task_configs.get(t) for t in self._snapshot.tasks(name)]
            if configs != current:
                log.info("[%s] Writing %s task config(s) from the connector's worker", name, len(configs))
                self.config_store.put_task_configs(name, configs)
        return self.submit(put)

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


__all__ = ["ConnectError", "Herder", "validation_errors"]

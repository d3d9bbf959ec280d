"""The herder: the control plane behind the REST API (Connect's ``DistributedHerder`` and
``StandaloneHerder``).

One thread owns the cluster state. REST handlers submit commands and wait on futures; config-store
changes wake the thread, which then reconciles what runs in the :class:`~connect.runtime.worker.Worker` with
the stored configuration. With in-memory stores this is standalone mode; with Kafka stores it is
distributed mode, where the group assigns this worker its share (:mod:`connect.distributed.coordinator`).
"""

from __future__ import annotations

import dataclasses
import logging
import queue
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any, TypeVar

from connect.api.errors import AlreadyExistsError, ConnectError, NotFoundError
from connect.javalang import hash_map_to_string
from connect.runtime import plugins, validation
from connect.runtime.entities import ConnectorInfo, ConnectorStateInfo, Created, StateInfo, TaskInfo
from connect.runtime.membership import Membership, StandaloneMembership
from connect.runtime.reconciler import Reconciler
from connect.runtime.rest_errors import BadRequestError
from connect.runtime.worker import Worker
from connect.storage.base import ConfigStore, StatusStore
from connect.storage.config_state import ConfigState, ConnectorTaskId, TargetState

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
    """Single-threaded owner of connector configs, target states and task assignment.

    Composed of a :class:`Reconciler` (what runs in the worker) and a :class:`Membership` (who runs what and
    who may write): standalone and distributed mode differ only by the membership plugged in."""

    def __init__(self, worker: Worker, config_store: ConfigStore, status_store: StatusStore, *,
                 membership: Membership | None = None, kafka_cluster_id: str | None = None,
                 ready: threading.Event | None = None, stop: threading.Event | None = None) -> None:
        """``ready`` (set once started) and ``stop`` (set by :meth:`stop`) may be shared with the membership."""
        self.worker = worker
        self.config_store = config_store
        self.status_store = status_store
        self.kafka_cluster_id = kafka_cluster_id
        self.membership: Membership = membership or StandaloneMembership(config_store)
        self.reconciler = Reconciler(worker, config_store, status_store, self.membership)
        self.ready = ready or threading.Event()
        self.failure: ConnectError | None = None
        self._queue: queue.Queue[Any] = queue.Queue()
        self._stop = stop or threading.Event()
        self._deferred: list[tuple[Callable[[], Any], Future[Any]]] = []
        self._thread = threading.Thread(target=self._run, name="herder", daemon=True)
        self.fence_zombies: Callable[[str], None] | None = None
        """Performs zombie fencing as the leader (``PUT /connectors/{c}/fence``); set on distributed workers."""

    @property
    def _snapshot(self) -> ConfigState:
        return self.reconciler.snapshot

    # --- lifecycle ------------------------------------------------------------------------------
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
            self.reconciler.reconcile()
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
            self.membership.stop()
            log.info("Herder stopped")

    def _main_loop(self) -> None:
        membership = self.membership
        membership.join(self._stop, self.reconciler)
        self._safe_reconcile()
        self.ready.set()
        log.info("Herder started")
        while not self._stop.is_set():
            generation = membership.generation()
            membership.tick(self.reconciler)
            # a rebalance that just completed is acted on at once, as Connect starts a new assignment in the same
            # tick: waiting for requests first held every connector and task start back by a poll timeout
            rebalanced = membership.generation() != generation
            try:
                items = [self._queue.get_nowait() if rebalanced else self._queue.get(timeout=membership.poll_timeout)]
            except queue.Empty:
                items = []
            while not self._queue.empty():
                items.append(self._queue.get_nowait())
            self._deferred.extend(item for item in items if item is not _WAKE)
            if not membership.rebalancing:
                # during a rebalance requests wait, as in Connect's tick; they are answered once it completes
                deferred, self._deferred = self._deferred, []
                for item in deferred:
                    self._execute(*item)
            if not self._stop.is_set():
                self._safe_reconcile()
        for _fn, future in self._deferred:
            future.cancel()

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

    def require_leader(self) -> None:
        """Raise Connect's forward-or-409 error unless this worker may write connector configs now."""
        self.membership.require_leader()

    def verify_internal_request(self, body: bytes, headers: Mapping[str, str]) -> None:
        """Raise unless a worker-to-worker request is allowed (Connect's 400/403/503 under ``sessioned``)."""
        self.membership.verify_internal_request(body, headers)

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
        snapshot = self.reconciler.refresh_snapshot()
        self.reconciler.forget_failure(name)
        info = ConnectorInfo(name, props, [] if not exists else snapshot.tasks(name),
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
            # reads are served from the herder's snapshot: taken again now, as after a put (Connect's herder applies
            # the config topic's updates before the next request), so a GET after the DELETE no longer lists it
            self.reconciler.refresh_snapshot()
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
                if self.membership.require_owner_or_leader(name):
                    self.reconciler.restart_connector(name)
                return None
            self.require_leader()
            if self.status_store.connector(name) is None:
                raise NotFoundError(f"Status for connector {name} not found")
            before = self.connector_status(name)
            connector, tasks = self.reconciler.restart_plan(name, include_tasks, only_failed)
            if connector:
                self.worker.put_connector_state(name, "RESTARTING")
            for task_id in tasks:
                self.worker.put_task_state(task_id, "RESTARTING")
            self.config_store.put_restart_request(name, include_tasks, only_failed)
            return _restart_state(before, connector, {t.task for t in tasks})
        return self.submit(restart)

    def restart_task(self, name: str, task: int) -> Future[None]:
        """Restart one task (stop it, start it again with its config)."""
        def restart() -> None:
            self._exists(name, f"Unknown connector: {name}")
            task_id = ConnectorTaskId(name, task)
            if task_id not in self._snapshot.task_configs:
                raise NotFoundError(f"Unknown task: {task_id}")
            if self.membership.require_owner_or_leader(task_id):
                self.reconciler.restart_task(task_id)
        return self.submit(restart)

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

    def publish_logger_level(self, namespace: str, level: str) -> Future[None]:
        """Cluster-scope log level: written to the config topic, applied by every worker that reads it."""
        return self.submit(lambda: self.config_store.put_logger_level(namespace, level))

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
        self.submit(lambda: self.reconciler.request_reconfiguration(name))

    def _validate(self, props: Mapping[str, str]) -> None:
        connector_class = props.get("connector.class")
        if not connector_class:
            raise BadRequestError(f"Connector config {hash_map_to_string(props)} contains no connector type")
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



__all__ = ["ConnectError", "Herder", "validation_errors"]


def _restart_state(before: ConnectorStateInfo, connector: bool, tasks: set[int]) -> ConnectorStateInfo:
    """The answer to a KIP-745 restart, from its plan (as Connect's RestartPlan builds it): the states
    it restarts show RESTARTING, the others as they were; never read back from the status store, where
    a connector that just finished starting may already have written RUNNING over the mark."""
    def mark(info: StateInfo, restarting: bool) -> StateInfo:
        return dataclasses.replace(info, state="RESTARTING") if restarting else info
    return dataclasses.replace(before, connector=mark(before.connector, connector),
                               tasks=[mark(t, t.id in tasks) for t in before.tasks])

"""Who runs what, and who may write: the herder's one collaborator that differs between standalone and
distributed mode (Connect's ``StandaloneHerder`` and ``DistributedHerder`` differ mostly here).

Standalone, this worker is the whole cluster: it runs everything and leads. Distributed, the group decides
(:class:`connect.distributed.coordinator.GroupCoordinator`). The herder thread is the only caller.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Protocol

from connect.storage.base import ConfigStore
from connect.storage.config_state import ConfigState, ConnectorTaskId


class RebalanceListener(Protocol):
    """What the membership asks of the herder's reconciler when work is taken away (Connect's
    ``WorkerRebalanceListener.onRevoked``)."""

    def revoke_all(self) -> None:
        """Stop every connector and task of this worker (eager protocol, before a rejoin)."""

    def stop_unowned(self) -> None:
        """Stop what this worker no longer owns (incremental cooperative revocation)."""


class Membership(Protocol):
    """This worker's place in its cluster, as the herder thread sees it."""

    @property
    def poll_timeout(self) -> float:
        """How long the herder thread waits for a request between two ticks, in seconds."""

    @property
    def rebalancing(self) -> bool:
        """True while the group rebalances: requests wait until it completes, as in Connect's tick."""

    @property
    def leads(self) -> bool:
        """True when this worker writes connector configs and cleans up statuses."""

    def join(self, stop: threading.Event, listener: RebalanceListener) -> None:
        """Block until this worker has work assigned (or ``stop`` is set)."""

    def tick(self, listener: RebalanceListener) -> None:
        """One round of membership duties (heartbeats, assignments); bounded in time."""

    def owns_connector(self, name: str) -> bool:
        """True when this worker runs the Connector instance ``name``."""

    def owns_task(self, task_id: ConnectorTaskId) -> bool:
        """True when this worker runs the task."""

    def require_leader(self) -> None:
        """Raise Connect's forward-or-409 error unless this worker may write connector configs now."""

    def require_owner_or_leader(self, item: str | ConnectorTaskId) -> bool:
        """True when this worker runs ``item``; else raise an error naming the worker to ask."""

    def publish_task_configs(self, name: str, configs: list[dict[str, str]], snapshot: ConfigState) -> None:
        """Store a connector's new task configs: written by the leader, sent to it by any other worker."""

    def after_reconcile(self, snapshot: ConfigState) -> None:
        """Membership upkeep once the worker matches ``snapshot`` (rebalance on new work, session keys)."""

    def verify_internal_request(self, body: bytes, headers: Mapping[str, str]) -> None:
        """Raise unless a worker-to-worker request is allowed (signed, under ``sessioned``)."""

    def generation(self) -> int:
        """The group generation status records carry (0 in standalone mode)."""

    def stop(self) -> None:
        """Leave the cluster; idempotent."""


class StandaloneMembership:
    """A cluster of one: this worker runs every connector and task and writes every config."""

    poll_timeout = 1.0
    rebalancing = False
    leads = True

    def __init__(self, config_store: ConfigStore) -> None:
        self._config_store = config_store

    def join(self, stop: threading.Event, listener: RebalanceListener) -> None:
        """Nothing to join."""

    def tick(self, listener: RebalanceListener) -> None:
        """Nothing to do between requests."""

    def owns_connector(self, name: str) -> bool:
        return True

    def owns_task(self, task_id: ConnectorTaskId) -> bool:
        return True

    def require_leader(self) -> None:
        """Always the leader."""

    def require_owner_or_leader(self, item: str | ConnectorTaskId) -> bool:
        return True

    def publish_task_configs(self, name: str, configs: list[dict[str, str]], snapshot: ConfigState) -> None:
        self._config_store.put_task_configs(name, configs)

    def after_reconcile(self, snapshot: ConfigState) -> None:
        """No group to rebalance, no session key."""

    def verify_internal_request(self, body: bytes, headers: Mapping[str, str]) -> None:
        """Standalone workers serve no internal requests from peers; nothing to verify."""

    def generation(self) -> int:
        return 0

    def stop(self) -> None:
        """Nothing to leave."""

"""The worker's membership of its Connect group (Connect's ``WorkerGroupMember`` and ``WorkerCoordinator``).

This is the kafka-python seam of the group protocol: a coordinator of protocol type ``connect`` whose
metadata and assignments are Connect's (:mod:`connect.distributed.protocol`). The herder thread drives it with
:meth:`WorkerGroupMember.poll`; kafka-python's own thread sends heartbeats between polls. Callbacks run
while the herder thread waits inside :meth:`poll`, so they may touch the herder's state.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from kafka.coordinator.base import BaseCoordinator
from kafka.metrics import MetricConfig, Metrics
from kafka.net.compat import KafkaNetClient

from connect import clients
from connect.api.errors import ConnectError
from connect.distributed import protocol as gp

log = logging.getLogger(__name__)

Assignor = Callable[[str, str, Mapping[str, gp.WorkerMetadata]], dict[str, gp.Assignment]]
Protocols = Callable[[], list[tuple[str, gp.WorkerMetadata]]]


class _WorkerCoordinator(BaseCoordinator):  # type: ignore[misc]
    def __init__(self, client: Any, member: WorkerGroupMember, **configs: Any) -> None:
        super().__init__(client, **configs)
        self._member = member

    def protocol_type(self) -> str:
        return gp.PROTOCOL_TYPE

    def group_protocols(self) -> list[tuple[str, bytes]]:
        return [(name, gp.encode_metadata(metadata)) for name, metadata in self._member.protocols()]

    def _perform_assignment(self, leader_id: str, protocol: str, members: list[Any]) -> dict[str, bytes]:
        decoded = {m.member_id: gp.decode_metadata(bytes(m.metadata)) for m in members}
        assignments = self._member.assignor(protocol, leader_id, decoded)
        return {member: gp.encode_assignment(a) for member, a in assignments.items()}

    async def _on_join_prepare_async(self, generation: int, member_id: str, timeout_ms: Any = None) -> None:
        if generation < 0 and self._member.joined:  # the group dropped this member (its generation was reset)
            self._member.on_lost()

    async def _on_join_complete_async(self, generation: int, member_id: str, protocol: str, data: bytes) -> None:
        assignment = gp.decode_assignment(bytes(data))
        self._member.joined = True
        self._member.on_assigned(generation, member_id, protocol, assignment)


class WorkerGroupMember:
    """Joins the group, keeps the membership alive and hands assignments to the herder."""

    def __init__(self, settings: Mapping[str, Any], *, group_id: str, client_id: str,
                 protocols: Protocols, assignor: Assignor,
                 on_assigned: Callable[[int, str, str, gp.Assignment], None], on_lost: Callable[[], None],
                 session_timeout_ms: int, heartbeat_interval_ms: int, rebalance_timeout_ms: int) -> None:
        """``on_lost``: called before the member rejoins after the group dropped it (its member id or generation
        no longer known), before the metadata of that join is asked for."""
        self.protocols = protocols
        self.assignor = assignor
        self.on_assigned = on_assigned
        self.on_lost = on_lost
        self.joined = False  # a join completed once: a later join from no generation means the member was dropped
        self.client_id = client_id
        # the client's and the coordinator's sensors, as Java's connect-metrics and connect-coordinator-metrics
        self.metrics = Metrics(MetricConfig(tags={"client-id": client_id}))
        self._client = KafkaNetClient(**_client_configs(settings), client_id=client_id, metrics=self.metrics,
                                      metric_group_prefix="connect")
        try:
            version = self._client.check_version(timeout_ms=30_000)
        except Exception as exc:
            self._client.close()
            raise ConnectError(f"Cannot reach Kafka at {settings.get('bootstrap.servers')}: {exc}") from exc
        self._coordinator = _WorkerCoordinator(
            self._client, self, group_id=group_id, session_timeout_ms=session_timeout_ms,
            heartbeat_interval_ms=heartbeat_interval_ms, max_poll_interval_ms=rebalance_timeout_ms,
            api_version=version, metrics=self.metrics, metric_group_prefix="connect")
        self._closed = False

    def poll(self, timeout_s: float) -> bool:
        """Join or rejoin when needed and keep the heartbeat going; True when the member is in a stable group."""
        coordinator = self._coordinator
        joined = bool(coordinator.ensure_active_group(timeout_ms=int(timeout_s * 1000)))
        coordinator.poll_heartbeat()
        return joined and not coordinator.need_rejoin()

    def request_rejoin(self) -> None:
        """Ask for a rebalance (the config changed)."""
        self._coordinator.request_rejoin()

    @property
    def rebalancing(self) -> bool:
        """True while a join is needed or under way."""
        return bool(self._coordinator.need_rejoin() or self._coordinator.rebalance_in_progress())

    @property
    def coordinator_unknown(self) -> bool:
        """True while the member knows no reachable group coordinator: none is known, or (in a stable group) no
        heartbeat has been answered for ``session.timeout.ms``, after which the coordinator has dropped it."""
        coordinator = self._coordinator
        return bool(coordinator.coordinator_unknown()
                    or (coordinator.stable() and coordinator.heartbeat.session_timeout_expired()))

    @property
    def generation(self) -> int:
        """The current generation id (-1 before the first join)."""
        return int(self._coordinator._generation.generation_id)

    def client_metrics(self) -> list[tuple[str, str, dict[str, str], float]]:
        """The member's Java-named metrics: (group, name, tags, value)."""
        return [(key.group, key.name, dict(key.tags), float(metric.value()))
                for key, metric in self.metrics.metrics.copy().items()]

    def stop(self, timeout: float = 10.0) -> None:
        """Leave the group and close the client; idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self._coordinator.close(timeout_ms=int(timeout * 1000))
        except Exception:
            log.warning("Leaving the group failed", exc_info=True)
        finally:
            self._client.close()


def _client_configs(settings: Mapping[str, Any]) -> dict[str, Any]:
    from kafka.net.manager import KafkaConnectionManager

    kwargs = clients.client_kwargs(settings, KafkaConnectionManager.DEFAULT_CONFIG)
    kwargs.pop("client_id", None)
    return kwargs

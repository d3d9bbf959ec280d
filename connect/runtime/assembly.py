"""Assembles a worker process: stores, worker, herder and REST server (Connect's ``ConnectDistributed``
and ``ConnectStandalone``)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from connect import clients
from connect.config.providers import ConfigTransformer
from connect.distributed import forwarding
from connect.distributed.cluster import join_group
from connect.distributed.coordinator import GroupCoordinator
from connect.distributed.zombie_fencing import ZombieFencing
from connect.runtime import exactly_once
from connect.runtime.herder import Herder
from connect.runtime.membership import Membership
from connect.runtime.rdkafka_producer import RdKafkaProducer
from connect.runtime.worker import Worker
from connect.runtime.worker_config import WorkerConfig, prefixed
from connect.storage.base import ConfigStore, OffsetStore, StatusStore
from connect.storage.file import FileOffsetStore
from connect.storage.kafka import KafkaConfigStore, KafkaOffsetStore, KafkaStatusStore, create_internal_topics
from connect.storage.kafka_log import TopicSpec
from connect.storage.memory import MemoryConfigStore, MemoryStatusStore

log = logging.getLogger(__name__)


@dataclass
class Runtime:
    """Everything one worker process runs, started and stopped in the right order."""

    config: WorkerConfig
    props: dict[str, str]
    config_store: ConfigStore
    offset_store: OffsetStore
    status_store: StatusStore
    kafka_cluster_id: str | None = None
    group_settings: dict[str, Any] | None = None
    offset_store_factory: Callable[[str], OffsetStore] | None = None
    """Opens a connector's own offsets topic (``offsets.storage.topic``; distributed only)."""
    herder: Herder = field(init=False)

    def start(self) -> Herder:
        """Start stores, then the herder; returns the herder."""
        self.offset_store.start()
        self.status_store.start()
        self.config_store.start()
        worker = Worker(self.config, self.props, self.offset_store, self.status_store,
                        on_reconfigure=lambda name: self.herder.request_task_reconfiguration(name),
                        offset_store_factory=self.offset_store_factory)
        ready, stop = threading.Event(), threading.Event()
        membership: Membership | None = None
        if self.group_settings is not None:
            cluster = join_group(self.config, self.group_settings, self.config_store, ready)
            membership = GroupCoordinator(cluster, self.config, self.config_store, ready, stop,
                                          worker.worker_metrics.distributed())
        self.herder = Herder(worker, self.config_store, self.status_store, membership=membership,
                             kafka_cluster_id=self.kafka_cluster_id, ready=ready, stop=stop)
        worker.set_generation(self.herder.membership.generation)
        if membership is not None:
            fencing = ZombieFencing(self.herder)
            self.herder.fence_zombies = fencing.fence
            worker.fence_zombies = fencing.fence_or_forward
            worker.task_generation = fencing.generation
            worker.verify_task = fencing.verify
        self.herder.start()
        return self.herder

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the herder (and with it every task), then the stores; idempotent."""
        if hasattr(self, "herder"):
            self.herder.stop(timeout)
        self.config_store.stop()
        self.status_store.stop()
        self.offset_store.stop()


def _client_settings(config: WorkerConfig, props: Mapping[str, str]) -> dict[str, Any]:
    """The worker's own Kafka client settings (internal topics, group membership, admin): the top-level
    ``security.*``, ``sasl.*`` and ``ssl.*`` keys, as Connect passes its originals. Top-level ``ssl.*`` keys also
    configure an ``https`` REST listener: with a protocol without TLS they are the listener's, not Kafka's."""
    protocol = props.get("security.protocol", "PLAINTEXT").strip().upper()
    rest_only_ssl = config.listener_scheme() == "https" and protocol in ("PLAINTEXT", "SASL_PLAINTEXT")
    settings: dict[str, Any] = {k: v for k, v in props.items()
                                if (k.startswith(("security.", "sasl.")) or k == "client.dns.lookup"
                                    or (k.startswith("ssl.") and not rest_only_ssl))}
    settings["bootstrap.servers"] = config.bootstrap_servers
    return settings


def _resolved(props: Mapping[str, str]) -> dict[str, str]:
    """Worker properties with their ``${file:...}``/``${env:...}``/``${dir:...}`` placeholders resolved by the
    worker's ``config.providers``, as Connect resolves its worker config at start-up."""
    return ConfigTransformer(props).transform(props)


def kafka_cluster_id(settings: Mapping[str, Any], timeout: float = 60.0) -> str | None:
    """The Kafka cluster id, as ``GET /`` reports it; a refused login or certificate fails here, in one line, and
    a cluster not reached within ``timeout`` seconds."""
    admin = clients.connected_admin(settings, timeout)
    try:
        described = admin.describe_cluster()
    finally:
        admin.close()
    return described.get("cluster_id") if isinstance(described, dict) else None


def distributed(props: Mapping[str, str]) -> Runtime:
    """A distributed-mode runtime: config, offsets and statuses in Kafka topics."""
    config, raw = WorkerConfig.parse(_resolved(props), distributed=True)
    settings = _client_settings(config, raw)
    assert config.config_storage_topic and config.offset_storage_topic and config.status_storage_topic
    cluster_id = kafka_cluster_id(settings, config.default_api_timeout_ms / 1000)
    forwarding.use_tls(raw)  # worker-to-worker requests over https trust the REST listener's truststore
    create_internal_topics({**settings, **prefixed(raw, "admin.")}, [
        TopicSpec(config.config_storage_topic, 1, config.config_storage_replication_factor,
                  _topic_settings(raw, "config.storage.")),
        TopicSpec(config.offset_storage_topic, config.offset_storage_partitions,
                  config.offset_storage_replication_factor, _topic_settings(raw, "offset.storage.")),
        TopicSpec(config.status_storage_topic, config.status_storage_partitions,
                  config.status_storage_replication_factor, _topic_settings(raw, "status.storage.")),
    ])
    client_id = f"{config.group_id}-"
    # exactly-once tasks commit offsets in transactions: the worker reads only committed ones (Connect's
    # KafkaOffsetBackingStore and KafkaConfigBackingStore under exactly.once.source.support=enabled)
    offsets_reader = {"isolation.level": "read_committed"} if config.exactly_once_source_enabled() else {}
    offset_topic = TopicSpec("", config.offset_storage_partitions, config.offset_storage_replication_factor,
                             _topic_settings(raw, "offset.storage."))

    def connector_offsets(topic: str) -> OffsetStore:
        """A connector's own offsets topic, created like the worker's when missing (Connect's)."""
        create_internal_topics({**settings, **prefixed(raw, "admin.")}, [replace(offset_topic, name=topic)])
        return KafkaOffsetStore(topic, {**settings, "client.id": f"{client_id}offsets-{topic}", **offsets_reader})

    # under preparing and enabled the leader writes to the config topic with a fencable transactional producer
    # (Connect's transactionalLeaderEnabled); only under enabled do readers skip what was not committed
    leader_writer = None
    if config.exactly_once_source_support != exactly_once.DISABLED:
        assert config.group_id is not None
        leader = exactly_once.leader_producer_settings(settings, config.group_id, f"{client_id}configs-leader")
        leader_writer = partial(RdKafkaProducer, leader)
    return Runtime(
        config, raw,
        KafkaConfigStore(config.config_storage_topic,
                         {**settings, "client.id": client_id + "configs", **offsets_reader}, leader_writer),
        KafkaOffsetStore(config.offset_storage_topic,
                         {**settings, "client.id": client_id + "offsets", **offsets_reader}),
        KafkaStatusStore(config.status_storage_topic, {**settings, "client.id": client_id + "statuses"}),
        cluster_id,
        settings,
        connector_offsets,
    )


def _topic_settings(props: Mapping[str, str], prefix: str) -> dict[str, str]:
    skip = {"topic", "partitions", "replication.factor"}
    return {k: v for k, v in prefixed(props, prefix).items() if k not in skip and not k.startswith("file.")}


def standalone(props: Mapping[str, str]) -> Runtime:
    """A standalone runtime: configs and statuses in memory, offsets in a file."""
    config, raw = WorkerConfig.parse(_resolved(props), distributed=False)
    assert config.offset_storage_file_filename
    settings = _client_settings(config, raw)
    return Runtime(config, raw, MemoryConfigStore(), FileOffsetStore(config.offset_storage_file_filename),
                   MemoryStatusStore(), kafka_cluster_id(settings, config.default_api_timeout_ms / 1000))


class Startup:
    """Starts a runtime in the background while the REST API already answers (``/health`` says
    ``starting``, other requests wait for the worker, as Connect's do)."""

    def __init__(self, runtime: Runtime, on_started: Any = None, on_failed: Any = None) -> None:
        self.runtime = runtime
        self.ready = threading.Event()
        self.done = threading.Event()
        """Set once the start has succeeded or failed (``failed`` says which)."""
        self.failed: BaseException | None = None
        self._on_started = on_started
        self._on_failed = on_failed
        self._thread = threading.Thread(target=self._run, name="startup", daemon=True)

    def begin(self) -> None:
        """Start in the background."""
        self._thread.start()

    def _run(self) -> None:
        try:
            herder = self.runtime.start()
            if not herder.ready.wait(300):
                raise TimeoutError("the herder did not become ready within 300 s")
            if herder.failure is not None:
                raise herder.failure
            if self._on_started is not None:
                self._on_started(herder)
        except Exception as exc:
            log.error("Worker failed to start: %s", exc, exc_info=exc)
            self.failed = exc
            self.done.set()
            if self._on_failed is not None:
                self._on_failed()
            return
        log.info("Worker %s started", self.runtime.config.worker_id())
        self.ready.set()
        self.done.set()


def lifespan(startup: Startup) -> Any:
    """A FastAPI lifespan that starts the runtime in the background and stops it after serving."""
    @asynccontextmanager
    async def manage(_app: Any) -> Any:
        import asyncio

        startup.begin()
        try:
            yield
        finally:
            await asyncio.to_thread(startup.runtime.stop)
            log.info("Worker stopped")
    return manage

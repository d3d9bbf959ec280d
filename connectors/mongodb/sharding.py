"""``mongodb.connection.mode=replica_set``: one change stream per shard replica set, split over tasks.

The connector finds the shards with ``listShards`` (through mongos) or, when that command does not exist, in
``config.shards`` (connected to the config servers); each shard's ``host`` is ``<replicaSet>/<host:port>,...``.
The shards are grouped contiguously over ``min(tasks.max, #shards)`` tasks (Kafka's ``groupPartitions``), and a
task gets its replica sets' connection strings in ``mongodb.internal.task.replica.sets``. A monitor thread
re-reads the topology every ``mongodb.poll.interval.ms`` and asks the framework for a task reconfiguration when
a shard is added or removed. Against a plain replica set (no shards) there is one task for the replica set.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode

from pymongo.errors import OperationFailure, PyMongoError

log = logging.getLogger(__name__)

TASK_REPLICA_SETS = "mongodb.internal.task.replica.sets"
_DROPPED_OPTIONS = {"replicaset", "directconnection"}


@dataclass(frozen=True, order=True)
class Shard:
    """One shard: its id and its ``<replicaSet>/<hosts>`` string."""

    id: str
    host: str

    def connection_string(self, base_uri: str) -> str:
        """A connection string for this shard's replica set, with the credentials and options of ``base_uri``."""
        replica_set, _, hosts = self.host.partition("/")
        if not hosts:
            replica_set, hosts = "", self.host
        scheme_rest = base_uri.split("://", 1)[1]
        authority, _, query = scheme_rest.partition("?")
        authority = authority.split("/", 1)[0]
        userinfo = authority.rsplit("@", 1)[0] + "@" if "@" in authority else ""
        options = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k.lower() not in _DROPPED_OPTIONS]
        if replica_set:
            options.append(("replicaSet", replica_set))
        return f"mongodb://{userinfo}{hosts}/" + (f"?{urlencode(options)}" if options else "")


def discover_shards(client: Any) -> list[Shard]:
    """The cluster's shards (empty for a plain replica set), sorted by id."""
    try:
        reply = client.admin.command("listShards")
        documents = reply.get("shards", [])
    except OperationFailure:
        documents = list(client["config"]["shards"].find({}, {"_id": 1, "host": 1}))
    return sorted(Shard(str(doc["_id"]), str(doc["host"])) for doc in documents if doc.get("host"))


def group(items: Sequence[Any], max_groups: int) -> list[list[Any]]:
    """Contiguous groups of ``items`` over ``min(max_groups, len(items))`` groups (Kafka's groupPartitions)."""
    count = min(max_groups, len(items))
    if count <= 0:
        return []
    per_group, leftover = divmod(len(items), count)
    groups, start = [], 0
    for index in range(count):
        size = per_group + (1 if index < leftover else 0)
        groups.append(list(items[start:start + size]))
        start += size
    return groups


def task_configs(props: Mapping[str, str], shards: Sequence[Shard], max_tasks: int) -> list[dict[str, str]]:
    """One task config per group of shards."""
    base = props["mongodb.connection.string"]
    configs = []
    for shard_group in group(shards, max_tasks):
        assigned = [{"rs": s.id, "connection_string": s.connection_string(base)} for s in shard_group]
        configs.append({**props, TASK_REPLICA_SETS: json.dumps(assigned)})
    return configs


def assigned_replica_sets(props: Mapping[str, str], connection_string: str) -> list[tuple[str | None, str]]:
    """``(replica set id, connection string)`` pairs of a task; ``[(None, <connection string>)]`` by default."""
    raw = props.get(TASK_REPLICA_SETS)
    if not raw:
        return [(None, connection_string)]
    return [(str(item["rs"]), str(item["connection_string"])) for item in json.loads(raw)]


class TopologyMonitor:
    """Re-reads the shards every ``interval`` seconds; calls ``changed`` when the set differs."""

    def __init__(self, read: Callable[[], list[Shard]], known: list[Shard], interval: float,
                 changed: Callable[[], None], name: str) -> None:
        self._read = read
        self.known = list(known)
        self._interval = interval
        self._changed = changed
        self._name = name
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"{name}-topology", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                current = self._read()
            except PyMongoError as exc:
                log.warning("[%s] Cannot read the shard topology: %s", self._name, exc)
                continue
            if current != self.known:
                log.info("[%s] Shards changed from %s to %s; requesting a task reconfiguration", self._name,
                         [s.id for s in self.known], [s.id for s in current])
                self.known = current
                self._changed()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop watching; idempotent."""
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)

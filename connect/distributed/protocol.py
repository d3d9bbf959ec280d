"""Kafka Connect's group protocol: member metadata, assignments and the eager assignor.

Workers join a Kafka group with protocol type ``connect``. Each offers its REST URL and the config-topic
offset it has read (``default`` subprotocol, version 0); the leader answers every member with the
connectors and tasks it runs. The byte layouts are Connect's ``ConnectProtocol`` v0 (Kafka protocol
primitives: big-endian integers, int16-length strings, int32-count arrays), so Java workers and ours
can read each other's metadata. Our workers append the name of their config topic to both (Java's readers
ignore trailing bytes), so a worker configured with another group's topics is refused with a clear message.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import cycle

from connect.api.errors import ConnectError
from connect.storage.config_state import ConfigState, ConnectorTaskId

PROTOCOL_TYPE = "connect"
EAGER = "default"
COMPATIBLE = "compatible"
SESSIONED = "sessioned"
VERSIONS = {EAGER: 0, COMPATIBLE: 1, SESSIONED: 2}
CONNECTOR_TASK = -1  # the task id that stands for the Connector instance itself
NO_ERROR = 0
CONFIG_MISMATCH = 1


@dataclass(frozen=True)
class WorkerMetadata:
    """What a member tells the leader: where its REST API is and how far it read the config topic."""

    url: str
    config_offset: int
    config_topic: str | None = None
    version: int = 0
    allocation: Assignment | None = None  # v1: what the member runs now


@dataclass(frozen=True)
class Assignment:
    """What the leader tells a member (Connect's ``ConnectProtocol.Assignment``)."""

    error: int
    leader: str
    leader_url: str
    config_offset: int
    connectors: tuple[str, ...] = ()
    tasks: tuple[ConnectorTaskId, ...] = field(default_factory=tuple)
    config_topic: str | None = None
    version: int = 0
    revoked_connectors: tuple[str, ...] = ()
    revoked_tasks: tuple[ConnectorTaskId, ...] = ()
    delay_ms: int = 0

    @property
    def failed(self) -> bool:
        """True when the leader could not assign (its config was behind a member's)."""
        return self.error != NO_ERROR


class _Reader:
    def __init__(self, data: bytes) -> None:
        self._data = memoryview(data)
        self._pos = 0

    @property
    def remaining(self) -> int:
        return len(self._data) - self._pos

    def _take(self, fmt: str) -> int:
        (value,) = struct.unpack_from(fmt, self._data, self._pos)
        self._pos += struct.calcsize(fmt)
        return int(value)

    def take(self, size: int) -> bytes:
        if self._pos + size > len(self._data):
            raise struct.error("not enough bytes")
        value = bytes(self._data[self._pos:self._pos + size])
        self._pos += size
        return value

    def int16(self) -> int:
        return self._take(">h")

    def int32(self) -> int:
        return self._take(">i")

    def int64(self) -> int:
        return self._take(">q")

    def string(self) -> str:
        length = self.int16()
        if length < 0:
            raise ConnectError("Null string in Connect protocol data")
        value = bytes(self._data[self._pos:self._pos + length]).decode("utf-8")
        self._pos += length
        return value


def _string(value: str) -> bytes:
    raw = value.encode("utf-8")
    return struct.pack(">h", len(raw)) + raw


def _int(fmt: str, value: int) -> bytes:
    return struct.pack(fmt, value)


def encode_metadata(metadata: WorkerMetadata) -> bytes:
    """Member metadata: v0 (``default``) or v1 (``compatible``, with the current allocation), plus our trailer."""
    out = [_int(">h", metadata.version), _string(metadata.url), _int(">q", metadata.config_offset)]
    if metadata.version >= 1:
        allocation = None if metadata.allocation is None else encode_assignment(metadata.allocation)
        out.append(_int(">i", -1) if allocation is None else _int(">i", len(allocation)) + allocation)
    if metadata.config_topic is not None:
        out.append(_string(metadata.config_topic))
    return b"".join(out)


def decode_metadata(data: bytes) -> WorkerMetadata:
    """Member metadata of version 0, 1 or 2 (v2, ``sessioned``, has v1's layout)."""
    try:
        reader = _Reader(data)
        version = reader.int16()
        if version < 0:
            raise ConnectError(f"Unsupported Connect member metadata version {version}")
        url, offset = reader.string(), reader.int64()
        allocation = None
        if version >= 1:
            size = reader.int32()
            if size >= 0:
                allocation = decode_assignment(reader.take(size))
        topic = reader.string() if version <= 2 and reader.remaining >= 2 else None
        return WorkerMetadata(url, offset, topic, version, allocation)
    except struct.error as exc:
        raise ConnectError(f"Malformed Connect member metadata: {exc}") from exc


def _encode_items(connectors: Iterable[str], tasks: Iterable[ConnectorTaskId]) -> bytes:
    grouped: dict[str, list[int]] = {}
    for name in connectors:
        grouped.setdefault(name, []).append(CONNECTOR_TASK)
    for task in tasks:
        grouped.setdefault(task.connector, []).append(task.task)
    out = [_int(">i", len(grouped))]
    for name, ids in grouped.items():
        out.append(_string(name) + _int(">i", len(ids)) + b"".join(_int(">i", i) for i in ids))
    return b"".join(out)


def _decode_items(reader: _Reader) -> tuple[tuple[str, ...], tuple[ConnectorTaskId, ...]]:
    connectors: list[str] = []
    tasks: list[ConnectorTaskId] = []
    for _ in range(max(reader.int32(), 0)):
        name = reader.string()
        for _ in range(max(reader.int32(), 0)):
            number = reader.int32()
            if number == CONNECTOR_TASK:
                connectors.append(name)
            else:
                tasks.append(ConnectorTaskId(name, number))
    return tuple(connectors), tuple(tasks)


def encode_assignment(assignment: Assignment) -> bytes:
    """Assignment v0 (everything the member runs) or v1 (what it gains, what it loses, the rebalance delay)."""
    out = [struct.pack(">hh", assignment.version, assignment.error),
           _string(assignment.leader), _string(assignment.leader_url), _int(">q", assignment.config_offset),
           _encode_items(assignment.connectors, assignment.tasks)]
    if assignment.version >= 1:
        out.append(_encode_items(assignment.revoked_connectors, assignment.revoked_tasks))
        out.append(_int(">i", assignment.delay_ms))
    if assignment.config_topic is not None:
        out.append(_string(assignment.config_topic))
    return b"".join(out)


def decode_assignment(data: bytes) -> Assignment:
    """An assignment of version 0, 1 or 2."""
    try:
        reader = _Reader(data)
        version = reader.int16()
        error, leader, leader_url, offset = reader.int16(), reader.string(), reader.string(), reader.int64()
        connectors, tasks = _decode_items(reader)
        revoked: tuple[tuple[str, ...], tuple[ConnectorTaskId, ...]] = ((), ())
        delay = 0
        if version >= 1:
            revoked = _decode_items(reader)
            delay = reader.int32()
        topic = reader.string() if version <= 2 and reader.remaining >= 2 else None
        return Assignment(error, leader, leader_url, offset, connectors, tasks, topic, version, revoked[0],
                          revoked[1], delay)
    except struct.error as exc:
        raise ConnectError(f"Malformed Connect assignment: {exc}") from exc


PeerAssignor = Callable[[str, Mapping[str, WorkerMetadata], ConfigState], dict[str, Assignment]]


def assign_group(leader: str, members: Mapping[str, WorkerMetadata], snapshot: ConfigState,
                 assign_peers: PeerAssignor, version: int = 0) -> dict[str, Assignment]:
    """What every assignor does first: when the leader's config is behind a member's, every member gets
    ``CONFIG_MISMATCH``; a member that uses another config topic than the leader gets ``CONFIG_MISMATCH`` naming
    the leader's topic, and no work. The others are assigned by ``assign_peers``."""
    own = members[leader] if leader in members else WorkerMetadata("", snapshot.offset)
    strangers = {m for m, md in members.items() if _differs(md.config_topic, own.config_topic)}
    peers = {m: md for m, md in members.items() if m not in strangers}
    refused = {m: Assignment(CONFIG_MISMATCH, leader, own.url, snapshot.offset, config_topic=own.config_topic,
                             version=version) for m in strangers}
    max_offset = max((m.config_offset for m in peers.values()), default=snapshot.offset)
    if snapshot.offset < max_offset:
        mismatch = Assignment(CONFIG_MISMATCH, leader, own.url, max_offset, config_topic=own.config_topic,
                              version=version)
        return {**{member: mismatch for member in peers}, **refused}
    return {**assign_peers(leader, peers, snapshot), **refused}


def eager_assign(leader: str, members: Mapping[str, WorkerMetadata], snapshot: ConfigState,
                 ) -> dict[str, Assignment]:
    """Connect's eager assignor: round-robin of the sorted connectors, then of their sorted tasks, over the sorted
    member ids (after :func:`assign_group`'s checks)."""
    return assign_group(leader, members, snapshot, _round_robin)


def _round_robin(leader: str, members: Mapping[str, WorkerMetadata], snapshot: ConfigState,
                 ) -> dict[str, Assignment]:
    own = members[leader] if leader in members else WorkerMetadata("", snapshot.offset)
    connectors: dict[str, list[str]] = {m: [] for m in members}
    tasks: dict[str, list[ConnectorTaskId]] = {m: [] for m in members}
    order = cycle(sorted(members))
    for name in snapshot.connectors():
        connectors[next(order)].append(name)
    for name in snapshot.connectors():
        for task in sorted(snapshot.tasks(name)):
            tasks[next(order)].append(task)
    return {m: Assignment(NO_ERROR, leader, own.url, snapshot.offset, tuple(connectors[m]), tuple(tasks[m]),
                          own.config_topic) for m in members}


def _differs(topic: str | None, leader_topic: str | None) -> bool:
    return topic is not None and leader_topic is not None and topic != leader_topic


def owners(allocations: Mapping[str, Iterable[str | ConnectorTaskId]], members: Mapping[str, WorkerMetadata],
           ) -> dict[str | ConnectorTaskId, str]:
    """REST URL of the member that runs each connector and task, from every member's whole allocation."""
    result: dict[str | ConnectorTaskId, str] = {}
    for member, items in allocations.items():
        url = members[member].url if member in members else ""
        for item in items:
            result[item] = url
    return result

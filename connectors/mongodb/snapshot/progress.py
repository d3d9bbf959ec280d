"""What part of a parallel initial snapshot has been emitted, kept in the connector's offsets so that a restart
continues the copy instead of starting it over.

A collection is split into ``_id`` ranges at its split points; each range is read in ``_id`` order. Per range the
state is *pending*, *after <id>* (every document of the range up to that ``_id`` was emitted) or *done*;
collections done are listed by name.

The state travels in the offset key ``snapshot_progress`` (Base64 of a BSON document, so ``_id`` values of every
type survive). Debezium reads only its own offset keys, so an offset with this key stays readable by Debezium,
which sees an interrupted snapshot (``initsync``) and starts it over.
"""

from __future__ import annotations

import base64
import binascii
import threading
from dataclasses import dataclass, field
from typing import Any

import bson
from bson.binary import UuidRepresentation
from bson.codec_options import CodecOptions
from bson.errors import BSONError

from connectors.mongodb.position import SNAPSHOT_PROGRESS_KEY

_CODEC: CodecOptions[Any] = CodecOptions(uuid_representation=UuidRepresentation.STANDARD)
_VERSION = 1


@dataclass
class RangeState:
    """One ``_id`` range ``[low, high)`` (None: unbounded) and how far it was emitted."""

    low: Any
    high: Any
    started: bool = False
    after: Any = None
    done: bool = False


@dataclass
class _Collection:
    ranges: list[RangeState] = field(default_factory=list)


class SnapshotProgress:
    """Thread-safe: the planner registers ranges, the polling thread records what it emitted."""

    def __init__(self, completed: list[str] | None = None, partial: dict[str, _Collection] | None = None) -> None:
        self._lock = threading.Lock()
        self._completed: list[str] = list(completed or [])
        self._partial: dict[str, _Collection] = dict(partial or {})

    @classmethod
    def decode(cls, text: str | None) -> SnapshotProgress:
        """The state stored by :meth:`encode`; an empty state for None; ValueError when unreadable."""
        if not text:
            return cls()
        try:
            doc = bson.decode(base64.b64decode(text, validate=True), codec_options=_CODEC)
        except (binascii.Error, BSONError, ValueError, IndexError) as exc:
            raise ValueError(f"unreadable {SNAPSHOT_PROGRESS_KEY} offset: {exc}") from exc
        if doc.get("v") != _VERSION:
            raise ValueError(f"unsupported {SNAPSHOT_PROGRESS_KEY} version {doc.get('v')!r}")
        partial = {}
        for entry in doc.get("partial", []):
            splits = list(entry.get("splits", []))
            bounds = [None, *splits, None]
            states = entry.get("ranges", [])
            if len(states) != len(splits) + 1:
                raise ValueError(f"inconsistent {SNAPSHOT_PROGRESS_KEY} offset for {entry.get('ns')}")
            ranges = [RangeState(bounds[i], bounds[i + 1], "after" in st, st.get("after"), bool(st.get("done")))
                      for i, st in enumerate(states)]
            partial[entry["ns"]] = _Collection(ranges)
        return cls(list(doc.get("completed", [])), partial)

    def encode(self) -> str:
        """The offset form of the current state."""
        with self._lock:
            return self._encode()

    def _encode(self) -> str:
        partial = []
        for ns, state in self._partial.items():
            ranges = []
            for r in state.ranges:
                ranges.append({"done": True} if r.done else {"after": r.after} if r.started else {})
            partial.append({"ns": ns, "splits": [r.low for r in state.ranges[1:]], "ranges": ranges})
        doc = {"v": _VERSION, "completed": self._completed, "partial": partial}
        return base64.b64encode(bson.encode(doc, codec_options=_CODEC)).decode("ascii")

    @property
    def started(self) -> bool:
        """Whether any part of the snapshot was recorded (a resumed snapshot)."""
        with self._lock:
            return bool(self._completed or self._partial)

    def completed(self, ns: str) -> bool:
        """Whether collection ``ns`` was copied entirely."""
        with self._lock:
            return ns in self._completed

    @property
    def completed_count(self) -> int:
        """How many collections were copied entirely."""
        with self._lock:
            return len(self._completed)

    def ranges(self, ns: str) -> list[RangeState] | None:
        """The ranges of ``ns`` recorded by an earlier run, or None."""
        with self._lock:
            state = self._partial.get(ns)
            return list(state.ranges) if state else None

    def plan(self, ns: str, splits: list[Any]) -> list[RangeState]:
        """Record the ranges of ``ns`` cut at ``splits`` (sorted, distinct)."""
        bounds = [None, *splits, None]
        ranges = [RangeState(bounds[i], bounds[i + 1]) for i in range(len(splits) + 1)]
        with self._lock:
            self._partial[ns] = _Collection(ranges)
        return ranges

    def emitted(self, ns: str, index: int, last_id: Any, done: bool) -> tuple[str, bool]:
        """Range ``index`` of ``ns`` emitted up to ``last_id`` (all of it when ``done``); returns the new offset
        form and whether the collection is now complete."""
        with self._lock:
            state = self._partial[ns]
            current = state.ranges[index]
            if done:
                current.done = True
            elif last_id is not None:
                current.started, current.after = True, last_id
            finished = all(r.done for r in state.ranges)
            if finished:
                del self._partial[ns]
                self._completed.append(ns)
            return self._encode(), finished

"""Debezium's initial snapshot, single-threaded: the change-stream position is taken first, then every
captured collection is read with ``find()``; each document becomes an ``r`` record. Streaming then resumes
from the position taken before the copy, so a change made during the copy is emitted afterwards too.

While the snapshot runs, offsets carry ``initsync: true``: a restart in the middle snapshots again (as
Debezium does); the final record gets ``source.snapshot = last`` and the position without ``initsync``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

from connect.api.records import SourceRecord
from connectors.mongodb.config import ALWAYS_EXCLUDED_DATABASES
from connectors.mongodb.events import ChangeEventConverter, encode_resume_token

log = logging.getLogger(__name__)


def start_position(client: Any, watch_target: Any) -> dict[str, Any]:
    """The change-stream position now: ``{"sec", "ord", "resume_token"}`` (sec/ord -1 from a bare token)."""
    with watch_target.watch(max_await_time_ms=1) as stream:
        stream.try_next()
        token = stream.resume_token
    if token is None:
        raise RuntimeError("the server returned no resume token to start the snapshot from")
    return {"sec": -1, "ord": -1, "resume_token": encode_resume_token(token)}


def captured_collections(client: Any, captured: Callable[[str, str], bool]) -> list[tuple[str, str]]:
    """``(db, collection)`` pairs to copy, sorted by collection name as Debezium does."""
    found = []
    for db in client.list_database_names():
        if db in ALWAYS_EXCLUDED_DATABASES:
            continue
        for coll in client[db].list_collection_names():
            if not coll.startswith("system.") and captured(db, coll):
                found.append((db, coll))
    return sorted(found, key=lambda pair: (pair[1], pair[0]))


def snapshot_records(client: Any, collections: list[tuple[str, str]], events: ChangeEventConverter,
                     position: dict[str, Any], fetch_size: int, batch: int, name: str) -> Iterator[list[SourceRecord]]:
    """Batches of ``r`` records; the very last one is marked ``last`` and carries ``position`` (no initsync)."""
    running = {**position, "initsync": True}
    held: SourceRecord | None = None
    out: list[SourceRecord] = []
    for db, coll in collections:
        count = 0
        cursor = client[db][coll].find({}, batch_size=fetch_size)
        for doc in cursor:
            if held is not None:
                out.append(held)
            held = events.snapshot_record(doc, db, coll, running)
            count += 1
            if len(out) >= batch:
                yield out
                out = []
        log.info("[%s|task-0] Snapshot of %s.%s: %s documents", name, db, coll, count)
    if held is not None:
        out.append(events.with_snapshot_marker(held, "last", position))
    if out:
        yield out

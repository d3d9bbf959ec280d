"""The snapshots (Debezium's ``snapshot`` package): the initial and blocking snapshots sequenced by :mod:`.runner`
and read by :mod:`.parallel`, resumable through :mod:`.progress`; the incremental snapshot (:mod:`.incremental`)
with its offset keys (:mod:`.incremental_state`, the ``_id``s in Java's serialized form, :mod:`.java_serialization`);
``_id`` ranges in the server's order (:mod:`.bson_order`).

Here: where a snapshot starts and what it reads. The change-stream position is taken first, then every captured
collection is read; each document becomes an ``r`` record. Streaming then resumes from the position taken before
the copy, so a change made during the copy is emitted afterwards too. While the snapshot runs, offsets carry
``initsync: true`` (and our ``snapshot_progress``); the final record gets ``source.snapshot = last`` and the
position without either.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from connectors.mongodb.config import ALWAYS_EXCLUDED_DATABASES
from connectors.mongodb.position import Position

log = logging.getLogger(__name__)


def start_position(client: Any, watch_target: Any) -> dict[str, Any]:
    """The change-stream position now: ``{"sec", "ord", "resume_token"}`` (sec/ord -1 from a bare token)."""
    with watch_target.watch(max_await_time_ms=1) as stream:
        stream.try_next()
        token = stream.resume_token
    if token is None:
        raise RuntimeError("the server returned no resume token to start the snapshot from")
    return Position.at_token(token).to_offset()


def captured_collections(client: Any, captured: Callable[[str, str], bool],
                         include: tuple[re.Pattern[str], ...] = ()) -> list[tuple[str, str]]:
    """``(db, collection)`` pairs to copy, sorted by collection name as Debezium does; ``include`` is
    ``snapshot.include.collection.list`` (full match on ``db.collection``)."""
    found = []
    for db in client.list_database_names():
        if db in ALWAYS_EXCLUDED_DATABASES:
            continue
        for coll in client[db].list_collection_names():
            if coll.startswith("system.") or not captured(db, coll):
                continue
            if not include or any(p.fullmatch(f"{db}.{coll}") for p in include):
                found.append((db, coll))
    return sorted(found, key=lambda pair: (pair[1], pair[0]))

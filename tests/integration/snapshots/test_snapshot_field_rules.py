"""``field.exclude.list`` and ``field.renames`` apply to the initial snapshot's ``r`` records as to streamed events,
as Debezium does (its 3.6.3 output for this document, recorded with ``compat.debezium``, is the expectation: the
excluded fields gone, the renamed field moved to the end)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.snapshots.helpers import create, event
from tests.integration.support import Worker, read_topic, unique

pytestmark = pytest.mark.integration

DEBEZIUM_AFTER = '{"_id": 1,"nested": {"a": 1},"kept": 1}'


def test_snapshot_records_apply_field_excludes_and_renames(worker: Worker, stack: Any, mongo: Any) -> None:
    db, prefix, name = unique("fex_"), unique("fex"), unique("fex-")
    mongo[db].c.insert_one({"_id": 1, "keep": 1, "secret": "x", "nested": {"a": 1, "hide": 2}})
    create(worker, name, {"mongodb.connection.string": stack.mongo_uri, "topic.prefix": prefix,
                          "database.include.list": db, "snapshot.mode": "initial",
                          "field.exclude.list": f"{db}.c.secret,{db}.c.nested.hide",
                          "field.renames": f"{db}.c.keep:kept"})
    mongo[db].c.insert_one({"_id": 2, "keep": 1, "secret": "x", "nested": {"a": 1, "hide": 2}})
    records = read_topic(stack.kafka_bootstrap, f"{prefix}.{db}.c",
                         until=lambda fresh: any(event(r)[0] == 2 for r in fresh), timeout=120)
    afters = {event(r)[0]: event(r)[1]["after"] for r in records}  # type: ignore[index]
    assert afters[1] == DEBEZIUM_AFTER, "the snapshot record"
    assert afters[2] == DEBEZIUM_AFTER.replace('"_id": 1', '"_id": 2'), "the streamed record"

"""capture.mode (pre-images, update_full), capture.scope/target, cursor.pipeline, oversize skip, field excludes
and renames, skipped.operations and tombstones.on.delete, against SecantusDB and Kafka."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.integration.mongodb.conftest import create_mongodb_connector, values
from tests.integration.support import Worker, unique

pytestmark = pytest.mark.integration


def _doc(value: Any) -> Any:
    return None if value is None else json.loads(value)


def test_pre_images_fill_before(worker: Worker, stack: Any, mongo: Any) -> None:
    db = unique("pre")
    mongo[db].create_collection("c", changeStreamPreAndPostImages={"enabled": True})
    prefixes = {}
    for mode in ("change_streams_with_pre_image", "change_streams_update_full_with_pre_image", "change_streams"):
        prefixes[mode] = unique("p")
        create_mongodb_connector(worker, unique("pre-"), {
            "mongodb.connection.string": stack.mongo_uri, "topic.prefix": prefixes[mode], "capture.mode": mode,
            "collection.include.list": f"{db}.c"})
    coll = mongo[db]["c"]
    coll.insert_one({"_id": 1, "a": 1})
    coll.update_one({"_id": 1}, {"$set": {"a": 2}})
    coll.replace_one({"_id": 1}, {"a": 3})
    coll.delete_one({"_id": 1})

    pre = values(stack.kafka_bootstrap, f"{prefixes['change_streams_with_pre_image']}.{db}.c", 5)
    assert [v and v["op"] for v in pre] == ["c", "u", "u", "d", None]
    assert pre[0]["before"] is None
    assert _doc(pre[1]["before"]) == {"_id": 1, "a": 1} and pre[1]["after"] is None
    assert json.loads(pre[1]["updateDescription"]["updatedFields"]) == {"a": 2}
    assert _doc(pre[2]["before"]) == {"_id": 1, "a": 2} and _doc(pre[2]["after"]) == {"_id": 1, "a": 3}
    assert _doc(pre[3]["before"]) == {"_id": 1, "a": 3} and pre[3]["after"] is None

    full = values(stack.kafka_bootstrap, f"{prefixes['change_streams_update_full_with_pre_image']}.{db}.c", 5)
    assert _doc(full[1]["before"]) == {"_id": 1, "a": 1}
    assert full[1]["after"] is None or _doc(full[1]["after"])["_id"] == 1  # looked up later: may be gone/changed

    plain = values(stack.kafka_bootstrap, f"{prefixes['change_streams']}.{db}.c", 5)
    assert plain[1]["before"] is None and plain[1]["after"] is None
    assert plain[3]["before"] is None


def test_scope_pipeline_and_oversize_skip(worker: Worker, stack: Any, mongo: Any) -> None:
    db = unique("scope")
    prefix = unique("s")
    create_mongodb_connector(worker, unique("scope-"), {
        "mongodb.connection.string": stack.mongo_uri, "topic.prefix": prefix,
        "capture.scope": "collection", "capture.target": f"{db}.watched",
        "cursor.pipeline": '[{"$match": {"fullDocument.skip": {"$ne": true}}}]',
        "cursor.pipeline.order": "user_first",
        "cursor.oversize.handling.mode": "skip", "cursor.oversize.skip.threshold": "2000"})
    mongo[db]["other"].insert_one({"_id": "not watched"})
    watched = mongo[db]["watched"]
    watched.insert_one({"_id": 1, "skip": True})
    watched.insert_one({"_id": 2, "big": "x" * 5000})
    watched.insert_one({"_id": 3, "ok": True})
    [only] = values(stack.kafka_bootstrap, f"{prefix}.{db}.watched", 1)
    assert _doc(only["after"]) == {"_id": 3, "ok": True}
    # nothing else arrives: the last record written is still _id 3 after a later marker event
    watched.insert_one({"_id": 4})
    got = values(stack.kafka_bootstrap, f"{prefix}.{db}.watched", 2)
    assert [_doc(v["after"])["_id"] for v in got] == [3, 4]


def test_field_excludes_renames_skipped_operations(worker: Worker, stack: Any, mongo: Any) -> None:
    db = unique("fields")
    prefix = unique("f")
    mongo[db].create_collection("people", changeStreamPreAndPostImages={"enabled": True})
    create_mongodb_connector(worker, unique("fields-"), {
        "mongodb.connection.string": stack.mongo_uri, "topic.prefix": prefix,
        "collection.include.list": f"{db}.people",
        "capture.mode.full.update.type": "post_image",  # the document as of the update, not as looked up later
        "field.exclude.list": f"{db}.people.secret,*.people.address.zip",
        "field.renames": f"{db}.people.name:full_name,{db}.people.address.city:town",
        "skipped.operations": "d", "tombstones.on.delete": "false"})
    people = mongo[db]["people"]
    people.insert_one({"_id": 1, "name": "Ann", "secret": "s", "address": {"city": "Oslo", "zip": "0150"},
                       "items": [{"name": "kept"}]})
    people.update_one({"_id": 1}, {"$set": {"address.city": "Bergen", "address.zip": "5003", "secret": "t"},
                                   "$unset": {"name": ""}})
    # SecantusDB approximates the stored post-image by a lookup when the event is read: let the update be read
    # before the delete, or its post-image would be gone (MongoDB keeps the image written with the update)
    values(stack.kafka_bootstrap, f"{prefix}.{db}.people", 2)
    people.delete_one({"_id": 1})
    people.insert_one({"_id": 2, "name": "Bo"})
    got = values(stack.kafka_bootstrap, f"{prefix}.{db}.people", 3)
    assert [v["op"] for v in got] == ["c", "u", "c"]  # the delete is skipped, and no tombstone either
    assert _doc(got[0]["after"]) == {"_id": 1, "full_name": "Ann", "address": {"town": "Oslo"},
                                     "items": [{"name": "kept"}]}
    update = got[1]["updateDescription"]
    assert json.loads(update["updatedFields"]) == {"address.town": "Bergen"}
    assert update["removedFields"] == ["full_name"]
    assert "secret" not in _doc(got[1]["after"]) and _doc(got[1]["after"])["address"] == {"town": "Bergen"}
    assert _doc(got[2]["after"]) == {"_id": 2, "full_name": "Bo"}

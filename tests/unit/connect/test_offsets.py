from pathlib import Path

from connect.runtime.offsets import OffsetReader, OffsetWriter, SubmittedRecords
from connect.storage.file import FileOffsetStore

P1 = {"server_id": "a"}
P2 = {"server_id": "b"}


def test_only_the_acknowledged_prefix_is_committable() -> None:
    submitted = SubmittedRecords("conn")
    r1 = submitted.submit(P1, {"n": 1})
    r2 = submitted.submit(P1, {"n": 2})
    r3 = submitted.submit(P1, {"n": 3})
    other = submitted.submit(P2, {"n": 10})
    r2.ack()
    r3.ack()
    other.ack()
    committable = submitted.committable()
    assert list(committable.values()) == [{"n": 10}]
    r1.ack()
    assert list(submitted.committable().values()) == [{"n": 3}]
    assert submitted.in_flight() == 0


def test_removed_record_does_not_block_the_partition() -> None:
    submitted = SubmittedRecords("conn")
    first = submitted.submit(P1, {"n": 1})
    failed = submitted.submit(P1, {"n": 2})
    submitted.remove(failed)
    first.ack()
    assert list(submitted.committable().values()) == [{"n": 1}]


def test_file_store_round_trip_and_reader(tmp_path: Path) -> None:
    path = tmp_path / "offsets.json"
    store = FileOffsetStore(path)
    store.start()
    submitted = SubmittedRecords("conn")
    submitted.submit(P1, {"sec": 5, "ord": 1, "resume_token": "abc="}).ack()
    writer = OffsetWriter(store)
    writer.stage(submitted.committable())
    assert writer.flush(5)
    assert not writer.flush(5)
    reloaded = FileOffsetStore(path)
    reloaded.start()
    assert OffsetReader("conn", reloaded).offset(P1) == {"sec": 5, "ord": 1, "resume_token": "abc="}
    assert OffsetReader("other", reloaded).offset(P1) is None
    assert reloaded.items() == [(b'["conn",{"server_id":"a"}]', b'{"sec":5,"ord":1,"resume_token":"abc="}')]


def test_a_record_without_source_partition_or_offset_commits_nothing_and_blocks_nothing() -> None:
    """Connect allows records with null source partition and offset (Debezium's notifications): they are in
    flight until acknowledged, never written to the offset store, and do not hold back other partitions."""
    submitted = SubmittedRecords("conn")
    first = submitted.submit(P1, {"n": 1})
    note = submitted.submit(None, None)
    half = submitted.submit(P1, None)
    second = submitted.submit(P1, {"n": 2})
    assert submitted.in_flight() == 4
    note.ack()
    half.ack()
    first.ack()
    assert list(submitted.committable().values()) == [{"n": 1}]
    second.ack()
    assert list(submitted.committable().values()) == [{"n": 2}]
    assert submitted.in_flight() == 0

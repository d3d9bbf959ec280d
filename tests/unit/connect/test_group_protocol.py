"""Connect's group protocol bytes and the eager assignor.

The golden bytes (``data/group_protocol_golden.txt``) were printed by Kafka Connect 4.3.1's own ``ConnectProtocol``
and ``IncrementalCooperativeConnectProtocol`` (connect-runtime jar from Maven Central) with
``compat/jshell/group_protocol_golden.jsh`` and ``group_protocol_v1_golden.jsh``; ``python -m compat.record
group-protocol`` re-records them, the file's first line naming the JDK and Kafka Connect.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from connect.api.errors import ConnectError
from connect.distributed import protocol as gp
from connect.storage.config_state import ConfigState, ConnectorTaskId, TargetState

_HEADER, *_LINES = (Path(__file__).parent / "data" / "group_protocol_golden.txt").read_text().splitlines()
JAVA = dict(line.split(" ", 1) for line in _LINES)
"""What the scripts printed: name -> hex bytes (DESER: Java's toString of the v1 assignment read back)."""
JAVA_METADATA = JAVA["META"]
JAVA_ASSIGNMENT = JAVA["ASSIGN"]
JAVA_MISMATCH = JAVA["MISMATCH"]
URL = "http://127.0.0.1:8083/"


def test_metadata_bytes_match_java() -> None:
    metadata = gp.WorkerMetadata(URL, 42)
    assert gp.encode_metadata(metadata).hex() == JAVA_METADATA
    assert gp.decode_metadata(bytes.fromhex(JAVA_METADATA)) == metadata


def test_assignment_bytes_match_java() -> None:
    assignment = gp.Assignment(gp.NO_ERROR, "connect-1-abc", URL, 7, ("alpha", "beta"),
                               (ConnectorTaskId("alpha", 0), ConnectorTaskId("alpha", 1), ConnectorTaskId("beta", 0)))
    assert gp.encode_assignment(assignment).hex() == JAVA_ASSIGNMENT
    assert gp.decode_assignment(bytes.fromhex(JAVA_ASSIGNMENT)) == assignment
    mismatch = gp.decode_assignment(bytes.fromhex(JAVA_MISMATCH))
    assert mismatch.failed and mismatch.error == gp.CONFIG_MISMATCH and mismatch.config_offset == 9
    assert gp.encode_assignment(mismatch).hex() == JAVA_MISMATCH


# printed by group_protocol_v1_golden.jsh (IncrementalCooperativeConnectProtocol, the "compatible" subprotocol)
JAVA_META_V1 = JAVA["META1"]
JAVA_META_V1_NULL = JAVA["META1NULL"]
JAVA_ASSIGN_V1 = JAVA["ASSIGN1"]
JAVA_ASSIGN_V1_EMPTY = JAVA["ASSIGN1EMPTY"]


def test_the_golden_names_who_printed_it() -> None:
    assert _HEADER.startswith("# recorded_with: ") and '"kafka_connect": "4.3.1"' in _HEADER


def test_v1_metadata_and_assignment_bytes_match_java() -> None:
    current = gp.Assignment(gp.NO_ERROR, "connect-1-abc", URL, 7, ("alpha",), (ConnectorTaskId("alpha", 0),),
                            version=1)
    metadata = gp.WorkerMetadata(URL, 42, version=1, allocation=current)
    assert gp.encode_metadata(metadata).hex() == JAVA_META_V1
    assert gp.decode_metadata(bytes.fromhex(JAVA_META_V1)) == metadata
    empty = gp.WorkerMetadata(URL, 42, version=1)
    assert gp.encode_metadata(empty).hex() == JAVA_META_V1_NULL
    assert gp.decode_metadata(bytes.fromhex(JAVA_META_V1_NULL)) == empty
    assignment = gp.Assignment(gp.NO_ERROR, "connect-1-abc", URL, 7, ("alpha", "beta"),
                               (ConnectorTaskId("alpha", 0), ConnectorTaskId("alpha", 1), ConnectorTaskId("beta", 0)),
                               version=1, revoked_connectors=("gamma",), revoked_tasks=(ConnectorTaskId("gamma", 2),),
                               delay_ms=1500)
    assert gp.encode_assignment(assignment).hex() == JAVA_ASSIGN_V1
    assert gp.decode_assignment(bytes.fromhex(JAVA_ASSIGN_V1)) == assignment
    empty_assignment = gp.Assignment(gp.NO_ERROR, "connect-1-abc", URL, 7, (), (), version=1)
    assert gp.encode_assignment(empty_assignment).hex() == JAVA_ASSIGN_V1_EMPTY
    assert gp.decode_assignment(bytes.fromhex(JAVA_ASSIGN_V1_EMPTY)) == empty_assignment


def test_our_config_topic_trailer_round_trips_in_both_versions() -> None:
    for version in (0, 1):
        metadata = gp.WorkerMetadata(URL, 3, "configs", version)
        assert gp.decode_metadata(gp.encode_metadata(metadata)) == metadata
        assignment = gp.Assignment(gp.NO_ERROR, "l", URL, 3, ("a",), config_topic="configs", version=version)
        assert gp.decode_assignment(gp.encode_assignment(assignment)) == assignment


def test_truncated_bytes_are_a_connect_error() -> None:
    with pytest.raises(ConnectError, match="Malformed"):
        gp.decode_metadata(bytes.fromhex(JAVA_METADATA)[:10])
    with pytest.raises(ConnectError, match="Malformed"):
        gp.decode_assignment(bytes.fromhex(JAVA_ASSIGNMENT)[:30])


def _snapshot(tasks: dict[str, int], offset: int = 10) -> ConfigState:
    snap = ConfigState(offset=offset)
    for name, count in tasks.items():
        snap.connector_configs[name] = {"connector.class": "x"}
        snap.target_states[name] = TargetState.STARTED
        snap.task_counts[name] = count
        for n in range(count):
            snap.task_configs[ConnectorTaskId(name, n)] = {}
    return snap


def test_eager_assignor_round_robins_connectors_then_tasks_over_sorted_members() -> None:
    members = {m: gp.WorkerMetadata(f"http://{m}/", 10) for m in ("w-b", "w-a", "w-c")}
    result = gp.eager_assign("w-b", members, _snapshot({"y": 2, "x": 3}))
    assert result["w-a"].connectors == ("x",) and result["w-b"].connectors == ("y",)
    # connectors took w-a, w-b; tasks continue from w-c: x0 w-c, x1 w-a, x2 w-b, y0 w-c, y1 w-a
    assert result["w-c"].tasks == (ConnectorTaskId("x", 0), ConnectorTaskId("y", 0))
    assert result["w-a"].tasks == (ConnectorTaskId("x", 1), ConnectorTaskId("y", 1))
    assert result["w-b"].tasks == (ConnectorTaskId("x", 2),)
    assert {a.leader for a in result.values()} == {"w-b"} and {a.leader_url for a in result.values()} == {"http://w-b/"}
    owners = gp.owners({m: (*a.connectors, *a.tasks) for m, a in result.items()}, members)
    assert owners["x"] == "http://w-a/" and owners[ConnectorTaskId("y", 1)] == "http://w-a/"


def test_eager_assignor_reports_a_config_mismatch_when_the_leader_is_behind() -> None:
    members = {"a": gp.WorkerMetadata("http://a/", 10), "b": gp.WorkerMetadata("http://b/", 12)}
    result = gp.eager_assign("a", members, _snapshot({"x": 1}, offset=10))
    assert all(a.failed and a.config_offset == 12 and not a.connectors for a in result.values())


def test_session_key_signatures() -> None:
    from connect.distributed import session_keys
    from connect.runtime.rest_errors import ConnectRestError

    key = session_keys.new_key()
    body = b'[{"task.class":"x"}]'
    headers = session_keys.sign(key, body)
    session_keys.verify(key, body, headers)
    for bad_headers, status in (({}, 400), ({**headers, session_keys.SIGNATURE_HEADER: "AAAA"}, 403)):
        with pytest.raises(ConnectRestError) as failure:
            session_keys.verify(key, body, bad_headers)
        assert failure.value.status == status
    with pytest.raises(ConnectRestError) as failure:
        session_keys.verify(key, body + b" ", headers)
    assert failure.value.status == 403
    with pytest.raises(ConnectRestError) as failure:
        session_keys.verify(None, body, headers)
    assert failure.value.status == 503
    assert not session_keys.expired(key, 60_000) and session_keys.expired(key, 0) and session_keys.expired(None, 1)

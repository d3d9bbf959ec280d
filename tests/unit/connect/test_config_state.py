from connect.storage import codec
from connect.storage.config_state import ConfigState, ConnectorTaskId, TargetState
from connect.storage.memory import MemoryConfigStore


def test_task_configs_apply_only_on_commit() -> None:
    state = ConfigState()
    state.apply("connector-my-conn", {"properties": {"name": "my-conn", "tasks.max": "2"}}, 0)
    state.apply("task-my-conn-0", {"properties": {"a": "0"}}, 1)
    state.apply("task-my-conn-1", {"properties": {"a": "1"}}, 2)
    assert state.tasks("my-conn") == []
    state.apply("commit-my-conn", {"tasks": 2}, 3)
    assert state.tasks("my-conn") == [ConnectorTaskId("my-conn", 0), ConnectorTaskId("my-conn", 1)]
    assert state.task_configs[ConnectorTaskId("my-conn", 1)] == {"a": "1"}
    assert state.offset == 4


def test_incomplete_commit_keeps_old_tasks() -> None:
    state = ConfigState()
    state.apply("connector-c", {"properties": {"name": "c"}}, 0)
    state.apply("task-c-0", {"properties": {"v": "old"}}, 1)
    state.apply("commit-c", {"tasks": 1}, 2)
    state.apply("task-c-1", {"properties": {"v": "new"}}, 3)
    state.apply("commit-c", {"tasks": 2}, 4)
    assert state.task_configs == {ConnectorTaskId("c", 0): {"v": "old"}}


def test_target_state_prefers_v2_and_delete_clears_everything() -> None:
    state = ConfigState()
    state.apply("connector-c", {"properties": {"name": "c"}}, 0)
    state.apply("target-state-c", {"state": "PAUSED", "state.v2": "STOPPED"}, 1)
    assert state.target_state("c") is TargetState.STOPPED
    state.apply("connector-c", None, 2)
    assert state.connectors() == []
    assert state.target_state("c") is TargetState.STARTED


def test_store_writes_connect_record_formats() -> None:
    written: list[tuple[str, bytes | None]] = []

    class Recording(MemoryConfigStore):
        def _apply(self, key: str, value: bytes | None, offset: int) -> None:
            written.append((key, value))
            super()._apply(key, value, offset)

    store = Recording()
    store.put_connector_config("c", {"name": "c", "connector.class": "X"}, TargetState.STOPPED)
    store.put_task_configs("c", [{"k": "v", "task.class": "T"}])
    store.remove_connector_config("c")
    assert written == [
        ("target-state-c", b'{"state":"PAUSED","state.v2":"STOPPED"}'),
        ("connector-c", b'{"properties":{"name":"c","connector.class":"X"}}'),
        ("task-c-0", b'{"properties":{"k":"v","task.class":"T"}}'),
        ("commit-c", b'{"tasks":1}'),
        ("connector-c", None),
        ("target-state-c", None),
    ]
    assert store.snapshot().connectors() == []


def test_offset_key_is_byte_identical_to_java() -> None:
    key = codec.offset_key("inventory-connector", {"server_id": "fulfillment"})
    assert key == b'["inventory-connector",{"server_id":"fulfillment"}]'
    assert codec.offset_key("ünï", {"p": "é"}) == '["ünï",{"p":"é"}]'.encode()

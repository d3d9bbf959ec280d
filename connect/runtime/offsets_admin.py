"""KIP-875 offset administration of STOPPED connectors: list, alter and reset their source offsets (the
``/connectors/{c}/offsets`` endpoints). Runs on the herder thread, so it never races a restart."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any

from connect.api.errors import ConnectError, NotFoundError
from connect.runtime import plugins
from connect.runtime.herder import Herder
from connect.runtime.rest_errors import BadRequestError
from connect.storage import codec
from connect.storage.config_state import TargetState

ALTERED = "The offsets for this connector have been altered successfully"
RESET = "The offsets for this connector have been reset successfully"
FRAMEWORK_ALTERED = ("The Connect framework-managed offsets for this connector have been altered successfully. "
                     "However, if this connector manages offsets externally, they will need to be manually altered "
                     "in the system that the connector uses.")
FRAMEWORK_RESET = ("The Connect framework-managed offsets for this connector have been reset successfully. "
                   "However, if this connector manages offsets externally, they will need to be manually reset in "
                   "the system that the connector uses.")


def connector_offsets(herder: Herder, name: str) -> list[dict[str, Any]]:
    """``[{"partition": {...}, "offset": {...}}]`` of the connector (served locally, never forwarded)."""
    config = herder.connector_config(name)
    result = []
    with herder.worker.connector_offset_store(name, config) as store:
        pairs = store.items()
    for key, value in pairs:
        parsed = codec.loads(key)
        if isinstance(parsed, list) and len(parsed) == 2 and parsed[0] == name and isinstance(parsed[1], dict):
            result.append({"partition": parsed[1], "offset": codec.loads(value)})
    return result


def _require_stopped(herder: Herder, name: str) -> dict[str, str]:
    herder.config_store.refresh(30)
    snap = herder.config_store.snapshot()
    config = snap.connector_configs.get(name)
    if config is None:
        raise NotFoundError(f"Connector {name} not found")
    if snap.target_state(name) is not TargetState.STOPPED or snap.task_counts.get(name, 0) > 0:
        raise BadRequestError(
            "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for "
            f"the specified connector by issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint")
    return config


def _connector_confirms(config: Mapping[str, str], offsets: dict[tuple[tuple[str, Any], ...], Any]) -> bool:
    desc = plugins.find(plugins.CONNECTORS, config.get("connector.class", ""))
    if desc is None:
        raise BadRequestError(plugins.connector_not_found(config.get("connector.class", "")))
    try:
        return bool(plugins.load(desc)().alter_offsets(dict(config), offsets))
    except ConnectError as exc:
        raise BadRequestError(f"The connector refused the offsets: {exc}") from exc


_PRIMITIVE = (str, int, float, bool, type(None))


def _frozen(partition: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """A partition as a hashable key; Connect allows only primitive values in partitions."""
    if not all(isinstance(k, str) and isinstance(v, _PRIMITIVE) for k, v in partition.items()):
        raise BadRequestError(f"Partition keys must be strings and values primitive (string, number, boolean, "
                              f"null): {dict(partition)}")
    return tuple(partition.items())


def alter_offsets(herder: Herder, name: str, body: Any) -> Future[str]:
    """Write the given partitions' offsets (``null`` removes one); the message says who manages them."""
    herder.connector_config(name)  # an unknown connector is a 404 before the body is looked at
    entries = body.get("offsets") if isinstance(body, Mapping) else None
    if not entries:
        raise BadRequestError("Partitions / offsets need to be provided for an alter offsets request")
    changes: dict[tuple[tuple[str, Any], ...], Any] = {}
    for entry in entries:
        partition = entry.get("partition") if isinstance(entry, Mapping) else None
        offset = entry.get("offset") if isinstance(entry, Mapping) else None
        if not isinstance(partition, Mapping) or (offset is not None and not isinstance(offset, Mapping)):
            raise BadRequestError("Each entry needs a 'partition' object and an 'offset' object or null")
        if offset is not None and not all(isinstance(v, _PRIMITIVE) for v in offset.values()):
            raise BadRequestError(f"Offset values must be primitive (string, number, boolean, null): {offset}")
        changes[_frozen(partition)] = offset

    def alter() -> str:
        herder.require_leader()
        config = _require_stopped(herder, name)
        confirmed = _connector_confirms(config, changes)
        _write(herder, name, changes)
        return ALTERED if confirmed else FRAMEWORK_ALTERED
    return _modify(herder, name, alter)


def reset_offsets(herder: Herder, name: str) -> Future[str]:
    """Tombstone every offset of the connector."""
    def reset() -> str:
        herder.require_leader()
        config = _require_stopped(herder, name)
        changes = {_frozen(entry["partition"]): None for entry in connector_offsets(herder, name)}
        confirmed = _connector_confirms(config, changes)
        _write(herder, name, changes)
        return RESET if confirmed else FRAMEWORK_RESET
    return _modify(herder, name, reset)


def _leader_and_stopped(herder: Herder, name: str) -> None:
    herder.require_leader()
    _require_stopped(herder, name)


def _modify(herder: Herder, name: str, modify: Callable[[], str]) -> Future[str]:
    """Run ``modify`` on the herder thread; with exactly-once source support enabled, after a round of zombie
    fencing (Connect's: no producer of an earlier task generation may commit offsets after these are written)."""
    fence = herder.fence_zombies
    if fence is None or not herder.worker.config.exactly_once_source_enabled():
        return herder.submit(modify)
    result: Future[str] = Future()

    def run() -> None:
        try:
            herder.submit(lambda: _leader_and_stopped(herder, name)).result(60)
            fence(name)
            result.set_result(herder.submit(modify).result(60))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller through the future
            result.set_exception(exc)

    threading.Thread(target=run, name=f"offsets-{name}", daemon=True).start()
    return result


def _write(herder: Herder, name: str, changes: Mapping[tuple[tuple[str, Any], ...], Any]) -> None:
    """Write the offsets; with exactly-once source support enabled, in a transaction of task 0's producer, as
    Connect does (a commit marker follows them in the offsets topic)."""
    values = {codec.offset_key(name, dict(partition)): None if offset is None else codec.dumps(offset)
              for partition, offset in changes.items()}
    worker = herder.worker
    try:
        if worker.config.exactly_once_source_enabled():
            worker.write_offsets_in_transaction(name, herder.connector_config(name), values)
            return
        with worker.connector_offset_store(name, herder.connector_config(name)) as store:
            store.set(values).result(30)
    except Exception as exc:
        raise ConnectError(f"Failed to write offsets of connector {name}: {exc}") from exc

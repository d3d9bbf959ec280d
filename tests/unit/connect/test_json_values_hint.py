"""``SourceTaskContext.values_go_to_json_converter``: true only when a task's values reach a JsonConverter
untouched (the MongoDB connector then writes its values' payloads ahead, as LazyStructs)."""

from __future__ import annotations

from pathlib import Path

from connect.runtime.task_contracts import DeliveryCallback, TaskStatusListener
from connect.runtime.transformation_chain import TransformationChain, TransformationStage
from connect.runtime.worker_source_task import Converters, WorkerSourceTask
from connect.storage.config_state import ConnectorTaskId
from connectors.mongodb.transforms.extract_new_document_state import ExtractNewDocumentState
from converters.string import StringConverter
from tests.unit.connect.support import IdleTask, QuietProducer, json_converters, offset_store


class _Producer(QuietProducer):
    def send(self, topic: str, *, value: bytes | None, key: bytes | None, headers: list[tuple[str, bytes]],
             partition: int | None, timestamp_ms: int | None, on_done: DeliveryCallback | None = None) -> None:
        """Never called: no record is sent here."""


def _context_hint(tmp_path: Path, converters: Converters, chain: TransformationChain | None = None) -> bool:
    runner = WorkerSourceTask(ConnectorTaskId("conn", 0), IdleTask(), {}, converters, _Producer(),
                              offset_store(tmp_path), TaskStatusListener(), flush_interval_ms=60_000,
                              flush_timeout_ms=5_000, chain=chain)
    return runner._context().values_go_to_json_converter


def test_json_values_without_transforms_go_straight_to_the_converter(tmp_path: Path) -> None:
    assert _context_hint(tmp_path, json_converters())


def test_a_transform_or_another_value_converter_reads_the_values(tmp_path: Path) -> None:
    unwrap = ExtractNewDocumentState()
    unwrap.configure({})
    chain = TransformationChain((TransformationStage("unwrap", unwrap),))
    assert not _context_hint(tmp_path, json_converters(), chain)
    json = json_converters()
    strings = StringConverter()
    strings.configure({}, False)
    assert not _context_hint(tmp_path, Converters(json.key, strings, json.header))

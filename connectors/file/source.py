"""``FileStreamSourceConnector``: each new line of ``file`` becomes a string record on ``topic``.

The source partition is ``{"filename": <file>}`` and the offset ``{"position": <byte offset>}``, as in
Kafka's example connector, so its offsets are byte-compatible with Java's.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from connect.api.config import ConfigDef, ConfigKey, ConfigType
from connect.api.connector import ExactlyOnceSupport, SourceConnector
from connect.api.data import STRING
from connect.api.errors import ConnectError
from connect.api.records import SourceRecord
from connect.api.task import SourceTask

# Named after Kafka's classes, as Java's per-class loggers are: a level set on ``org.apache.kafka.connect.file``
# (PUT /admin/loggers) reaches them, and the answer names them as Java Connect's does.
log = logging.getLogger("org.apache.kafka.connect.file.FileStreamSourceConnector")
task_log = logging.getLogger("org.apache.kafka.connect.file.FileStreamSourceTask")

IDLE_WAIT = 1.0
"""Seconds a poll that found nothing new waits before it returns (Java's ``this.wait(1000)``), so an idle task
does not spin; :meth:`FileStreamSourceTask.stop` ends the wait at once."""

CONFIG_DEF = ConfigDef((
    ConfigKey("file", ConfigType.STRING, importance="HIGH", documentation="Source filename."),
    ConfigKey("topic", ConfigType.STRING, required=True, importance="HIGH",
              documentation="The topic to publish data to"),
    ConfigKey("batch.size", ConfigType.INT, default="2000", importance="LOW",
              documentation="The maximum number of records the source task can read from the file each time it "
                            "is polled"),
))


class FileStreamSourceConnector(SourceConnector):
    """Reads one file with one task."""

    def start(self, props: Mapping[str, str]) -> None:
        """Keep the config."""
        self._props = dict(props)
        log.debug("Starting: file %s, topic %s", props.get("file"), props.get("topic"))

    def task_class(self) -> type:
        """The task class."""
        return FileStreamSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """One task with the connector's config, as Kafka's connector does."""
        return [dict(self._props)]

    def exactly_once_support(self, props: Mapping[str, str]) -> ExactlyOnceSupport:
        """Supported when reading a file (its byte offsets say where to resume), not standard input."""
        return ExactlyOnceSupport.SUPPORTED if props.get("file") else ExactlyOnceSupport.UNSUPPORTED

    def alter_offsets(self, props: Mapping[str, str], offsets: Mapping[tuple[tuple[str, Any], ...], Any]) -> bool:
        """Offsets are ``{"filename": <file>}`` -> ``{"position": <non-negative int>}``; nothing is kept elsewhere."""
        for partition, offset in offsets.items():
            if set(dict(partition)) != {"filename"}:
                raise ConnectError(f"Partition must have exactly the key 'filename': {dict(partition)}")
            if offset is not None and not (isinstance(offset.get("position"), int) and offset["position"] >= 0):
                raise ConnectError(f"Offset must have a non-negative integer 'position': {offset}")
        return True

    def stop(self) -> None:
        """Nothing to release."""

    def config(self) -> ConfigDef:
        """The connector's keys."""
        return CONFIG_DEF


class FileStreamSourceTask(SourceTask):
    """Tails the file from the stored byte position."""

    def __init__(self) -> None:
        self._stopped = threading.Event()

    def start(self, props: Mapping[str, str]) -> None:
        """Open the file at the stored position."""
        if not props.get("file"):
            raise ConnectError("FileStreamSourceTask reads only from a file here; 'file' is required")
        self.path = Path(props["file"])
        self.topic = props["topic"]
        self.batch_size = int(props.get("batch.size", "2000"))
        self.partition = {"filename": str(self.path)}
        stored = self.context.offset_storage_reader.offset(self.partition)
        self.position = int(stored["position"]) if stored else 0
        self._missing_reported = False
        task_log.debug("Reading %s from byte %d", self.path, self.position)

    def poll(self) -> list[SourceRecord] | None:
        """New complete lines since the last poll. With none (nothing new, no complete line, no file yet) it
        waits :data:`IDLE_WAIT` before returning None, as Java's task does, unless :meth:`stop` is called."""
        if self._stopped.is_set():
            return None
        records = self._read()
        if not records:
            self._stopped.wait(IDLE_WAIT)
            return None
        return records

    def _read(self) -> list[SourceRecord]:
        if not self.path.exists():
            if not self._missing_reported:
                task_log.warning("File %s does not exist (yet); waiting for it to be created", self.path)
                self._missing_reported = True
            return []
        self._missing_reported = False
        records: list[SourceRecord] = []
        with open(self.path, "rb") as handle:
            handle.seek(self.position)
            for raw in handle:
                if not raw.endswith(b"\n") or len(records) >= self.batch_size:
                    break
                self.position += len(raw)
                line = raw.rstrip(b"\r\n").decode("utf-8")
                records.append(SourceRecord(self.partition, {"position": self.position}, self.topic, None,
                                            None, None, STRING, line))
        return records

    def stop(self) -> None:
        """Stop polling: a poll waiting for data returns at once."""
        self._stopped.set()

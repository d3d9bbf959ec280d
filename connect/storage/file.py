"""Offsets in a local file, for standalone mode (``offset.storage.file.filename``).

Java writes a Java-serialized map that is not portable; ours is a JSON list of
``[key, value]`` pairs holding the same key and value bytes as the offsets topic, as UTF-8 text.
Writes go to a temporary file that is fsynced and renamed, so a crash never leaves a torn file.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from concurrent.futures import Future
from pathlib import Path

import orjson

from connect.api.errors import ConnectError

log = logging.getLogger(__name__)


class FileOffsetStore:
    """Python counterpart of ``FileOffsetBackingStore``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._data: dict[bytes, bytes] = {}
        self._lock = threading.Lock()

    def start(self) -> None:
        """Load the file if it exists."""
        if not self.path.exists():
            return
        try:
            pairs = orjson.loads(self.path.read_bytes())
        except (OSError, orjson.JSONDecodeError) as exc:
            raise ConnectError(f"Cannot read offsets file {self.path}: {exc}") from exc
        self._data = {k.encode(): v.encode() for k, v in pairs}
        log.info("Loaded %s offsets from %s", len(self._data), self.path)

    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        """Stored values of ``keys``."""
        with self._lock:
            return {k: self._data.get(k) for k in keys}

    def set(self, values: Mapping[bytes, bytes | None]) -> Future[None]:
        """Store and persist ``values``."""
        future: Future[None] = Future()
        with self._lock:
            for key, value in values.items():
                if value is None:
                    self._data.pop(key, None)
                else:
                    self._data[key] = value
            try:
                self._save()
            except OSError as exc:
                future.set_exception(ConnectError(f"Cannot write offsets file {self.path}: {exc}"))
                return future
        future.set_result(None)
        return future

    def items(self) -> list[tuple[bytes, bytes]]:
        """Every stored pair."""
        with self._lock:
            return list(self._data.items())

    def stop(self, timeout: float = 10.0) -> None:
        """Nothing to release: every write is already on disk."""

    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(self.path.suffix + ".tmp")
        payload = orjson.dumps([[k.decode(), v.decode()] for k, v in self._data.items()])
        with open(tmp, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.path)

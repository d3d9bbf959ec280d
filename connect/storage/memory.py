"""In-memory stores, for standalone mode (configs and statuses live as long as the process)."""

from __future__ import annotations

from typing import Any

from connect.storage import codec
from connect.storage.base import ConfigStore, StatusStore


class MemoryConfigStore(ConfigStore):
    """Python counterpart of ``MemoryConfigBackingStore``."""

    def __init__(self) -> None:
        super().__init__()
        self._offset = 0

    def _write(self, records: list[tuple[str, dict[str, Any] | None]], *, privileged: bool = True,
               read_back: bool = True) -> None:
        for key, value in records:
            self._apply(key, None if value is None else codec.dumps(value), self._offset)
            self._offset += 1


class MemoryStatusStore(StatusStore):
    """Python counterpart of ``MemoryStatusBackingStore``."""

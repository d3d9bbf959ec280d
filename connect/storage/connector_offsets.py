"""A connector's offsets when it has a topic of its own (``offsets.storage.topic``; Connect's
``ConnectorOffsetBackingStore``): the connector's topic is the primary store, the worker's offsets topic the
secondary one. Reads prefer the primary and fall back to the worker's topic (offsets written before the connector
had a topic of its own); writes go to the primary, then to the worker's topic, kept in sync as Connect keeps it (a
failed secondary write is logged, never fatal).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from concurrent.futures import Future

from connect.storage.base import OffsetStore

log = logging.getLogger(__name__)


class ConnectorOffsetStore:
    """An :class:`OffsetStore` over a connector's own topic (``primary``) and the worker's (``secondary``)."""

    def __init__(self, topic: str, primary: OffsetStore, secondary: OffsetStore) -> None:
        self.topic = topic
        self.primary = primary
        self.secondary = secondary

    def start(self) -> None:
        """Read the connector's topic (the worker's store is already running)."""
        self.primary.start()

    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        """The connector topic's values, the worker topic's where it has none."""
        found = self.primary.get(keys)
        missing = [k for k, v in found.items() if v is None]
        if missing:
            found.update(self.secondary.get(missing))
        return found

    def set(self, values: Mapping[bytes, bytes | None]) -> Future[None]:
        """Write to the connector's topic; once durable there, to the worker's topic too."""
        done = self.primary.set(values)
        done.add_done_callback(lambda f: self.mirror(values) if f.exception() is None else None)
        return done

    def mirror(self, values: Mapping[bytes, bytes | None]) -> None:
        """Copy offsets committed to the connector's topic to the worker's (not waited for)."""
        def logged(copied: Future[None]) -> None:
            if copied.exception() is not None:
                log.warning("Failed to copy offsets to the worker's offsets topic: %s", copied.exception())

        self.secondary.set(dict(values)).add_done_callback(logged)

    def items(self) -> list[tuple[bytes, bytes]]:
        """Every pair, the connector topic's winning."""
        merged = dict(self.secondary.items())
        merged.update(self.primary.items())
        return list(merged.items())

    def refresh(self, timeout: float) -> None:
        """Catch up with both topics."""
        for store in (self.primary, self.secondary):
            refresh = getattr(store, "refresh", None)
            if refresh is not None:
                refresh(timeout)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop reading the connector's topic; the worker's store stays."""
        self.primary.stop(timeout)

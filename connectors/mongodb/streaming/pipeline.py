"""The change stream's aggregation pipeline (``cursor.pipeline``, ``cursor.pipeline.order``,
``cursor.oversize.*``) and the reassembly of split events.

Debezium's internal stages filter operation types and namespaces on the server. Here those filters run in the
task (Debezium's filters are full-match, case-insensitive regexes that a server-side ``$regexMatch`` does not
always reproduce, and a ``$match`` costs SecantusDB about 30 µs per event), so the only internal stage is the
oversize ``skip`` match. User stages (``cursor.pipeline``) are the way to push filtering to the server;
``cursor.pipeline.order`` puts them before or after the internal stages, or alone (``user_only``). With
``split`` the ``$changeStreamSplitLargeEvent`` stage comes last, as the server requires.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect.api.errors import DataError
from connectors.mongodb.capture_config import CaptureOptions, OversizeMode, PipelineOrder


def internal_stages(options: CaptureOptions) -> list[dict[str, Any]]:
    if options.oversize_mode is not OversizeMode.SKIP:
        return []
    limit = options.oversize_threshold
    return [{"$match": {"$and": [
        {"$expr": {"$lte": [{"$bsonSize": "$fullDocument"}, limit]}},
        {"$expr": {"$lte": [{"$bsonSize": "$fullDocumentBeforeChange"}, limit]}},
    ]}}]


def build_pipeline(options: CaptureOptions) -> list[dict[str, Any]]:
    """The whole pipeline, in the configured order."""
    user = [dict(stage) for stage in options.user_pipeline]
    internal = internal_stages(options)
    if options.pipeline_order is PipelineOrder.USER_ONLY:
        stages = user
    elif options.pipeline_order is PipelineOrder.USER_FIRST:
        stages = user + internal
    else:
        stages = internal + user
    if options.oversize_mode is OversizeMode.SPLIT:
        stages.append({"$changeStreamSplitLargeEvent": {}})
    return stages


class FragmentMerger:
    """Joins the fragments of a split event (``splitEvent: {fragment, of}``) back into one event; the joined
    event keeps the last fragment's ``_id`` (the position after the whole event)."""

    def __init__(self) -> None:
        self._parts: dict[str, Any] | None = None
        self._expected = 1

    @property
    def pending(self) -> bool:
        """Whether a split event is half read."""
        return self._parts is not None

    def add(self, event: Mapping[str, Any]) -> dict[str, Any] | None:
        """The whole event once its last fragment arrives; None while fragments are missing."""
        split = event.get("splitEvent")
        if split is None:
            if self._parts is not None:
                raise DataError("Missing event fragment: an unsplit event arrived inside a split one")
            return dict(event)
        fragment, total = int(split["fragment"]), int(split["of"])
        if fragment == 1:
            self._parts, self._expected = {}, 1
        if self._parts is None or fragment != self._expected:
            raise DataError(f"Missing event fragment: got fragment {fragment} of {total}, expected {self._expected}")
        for key, value in event.items():
            if key != "splitEvent":
                self._parts[key] = value
        self._expected += 1
        if fragment < total:
            return None
        whole, self._parts = self._parts, None
        return whole

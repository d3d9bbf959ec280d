"""A ``find`` cursor whose batches are lists of the documents' BSON bytes, cut from the server's reply once by the
compiled module.

pymongo's raw-batch cursor (``find_raw_batches``) decodes every reply into one RawBSONDocument per document (a
Python ``__init__`` each), then joins them into one buffer again, which the snapshot cut into documents once more:
about two thirds of the snapshot reader's time, holding the GIL the task thread needs. This cursor takes the same
replies apart in one compiled call (``_extjson.cursor_reply``): pymongo decodes only the small rest (``ok``, the
cursor's ``id`` and ``ns``, ``$clusterTime``, ``operationTime``, an error), so sessions, cluster times, errors,
``getMore``, ``killCursors`` and server pinning stay pymongo's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import bson
from bson.codec_options import CodecOptions
from pymongo.cursor import RawBatchCursor

from connectors.mongodb import _extjson

__all__ = ["DocumentBatchCursor", "document_batches"]

_REST: CodecOptions[dict[str, Any]] = CodecOptions()


class DocumentBatchCursor(RawBatchCursor[Any]):
    """Iterates over the batches of a ``find``, each a list of its documents' BSON bytes (an empty batch is
    skipped)."""

    def _unpack_response(self, response: Any, cursor_id: int | None, codec_options: Any,
                         user_fields: Mapping[str, Any] | None = None,
                         legacy_response: bool = False) -> list[Any]:
        """The reply as pymongo's cursor reads it, its batch replaced by one item: the list of its documents."""
        raw = response.raw_command_response() if not legacy_response else None
        if raw is None:  # an OP_REPLY (servers before 3.6): pymongo's own way
            return super()._unpack_response(response, cursor_id, codec_options, user_fields, legacy_response)
        rest, docs = _extjson.cursor_reply(raw if type(raw) is bytes else bytes(raw))
        reply = bson.decode(rest, codec_options=_REST)
        cursor = reply.get("cursor")
        if isinstance(cursor, dict):
            for key in ("firstBatch", "nextBatch"):
                if key in cursor:
                    cursor[key] = [docs] if docs else []
        return [reply]


def document_batches(collection: Any, query: Mapping[str, Any], batch_size: int) -> RawBatchCursor[Any]:
    """A cursor over ``collection.find(query)`` in batches of documents' bytes (:class:`DocumentBatchCursor`).
    With auto encryption, pymongo's raw-batch cursor refuses to be made, as before."""
    if collection.database.client._encrypter:
        return collection.find_raw_batches(query, batch_size=batch_size)  # type: ignore[no-any-return]
    return DocumentBatchCursor(collection, query, batch_size=batch_size)

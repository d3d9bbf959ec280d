"""Change streams read as raw BSON: the event's small parts are decoded as before, its document images are not.

``fullDocument`` and ``fullDocumentBeforeChange`` (most of an event's bytes) stay
:class:`~bson.raw_bson.RawBSONDocument`: the compiled writer (:mod:`connectors.mongodb.json_writer`) writes them
from their bytes, so they are never turned into Python objects. Everything else of the event (``_id``, ``ns``,
``documentKey``, ``updateDescription``, ``lsid``, ...) is a ``dict`` as pymongo decodes it with the client's codec
options. What needs an image's fields decodes it where it needs them (:func:`plain`): field excludes/renames, the
signal collection.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import bson
from bson.binary import UuidRepresentation
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
from pymongo import MongoClient
from pymongo.synchronous.change_stream import ClusterChangeStream

from connectors.mongodb import _extjson

__all__ = ["IMAGES", "Decoder", "DocumentKey", "RawEvent", "ResumeToken", "Scanned", "UpdateDescription", "plain",
           "watch_raw"]

IMAGES = frozenset(("fullDocument", "fullDocumentBeforeChange"))
"""The event fields kept as RawBSONDocument."""


_PLAIN: CodecOptions[dict[str, Any]] = CodecOptions(uuid_representation=UuidRepresentation.STANDARD)
"""The connector's clients' decoding (connection.client_options)."""


def plain(doc: Mapping[str, Any] | bytes) -> Mapping[str, Any]:
    """``doc`` decoded into dicts if it is a RawBSONDocument (or a raw batch's document, bytes), as the
    connector's clients decode documents."""
    if isinstance(doc, bytes):
        decoded: dict[str, Any] = bson.decode(doc, codec_options=_PLAIN)
        return decoded
    if type(doc) is RawBSONDocument:
        decoded = bson.decode(doc.raw, codec_options=_PLAIN)
        return decoded
    return doc


_TOKEN: CodecOptions[RawBSONDocument] = CodecOptions(document_class=RawBSONDocument,
                                                    uuid_representation=UuidRepresentation.STANDARD)


class RawEvent(RawBSONDocument):
    """The stream's document class: a RawBSONDocument whose ``_id`` (the resume token pymongo's ChangeStream reads
    from every event) is cut out of the bytes by the compiled module. RawBSONDocument's own item access decodes the
    whole top level in Python first, which cost about 5 us per event."""

    __slots__ = ()

    if {"_RawBSONDocument__raw", "_RawBSONDocument__inflated_doc", "_RawBSONDocument__codec_options"} \
            <= set(vars(RawBSONDocument)):  # the base class's slots, as pymongo 4 names them

        def __init__(self, bson_bytes: bytes, codec_options: CodecOptions[Any] | None = None) -> None:
            """RawBSONDocument's ``__init__`` without its checks (the options' document class, the length that
            pymongo's decoder has just used to cut this event out of its reply): on the reader thread, decoding a
            getMore's 2,000 events cost 1.2 us per event, 0.55 without them. A malformed event still fails where
            it is read (``_extjson``)."""
            if codec_options is None:
                super().__init__(bson_bytes)
                return
            self._RawBSONDocument__raw = bson_bytes
            self._RawBSONDocument__inflated_doc = None
            self._RawBSONDocument__codec_options = codec_options

    def __getitem__(self, item: str) -> Any:
        if item == "_id":
            token = _extjson.embedded(self.raw if type(self.raw) is bytes else bytes(self.raw), "_id")
            if token is not None:
                return RawBSONDocument(token, _TOKEN)
        return super().__getitem__(item)


# a RawBSONDocument's bytes: its slot (read without a Python call) where pymongo names it so, else its property
_RAW_SLOT = "_RawBSONDocument__raw" if "_RawBSONDocument__raw" in vars(RawBSONDocument) else "raw"


class ResumeToken(dict[str, Any]):
    """An event's ``_id`` (its resume token) as the :class:`Decoder` hands it out: the decoded document, carrying
    the BSON bytes it was decoded from (``raw``), whose Base64 is the offset's ``resume_token``
    (:func:`connectors.mongodb.position.encode_resume_token`) without encoding it again for every event."""

    __slots__ = ("raw",)
    raw: bytes


class DocumentKey(dict[str, Any]):
    """An event's ``documentKey`` as the :class:`Decoder` hands it out: the decoded document, carrying the BSON
    bytes it was decoded from (``raw``), from which the record key's ``id`` is written."""

    __slots__ = ("raw",)
    raw: bytes


class UpdateDescription(dict[str, Any]):
    """An event's ``updateDescription`` as the :class:`Decoder` hands it out: the decoded document, carrying the
    BSON bytes it was decoded from (``raw``), from which ``updatedFields`` is written."""

    __slots__ = ("raw",)
    raw: bytes


Scanned = tuple[str, str, str, str, str | None, bytes | None, bytes | None, bytes | None, int, int, int, bytes]
"""A plain data event as ``_extjson.scan_event`` reads it: (op, db, coll, resume token in the offset's Base64, the
record key's ``id`` text or None, fullDocument, fullDocumentBeforeChange, updatedFields, clusterTime seconds and
increment, wallTime milliseconds or 0, the event's BSON)."""


class Decoder:
    """Turns the raw events of one stream into the connector's events (a dict; images left raw); once :meth:`scan`
    is on, :meth:`read` hands out a plain data event as its :data:`Scanned` fields instead."""

    def __init__(self, options: CodecOptions[Any]) -> None:
        self._options: CodecOptions[dict[str, Any]] = options.with_options(document_class=dict)
        self._raw: CodecOptions[RawBSONDocument] = options.with_options(document_class=RawBSONDocument)
        self._scan: bool | None = None

    def scan(self, plus_exponent: bool | None) -> None:
        """From now on hand out plain data events read by ``_extjson.scan_event`` (``plus_exponent``: the record
        key's doubles with ``E+``); None turns it off."""
        self._scan = plus_exponent

    def plain_run(self, events: list[Any], start: int) -> list[bytes]:
        """With :meth:`scan` on, the bytes of the raw events of ``events`` from ``start`` on that are plain data
        events (``_extjson.scan_event`` reads them), up to the first that is not; else none. The task makes their
        records from those bytes, a run at a time (``_extjson.StreamRows``)."""
        if self._scan is None:
            return []
        return _extjson.plain_events(events, start, _RAW_SLOT)

    def read(self, raw: Mapping[str, Any]) -> dict[str, Any] | Scanned:
        """:meth:`event`, or with :meth:`scan` on, a plain data event read in one pass instead."""
        if self._scan is not None and isinstance(raw, RawBSONDocument):
            data = raw.raw
            scanned: Scanned | None = _extjson.scan_event(data if type(data) is bytes else bytes(data), self._scan)
            if scanned is not None:
                return scanned
        return self.event(raw)

    def event(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """The event ``raw`` with every field but the images decoded (the images are cut out of its bytes by the
        compiled module, so pymongo decodes only the small rest, in C)."""
        if not isinstance(raw, RawBSONDocument):
            return dict(raw)
        data = raw.raw
        return self.decode(data if type(data) is bytes else bytes(data))

    def decode(self, data: bytes) -> dict[str, Any]:
        """The event whose BSON is ``data``, decoded (images left raw)."""
        rest, full, before, token, key = _extjson.split_event(data)
        event: dict[str, Any] = bson.decode(rest, codec_options=self._options)
        if token is not None:
            _keep_raw(event, "_id", ResumeToken, token)
        if key is not None:
            _keep_raw(event, "documentKey", DocumentKey, key)
        if "updateDescription" in event:
            description = _extjson.embedded(rest, "updateDescription")
            if description is not None:
                _keep_raw(event, "updateDescription", UpdateDescription, description)
        if full is not None:
            event["fullDocument"] = RawBSONDocument(full, self._raw)
        if before is not None:
            event["fullDocumentBeforeChange"] = RawBSONDocument(before, self._raw)
        return event

    def token(self, token: Any) -> Any:
        """A resume token as a dict (the stream hands out RawBSONDocuments)."""
        if isinstance(token, RawBSONDocument):
            return bson.decode(token.raw, codec_options=self._options)
        return token


def _keep_raw(event: dict[str, Any], name: str,
              kind: type[ResumeToken] | type[DocumentKey] | type[UpdateDescription], raw: bytes) -> None:
    """``event[name]``, the embedded document decoded from ``raw``, made a ``kind`` holding those bytes."""
    decoded = event.get(name)
    if type(decoded) is dict:
        kept = kind(decoded)
        kept.raw = raw
        event[name] = kept


_STREAM_OPTIONS = frozenset(("full_document", "resume_after", "max_await_time_ms", "batch_size",
                             "start_at_operation_time", "start_after", "full_document_before_change"))


def watch_raw(target: Any, pipeline: list[dict[str, Any]], **options: Any) -> tuple[Any, Decoder]:
    """``target.watch(pipeline, **options)`` returning RawBSONDocument events, and their decoder.

    A collection or database is re-read with ``document_class=RawBSONDocument``; for a client (``capture.scope``
    deployment) the cluster-wide stream is built as ``MongoClient.watch`` builds it, on an ``admin`` database
    with those codec options (a client's codec options cannot be changed after it is made).
    """
    unknown = set(options) - _STREAM_OPTIONS
    if unknown:
        raise ValueError(f"watch options not passed on by watch_raw: {sorted(unknown)}")
    raw_options = target.codec_options.with_options(document_class=RawEvent)
    decoder = Decoder(target.codec_options)
    if not isinstance(target, MongoClient):
        return target.with_options(codec_options=raw_options).watch(pipeline, **options), decoder
    stream: ClusterChangeStream[Any] = ClusterChangeStream(
        target.admin.with_options(codec_options=raw_options),
        pipeline,
        options.get("full_document"),
        options.get("resume_after"),
        options.get("max_await_time_ms"),
        options.get("batch_size"),
        None,  # collation
        options.get("start_at_operation_time"),
        None,  # session
        options.get("start_after"),
        None,  # comment
        options.get("full_document_before_change"),
    )
    stream._initialize_cursor()
    return stream, decoder

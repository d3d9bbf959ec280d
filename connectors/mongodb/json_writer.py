"""The connector's Extended JSON writer: the compiled ``_extjson`` extension (Rust, ``native/``) over raw BSON.

It writes the same bytes as the pure-Python :mod:`connectors.mongodb.extjson` (Debezium 3.x / the Java driver's
JsonWriter), which stays as the reference the tests compare it with. A document that arrives as a
:class:`~bson.raw_bson.RawBSONDocument` (the change stream's ``fullDocument``/``fullDocumentBeforeChange``, see
:mod:`connectors.mongodb.streaming.fetcher`) is written from its bytes without being decoded; a decoded document
is first encoded by pymongo's C encoder, which is still several times cheaper than walking it in Python.

The extension is built by ``pip install`` (``[[tool.setuptools-rust.ext-modules]]`` in pyproject.toml); without it
the connector does not start: importing this module raises an ImportError that says how to build it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import bson
from bson.binary import UuidRepresentation
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument

try:
    from connectors.mongodb import _extjson
except ImportError as exc:  # pragma: no cover - a broken install
    raise ImportError(
        "connectors.mongodb._extjson, the compiled Extended JSON writer of the MongoDB connector, is not built: "
        "install the project with pip (`make venv` or `pip install -e .`), which builds native/ with cargo "
        "(needs a Rust toolchain)") from exc

__all__ = ["ENCODE_OPTIONS", "raw_bson", "relaxed", "relaxed_id", "relaxed_id_bytes", "relaxed_key", "strict",
           "strict_quoted"]

ENCODE_OPTIONS: CodecOptions[Any] = CodecOptions(uuid_representation=UuidRepresentation.STANDARD)
"""How decoded values are encoded back to BSON: as the connector's clients decode them (UUIDs as subtype 4)."""


def raw_bson(doc: Mapping[str, Any] | bytes) -> bytes:
    """The BSON bytes of ``doc``: ``doc`` itself when bytes (a document of a raw batch), those of a
    RawBSONDocument, else pymongo's encoding of it."""
    if isinstance(doc, bytes):
        return doc
    if type(doc) is RawBSONDocument:
        raw = doc.raw
        return raw if type(raw) is bytes else bytes(raw)
    return bson.encode(doc, codec_options=ENCODE_OPTIONS)


def strict(doc: Mapping[str, Any] | bytes, plus_exponent: bool = False) -> str:
    """Extended JSON v1 STRICT, Debezium compact style (``after``/``before``/``lsid``). ``plus_exponent``: doubles
    as the MongoDB Java driver 5.9 writes them, ``1.0E+300`` (Debezium 3.6.3), not ``1.0E300`` (3.6.1)."""
    return _extjson.strict(raw_bson(doc), plus_exponent)


def strict_quoted(doc: Mapping[str, Any] | bytes, plus_exponent: bool = False) -> bytes:
    """:func:`strict` as a JSON string literal, quoted and escaped as Jackson writes it (JsonConverter's bytes)."""
    return _extjson.strict_quoted(raw_bson(doc), plus_exponent)


def relaxed(doc: Mapping[str, Any], plus_exponent: bool = False) -> str:
    """Extended JSON v2 RELAXED with the driver's default layout (``updateDescription.updatedFields``)."""
    return _extjson.relaxed(raw_bson(doc), plus_exponent)


def relaxed_key(value: Any, plus_exponent: bool = False) -> str:
    """One value (the document ``_id``) as v2 RELAXED, Debezium compact style (the key ``id``)."""
    return _extjson.relaxed_key(bson.encode({"_": value}, codec_options=ENCODE_OPTIONS), plus_exponent)


def relaxed_id(doc: Mapping[str, Any] | bytes, plus_exponent: bool = False) -> str:
    """:func:`relaxed_key` of ``doc``'s ``_id`` (``null`` without one), read from the bytes of a RawBSONDocument
    (or of a raw batch's document)."""
    if isinstance(doc, bytes):
        return _extjson.relaxed_id(doc, plus_exponent) or "null"
    if type(doc) is RawBSONDocument:
        return _extjson.relaxed_id(raw_bson(doc), plus_exponent) or "null"
    return relaxed_key(doc.get("_id"), plus_exponent)


def relaxed_id_bytes(raw: bytes, plus_exponent: bool = False) -> str:
    """:func:`relaxed_id` of the document whose BSON is ``raw``."""
    return _extjson.relaxed_id(raw, plus_exponent) or "null"

"""The few Java serialization streams Debezium keeps in an incremental snapshot's offsets.

Debezium stores the last key sent and the largest key of the collection as the hex of a Java-serialized
``Object[]`` holding the document's ``_id`` (``ObjectOutputStream.writeObject``, see the Java Object
Serialization Specification, chapter 6, "Object Serialization Stream Protocol"). Its MongoDB connector puts there
an ``Integer``, ``Long``, ``Double``, ``String``, ``ObjectId`` (written through its ``SerializationProxy``),
``Decimal128`` or ``UUID`` (from a binary of subtype 4); we write all seven byte for byte as Java does and read any
stream of plain serializable objects, strings and primitive arrays (enough for all of them). An ``_id`` of another
type has no form here: :func:`dumps` raises :class:`Unrepresentable` and the caller keeps the position in its own
key.
"""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass, field
from typing import Any

from bson import Binary, Decimal128, Int64, ObjectId
from bson.binary import UUID_SUBTYPE

_MAGIC = b"\xac\xed\x00\x05"
_NULL, _REFERENCE, _CLASSDESC, _OBJECT, _STRING, _ARRAY = 0x70, 0x71, 0x72, 0x73, 0x74, 0x75
_END, _LONGSTRING, _BLOCKDATA = 0x78, 0x7C, 0x77
_BASE_HANDLE = 0x7E0000
_SERIALIZABLE, _WRITE_METHOD = 0x02, 0x01
_PRIMITIVES = {"B": ">b", "C": ">H", "D": ">d", "F": ">f", "I": ">i", "J": ">q", "S": ">h", "Z": ">?"}


class Unrepresentable(ValueError):
    """A value Debezium's offsets cannot hold (or a stream we cannot read)."""


# -- writing -----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Class:
    name: str
    suid: int
    fields: tuple[tuple[str, str, str | None], ...] = ()  # (type code, name, class name of an object field)
    parent: _Class | None = None


_NUMBER = _Class("java.lang.Number", -0x7953_6AE2_F46B_1F75)
_INTEGER = _Class("java.lang.Integer", 0x12E2_A0A4_F781_8738, (("I", "value", None),), _NUMBER)
_LONG = _Class("java.lang.Long", 0x3B8B_E490_CC8F_23DF, (("J", "value", None),), _NUMBER)
_DOUBLE = _Class("java.lang.Double", -0x7F4C_3DB5_D694_04FC, (("D", "value", None),), _NUMBER)
_OBJECT_ARRAY = _Class("[Ljava.lang.Object;", -0x6F31_A760_EF8C_D694)
_BYTE_ARRAY = _Class("[B", -0x530C_E807_F9F7_AB20)
_OBJECT_ID = _Class("org.bson.types.ObjectId$SerializationProxy", 1, (("[", "bytes", "[B"),))
# the two longs of each, primitive fields sorted by name as the stream protocol orders them (serialVersionUIDs as
# in the streams Debezium wrote, tests/unit/mongodb/data/debezium_incremental_offsets.jsonl)
_DECIMAL128 = _Class("org.bson.types.Decimal128", 0x3F6F_5BF7_C3C1_9B7F, (("J", "high", None), ("J", "low", None)),
                     _NUMBER)
_UUID = _Class("java.util.UUID", -0x4366_FC08_6792_7AD1, (("J", "leastSigBits", None), ("J", "mostSigBits", None)))


def _utf(text: str) -> bytes:
    """Java's modified UTF-8 (NUL as two bytes, characters beyond the BMP as two surrogates)."""
    out = bytearray()
    for char in _utf16_units(text):
        if 0 < char < 0x80:
            out.append(char)
        elif char < 0x800:
            out += bytes((0xC0 | char >> 6, 0x80 | char & 0x3F))
        else:
            out += bytes((0xE0 | char >> 12, 0x80 | char >> 6 & 0x3F, 0x80 | char & 0x3F))
    return bytes(out)


def _utf16_units(text: str) -> list[int]:
    raw = text.encode("utf-16-be", "surrogatepass")
    return [raw[i] << 8 | raw[i + 1] for i in range(0, len(raw), 2)]


def _string(text: str) -> bytes:
    data = _utf(text)
    if len(data) <= 0xFFFF:
        return bytes((_STRING,)) + struct.pack(">H", len(data)) + data
    return bytes((_LONGSTRING,)) + struct.pack(">Q", len(data)) + data


def _class_desc(cls: _Class | None) -> bytes:
    if cls is None:
        return bytes((_NULL,))
    name = _utf(cls.name)
    out = bytearray((_CLASSDESC,)) + struct.pack(">H", len(name)) + name
    out += struct.pack(">qBH", cls.suid, _SERIALIZABLE, len(cls.fields))
    for code, fname, type_name in cls.fields:
        encoded = _utf(fname)
        out += code.encode() + struct.pack(">H", len(encoded)) + encoded
        if type_name is not None:
            out += _string(type_name)
    return bytes(out + bytes((_END,)) + _class_desc(cls.parent))


def _object(cls: _Class, *values: bytes) -> bytes:
    return bytes((_OBJECT,)) + _class_desc(cls) + b"".join(values)


def _element(value: Any) -> bytes:
    if value is None:
        return bytes((_NULL,))
    if isinstance(value, bool):
        raise Unrepresentable("a boolean _id")
    if isinstance(value, Int64):
        return _object(_LONG, struct.pack(">q", value))
    if isinstance(value, int):
        if not -(2**31) <= value < 2**31:
            return _object(_LONG, struct.pack(">q", value))
        return _object(_INTEGER, struct.pack(">i", value))
    if isinstance(value, float):
        return _object(_DOUBLE, struct.pack(">d", value))
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, ObjectId):
        array = bytes((_ARRAY,)) + _class_desc(_BYTE_ARRAY) + struct.pack(">i", 12) + value.binary
        return _object(_OBJECT_ID, array)
    if isinstance(value, Decimal128):
        low, high = struct.unpack("<qq", value.bid)  # the BID form: the low 64 bits first, little-endian
        return _object(_DECIMAL128, struct.pack(">qq", high, low))
    if isinstance(value, Binary) and value.subtype == UUID_SUBTYPE and len(value) == 16:
        value = value.as_uuid()
    if isinstance(value, uuid.UUID):
        most, least = struct.unpack(">qq", value.bytes)
        return _object(_UUID, struct.pack(">qq", least, most))
    raise Unrepresentable(f"an _id of type {type(value).__name__}")


def dumps(values: list[Any] | None) -> str:
    """The hex of ``values`` Java-serialized as an ``Object[]`` (of a null array when None)."""
    if values is None:
        return (_MAGIC + bytes((_NULL,))).hex()
    body = b"".join(_element(v) for v in values)
    return (_MAGIC + bytes((_ARRAY,)) + _class_desc(_OBJECT_ARRAY) + struct.pack(">i", len(values)) + body).hex()


# -- reading -----------------------------------------------------------------------------------------------------
@dataclass
class _Desc:
    name: str
    flags: int
    fields: list[tuple[str, str]]
    parent: _Desc | None


@dataclass
class _Instance:
    cls: str
    values: dict[str, Any] = field(default_factory=dict)


class _Reader:
    def __init__(self, data: bytes) -> None:
        self._data, self._pos = data, 0
        self._handles: list[Any] = []

    def take(self, size: int) -> bytes:
        if self._pos + size > len(self._data):
            raise Unrepresentable("the serialized value ends early")
        chunk = self._data[self._pos:self._pos + size]
        self._pos += size
        return chunk

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def utf(self, size_fmt: str = ">H") -> str:
        raw = self.take(self.unpack(size_fmt))
        return raw.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass") \
            .encode("utf-16", "surrogatepass").decode("utf-16")

    def handle(self, value: Any) -> int:
        self._handles.append(value)
        return len(self._handles) - 1

    def content(self) -> Any:
        tag = self.unpack(">B")
        if tag == _NULL:
            return None
        if tag == _REFERENCE:
            index = self.unpack(">i") - _BASE_HANDLE
            if not 0 <= index < len(self._handles):
                raise Unrepresentable("a serialized back-reference to nothing")
            return self._handles[index]
        if tag in (_STRING, _LONGSTRING):
            text = self.utf(">H" if tag == _STRING else ">Q")
            self.handle(text)
            return text
        if tag == _CLASSDESC:
            return self.class_desc_body()
        if tag == _ARRAY:
            return self.array()
        if tag == _OBJECT:
            return self.instance()
        raise Unrepresentable(f"serialized content tag {tag:#x} is not supported")

    def class_desc(self) -> _Desc | None:
        desc = self.content()
        if desc is not None and not isinstance(desc, _Desc):
            raise Unrepresentable("a class description was expected")
        return desc

    def class_desc_body(self) -> _Desc:
        name = self.utf()
        self.take(8)  # serialVersionUID
        desc = _Desc(name, 0, [], None)
        self.handle(desc)
        desc.flags = self.unpack(">B")
        for _ in range(self.unpack(">H")):
            code = chr(self.unpack(">B"))
            fname = self.utf()
            if code in "L[":
                self.content()
            desc.fields.append((code, fname))
        self.skip_annotation()
        desc.parent = self.class_desc()
        return desc

    def skip_annotation(self) -> None:
        while True:
            tag = self._data[self._pos] if self._pos < len(self._data) else None
            if tag == _END:
                self._pos += 1
                return
            if tag == _BLOCKDATA:
                self._pos += 1
                self.take(self.unpack(">B"))
            else:
                self.content()

    def array(self) -> list[Any] | bytes:
        desc = self.class_desc()
        if desc is None:
            raise Unrepresentable("an array without a class")
        index = self.handle(None)
        size = self.unpack(">i")
        code = desc.name[1:2]
        value: list[Any] | bytes
        if code == "B":
            value = self.take(size)
        elif code in _PRIMITIVES:
            value = [self.unpack(_PRIMITIVES[code]) for _ in range(size)]
        else:
            value = [self.content() for _ in range(size)]
        self._handles[index] = value
        return value

    def instance(self) -> _Instance:
        desc = self.class_desc()
        if desc is None:
            raise Unrepresentable("an object without a class")
        result = _Instance(desc.name)
        self.handle(result)
        chain = []
        while desc is not None:
            chain.append(desc)
            desc = desc.parent
        for cls in reversed(chain):
            for code, fname in cls.fields:
                result.values[fname] = self.content() if code in "L[" else self.unpack(_PRIMITIVES[code])
            if cls.flags & _WRITE_METHOD:
                self.skip_annotation()
        return result


_READERS: dict[str, Any] = {  # class name -> the BSON value of its serialized fields
    _INTEGER.name: lambda f: int(f["value"]),
    _LONG.name: lambda f: Int64(f["value"]),
    _DOUBLE.name: lambda f: float(f["value"]),
    _OBJECT_ID.name: lambda f: ObjectId(bytes(f["bytes"])),
    _DECIMAL128.name: lambda f: Decimal128.from_bid(struct.pack("<qq", f["low"], f["high"])),
    _UUID.name: lambda f: uuid.UUID(bytes=struct.pack(">qq", f["mostSigBits"], f["leastSigBits"])),
}


def _to_bson(value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value
    if not isinstance(value, _Instance):
        raise Unrepresentable(f"a serialized {type(value).__name__} is not supported")
    reader = _READERS.get(value.cls)
    if reader is None:
        raise Unrepresentable(f"a serialized {value.cls} is not supported")
    try:
        return reader(value.values)
    except (KeyError, TypeError, ValueError, struct.error) as exc:
        raise Unrepresentable(f"a serialized {value.cls} without its fields ({exc!r})") from exc


def loads(text: str) -> list[Any] | None:
    """The values of a hex Java-serialized ``Object[]`` (None for a serialized null)."""
    try:
        data = bytes.fromhex(text)
    except ValueError as exc:
        raise Unrepresentable(f"not hexadecimal: {exc}") from exc
    if not data.startswith(_MAGIC):
        raise Unrepresentable("not a Java serialization stream")
    reader = _Reader(data[len(_MAGIC):])
    value = reader.content()
    if value is None:
        return None
    if not isinstance(value, list):
        raise Unrepresentable("an Object[] was expected")
    return [_to_bson(v) for v in value]

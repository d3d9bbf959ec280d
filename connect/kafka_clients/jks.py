"""Java's own ``JKS`` keystore format, read in memory: trusted certificates and private keys protected with Sun's
``KeyProtector`` (the only key protection ``keytool`` writes to a JKS store).

Hand-written rather than a dependency: the one PyPI reader (pyjks) pulls in a C extension (twofish) that has no
wheels, so the worker image's build stage (no compiler) could not install it; the format is ~100 lines.

Layout: magic ``FEEDFEED``, version, entry count, entries (tag 1 private key: alias, date, protected key, chain;
tag 2 trusted certificate: alias, date, certificate), then SHA-1 over the password (UTF-16BE),
``"Mighty Aphrodite"`` and everything before it.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from dataclasses import dataclass, field

MAGIC = 0xFEEDFEED
JCEKS_MAGIC = 0xCECECECE
_KEY_PROTECTOR_OID = bytes.fromhex("2b060104012a021101 01".replace(" ", ""))  # 1.3.6.1.4.1.42.2.17.1.1


class KeystoreError(ValueError):
    """A JKS store that cannot be read (never carries a password)."""


@dataclass
class JksStore:
    """The entries of a JKS store: DER certificates by alias, and (PKCS#8 DER key, DER chain) by alias."""

    certificates: dict[str, bytes] = field(default_factory=dict)
    private_keys: dict[str, tuple[bytes, list[bytes]]] = field(default_factory=dict)


def is_jks(data: bytes) -> bool:
    return len(data) >= 4 and struct.unpack(">I", data[:4])[0] == MAGIC


def _password_bytes(password: str) -> bytes:
    return password.encode("utf-16-be")


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise KeystoreError("truncated JKS keystore")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def u16(self) -> int:
        return int(struct.unpack(">H", self.take(2))[0])

    def u32(self) -> int:
        return int(struct.unpack(">I", self.take(4))[0])

    def utf(self) -> str:
        return self.take(self.u16()).decode("utf-8", errors="replace")  # Java's modified UTF-8, close enough

    def cert(self, version: int) -> bytes:
        if version == 2:
            kind = self.utf()
            if kind != "X.509":
                raise KeystoreError(f"unsupported certificate type {kind} in JKS keystore")
        return self.take(self.u32())


def load(data: bytes, store_password: str | None, key_password: str | None = None) -> JksStore:
    """Read a JKS store; the integrity check runs when ``store_password`` is given (as Java does);
    private keys need ``key_password`` (default: the store password)."""
    if len(data) >= 4 and struct.unpack(">I", data[:4])[0] == JCEKS_MAGIC:
        raise KeystoreError("JCEKS keystores are not supported; convert it to PKCS12 with keytool -importkeystore")
    if not is_jks(data):
        raise KeystoreError("not a JKS keystore")
    if len(data) < 32:
        raise KeystoreError("truncated JKS keystore")
    body, digest = data[:-20], data[-20:]
    if store_password is not None:
        expected = hashlib.sha1(_password_bytes(store_password) + b"Mighty Aphrodite" + body).digest()
        if not hmac.compare_digest(expected, digest):
            raise KeystoreError("Keystore was tampered with, or password was incorrect")
    reader = _Reader(body)
    reader.take(4)
    version = reader.u32()
    if version not in (1, 2):
        raise KeystoreError(f"unsupported JKS version {version}")
    store = JksStore()
    for _ in range(reader.u32()):
        tag = reader.u32()
        alias = reader.utf()
        reader.take(8)  # creation date
        if tag == 1:
            protected = reader.take(reader.u32())
            chain = [reader.cert(version) for _ in range(reader.u32())]
            password = key_password if key_password is not None else store_password
            if password is None:
                raise KeystoreError(f"the private key {alias} needs a password")
            store.private_keys[alias] = (_recover_key(protected, password), chain)
        elif tag == 2:
            store.certificates[alias] = reader.cert(version)
        else:
            raise KeystoreError(f"unsupported JKS entry type {tag}")
    return store


def _der_item(data: bytes, pos: int) -> tuple[int, int, int]:
    """(tag, start of content, end of content) of the DER item at ``pos``."""
    if pos + 2 > len(data):
        raise KeystoreError("malformed protected key")
    tag, length = data[pos], data[pos + 1]
    pos += 2
    if length & 0x80:
        count = length & 0x7F
        length = int.from_bytes(data[pos:pos + count], "big")
        pos += count
    if pos + length > len(data):
        raise KeystoreError("malformed protected key")
    return tag, pos, pos + length


def _recover_key(encrypted_info: bytes, password: str) -> bytes:
    """Sun's ``KeyProtector.recover``: the PKCS#8 DER of a protected private key."""
    tag, start, _end = _der_item(encrypted_info, 0)  # EncryptedPrivateKeyInfo
    if tag != 0x30:
        raise KeystoreError("malformed protected key")
    tag, alg_start, alg_end = _der_item(encrypted_info, start)  # AlgorithmIdentifier
    oid_tag, oid_start, oid_end = _der_item(encrypted_info, alg_start)
    if tag != 0x30 or oid_tag != 0x06 or encrypted_info[oid_start:oid_end] != _KEY_PROTECTOR_OID:
        raise KeystoreError("unsupported private key protection in JKS keystore (not Sun's KeyProtector)")
    tag, data_start, data_end = _der_item(encrypted_info, alg_end)
    if tag != 0x04:
        raise KeystoreError("malformed protected key")
    protected = encrypted_info[data_start:data_end]
    salt, encrypted, check = protected[:20], protected[20:-20], protected[-20:]
    secret = _password_bytes(password)
    stream, digest = bytearray(), salt
    while len(stream) < len(encrypted):
        digest = hashlib.sha1(secret + digest).digest()
        stream += digest
    plain = bytes(a ^ b for a, b in zip(encrypted, stream, strict=False))
    if not hmac.compare_digest(hashlib.sha1(secret + plain).digest(), check):
        raise KeystoreError("Cannot recover key: the key password is incorrect")
    return plain

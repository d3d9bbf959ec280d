"""Java's ``ssl.*`` client settings as an :class:`ssl.SSLContext`, built in memory: trust and key stores of type
JKS, PKCS12 or PEM (``ssl.truststore.location``, ``ssl.truststore.certificates``, ``ssl.keystore.location``,
``ssl.keystore.certificate.chain`` + ``ssl.keystore.key``), ``ssl.key.password``,
``ssl.endpoint.identification.algorithm`` (empty: no host name check, as Java) and ``ssl.enabled.protocols``.

Errors name the setting and the problem, never a password or a key.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import ssl
import tempfile
from collections.abc import Iterator, Mapping
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

from connect.api.errors import ConfigError
from connect.kafka_clients import jks

_TLS_VERSIONS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3,
                 "TLSv1.1": ssl.TLSVersion.TLSv1_1, "TLSv1": ssl.TLSVersion.TLSv1}
STORE_TYPES = ("JKS", "PKCS12", "PEM")


def _setting(settings: Mapping[str, Any], key: str) -> str | None:
    value = settings.get(key)
    return None if value is None or str(value) == "" else str(value)


def _read(key: str, path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise ConfigError(key, path, f"cannot read the store: {exc.strerror or exc}") from exc


def _store_type(settings: Mapping[str, Any], key: str) -> str:
    kind = (_setting(settings, key) or "JKS").upper()
    if kind not in STORE_TYPES:
        raise ConfigError(key, kind, f"supported store types are {', '.join(STORE_TYPES)}")
    return kind


def _pem_certificates(key: str, data: bytes) -> list[x509.Certificate]:
    try:
        certs = x509.load_pem_x509_certificates(data)
    except ValueError as exc:
        raise ConfigError(key, None, f"no readable PEM certificate: {exc}") from exc
    return certs


def _binary_store(key: str, data: bytes, password: str | None, key_password: str | None
                  ) -> tuple[Any, list[x509.Certificate], list[x509.Certificate]]:
    """(private key or None, its chain, the other certificates) of a JKS or PKCS12 store (Java reads either
    whatever ``type`` says, telling them apart by their first bytes)."""
    if jks.is_jks(data) or data[:4] == b"\xce\xce\xce\xce":
        try:
            store = jks.load(data, password, key_password)
        except jks.KeystoreError as exc:
            raise ConfigError(key, None, f"cannot read the JKS store: {exc}") from exc
        trusted = [x509.load_der_x509_certificate(der) for der in store.certificates.values()]
        if not store.private_keys:
            return None, [], trusted
        der_key, der_chain = next(iter(store.private_keys.values()))
        private = serialization.load_der_private_key(der_key, None)
        return private, [x509.load_der_x509_certificate(c) for c in der_chain], trusted
    try:
        loaded = pkcs12.load_pkcs12(data, password.encode() if password is not None else None)
    except ValueError as exc:
        raise ConfigError(key, None, "cannot read the PKCS12 store: wrong password or not a PKCS12/JKS "
                                     "file") from exc
    others = [c.certificate for c in loaded.additional_certs]
    if loaded.key is None:
        return None, [], ([loaded.cert.certificate] if loaded.cert else []) + others
    chain = ([loaded.cert.certificate] if loaded.cert else []) + others
    return loaded.key, chain, []


def trusted_certificates(settings: Mapping[str, Any]) -> list[x509.Certificate] | None:
    """The CA certificates to trust; None for the system's defaults (no truststore given, as Java's JVM
    default)."""
    inline = _setting(settings, "ssl.truststore.certificates")
    location = _setting(settings, "ssl.truststore.location")
    kind = _store_type(settings, "ssl.truststore.type")
    if inline is not None:
        if kind != "PEM":
            raise ConfigError("ssl.truststore.certificates", None, "needs ssl.truststore.type=PEM")
        if location is not None:
            raise ConfigError("ssl.truststore.certificates", None, "set either it or ssl.truststore.location")
        return _pem_certificates("ssl.truststore.certificates", inline.encode())
    if location is None:
        return None
    data = _read("ssl.truststore.location", location)
    if kind == "PEM":
        return _pem_certificates("ssl.truststore.location", data)
    _key, chain, trusted = _binary_store("ssl.truststore.location", data,
                                         _setting(settings, "ssl.truststore.password"), None)
    certs = trusted + chain
    if not certs:
        raise ConfigError("ssl.truststore.location", location, "the truststore holds no certificate")
    return certs


def _pem_key(key: str, data: bytes, password: str | None) -> Any:
    try:
        return serialization.load_pem_private_key(data, password.encode() if password is not None else None)
    except (ValueError, TypeError) as exc:
        raise ConfigError(key, None, "cannot read the private key: it needs ssl.key.password, or the password "
                                     "is wrong") from exc


def key_material(settings: Mapping[str, Any]) -> tuple[Any, list[x509.Certificate]] | None:
    """The client's private key and certificate chain, or None when no keystore is configured."""
    kind = _store_type(settings, "ssl.keystore.type")
    location = _setting(settings, "ssl.keystore.location")
    inline_key = _setting(settings, "ssl.keystore.key")
    inline_chain = _setting(settings, "ssl.keystore.certificate.chain")
    key_password = _setting(settings, "ssl.key.password")
    if inline_key is not None or inline_chain is not None:
        if kind != "PEM":
            raise ConfigError("ssl.keystore.key", None, "inline keys need ssl.keystore.type=PEM")
        if inline_key is None or inline_chain is None:
            raise ConfigError("ssl.keystore.key", None,
                              "set both ssl.keystore.key and ssl.keystore.certificate.chain")
        return (_pem_key("ssl.keystore.key", inline_key.encode(), key_password),
                _pem_certificates("ssl.keystore.certificate.chain", inline_chain.encode()))
    if location is None:
        return None
    data = _read("ssl.keystore.location", location)
    if kind == "PEM":
        return (_pem_key("ssl.keystore.location", data, key_password),
                _pem_certificates("ssl.keystore.location", data))
    private, chain, _trusted = _binary_store("ssl.keystore.location", data,
                                             _setting(settings, "ssl.keystore.password"), key_password)
    if private is None:
        raise ConfigError("ssl.keystore.location", location, "the keystore holds no private key")
    return private, chain


@contextlib.contextmanager
def _memory_file(data: bytes) -> Iterator[str]:
    """A path to ``data`` that never reaches a disk where possible (a memfd), else a private temporary file
    deleted at once: ``SSLContext.load_cert_chain`` reads files only."""
    if hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd"):
        fd = os.memfd_create("kafka-client-key", 0)
        try:
            os.write(fd, data)
            yield f"/proc/self/fd/{fd}"
        finally:
            os.close(fd)
        return
    with tempfile.NamedTemporaryFile(prefix="kafka-client-", suffix=".pem") as f:
        f.write(data)
        f.flush()
        yield f.name


_kept_open: list[int] = []


def lasting_memory_file(data: bytes) -> str:
    """A path to ``data`` for the life of the process, for readers that want a file (uvicorn's certificate):
    a memfd where possible, else a private temporary file."""
    if hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd"):
        fd = os.memfd_create("rest-tls", 0)
        os.write(fd, data)
        _kept_open.append(fd)
        return f"/proc/self/fd/{fd}"
    handle, path = tempfile.mkstemp(prefix="rest-tls-", suffix=".pem")
    os.write(handle, data)
    os.close(handle)
    return path


def pem_key_and_chain(private: Any, chain: list[x509.Certificate]) -> tuple[bytes, str]:
    """The key (encrypted with a fresh one-time password) and its chain as one PEM, and that password."""
    one_time = secrets.token_urlsafe(24)
    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.BestAvailableEncryption(one_time.encode()))
    return pem + b"".join(c.public_bytes(serialization.Encoding.PEM) for c in chain), one_time


def pem_certificates(certs: list[x509.Certificate]) -> bytes:
    return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certs)


def ssl_context(settings: Mapping[str, Any]) -> ssl.SSLContext:
    """The client-side TLS context Java's ``ssl.*`` settings describe."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    enabled = [p.strip() for p in (_setting(settings, "ssl.enabled.protocols") or "TLSv1.2,TLSv1.3").split(",")
               if p.strip()]
    unknown = [p for p in enabled if p not in _TLS_VERSIONS]
    if unknown or not enabled:
        raise ConfigError("ssl.enabled.protocols", ",".join(enabled), f"supported: {', '.join(_TLS_VERSIONS)}")
    versions = sorted(_TLS_VERSIONS[p] for p in enabled)
    ctx.minimum_version, ctx.maximum_version = versions[0], versions[-1]
    algorithm = _setting(settings, "ssl.endpoint.identification.algorithm")
    algorithm = "https" if "ssl.endpoint.identification.algorithm" not in settings else (algorithm or "")
    if algorithm.lower() not in ("", "https"):
        raise ConfigError("ssl.endpoint.identification.algorithm", algorithm, "supported: https or empty")
    ctx.check_hostname = algorithm.lower() == "https"
    ctx.verify_mode = ssl.CERT_REQUIRED
    trusted = trusted_certificates(settings)
    if trusted is None:
        ctx.load_default_certs()
    else:
        ctx.load_verify_locations(cadata=pem_certificates(trusted).decode())
    material = key_material(settings)
    if material is not None:
        private, chain = material
        if not chain:
            raise ConfigError("ssl.keystore.location", None, "the keystore holds no certificate for its key")
        pem, one_time = pem_key_and_chain(private, chain)
        with _memory_file(pem) as path:
            try:
                ctx.load_cert_chain(path, password=one_time)
            except ssl.SSLError as exc:
                raise ConfigError("ssl.keystore.location", None,
                                  f"the key does not match its certificate: {exc.reason}") from exc
    return ctx

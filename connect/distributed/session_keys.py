"""Request signing between workers under the ``sessioned`` protocol (KIP-507): the leader writes a random key to
the config topic; a worker that sends task configs to the leader signs the body with it, and the leader checks
the signature (``X-Connect-Authorization``, ``X-Connect-Request-Signature-Algorithm``)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import time
from collections.abc import Mapping

from connect.runtime.rest_errors import ConnectRestError
from connect.storage.config_state import SessionKey

ALGORITHM = "HmacSHA256"
SIGNATURE_HEADER = "X-Connect-Authorization"
ALGORITHM_HEADER = "X-Connect-Request-Signature-Algorithm"
_DIGESTS = {"HmacSHA256": hashlib.sha256, "HmacSHA1": hashlib.sha1, "HmacSHA512": hashlib.sha512}


def new_key() -> SessionKey:
    """A fresh 256-bit key (Java's KeyGenerator default for HmacSHA256)."""
    return SessionKey(os.urandom(32), ALGORITHM, time.time_ns() // 1_000_000)


def expired(key: SessionKey | None, ttl_ms: int) -> bool:
    """True when there is no key or it is older than ``inter.worker.key.ttl.ms``."""
    return key is None or key.created_ms + ttl_ms <= time.time_ns() // 1_000_000


def sign(key: SessionKey, body: bytes) -> dict[str, str]:
    """The signature headers of a request body."""
    digest = hmac.new(key.key, body, _DIGESTS.get(key.algorithm, hashlib.sha256)).digest()
    return {SIGNATURE_HEADER: base64.b64encode(digest).decode(), ALGORITHM_HEADER: key.algorithm}


def verify(key: SessionKey | None, body: bytes, headers: Mapping[str, str]) -> None:
    """Connect's checks of an internal request: 400 unsigned, 403 wrong signature, 503 no key read yet."""
    lowered = {k.lower(): v for k, v in headers.items()}
    signature = lowered.get(SIGNATURE_HEADER.lower())
    algorithm = lowered.get(ALGORITHM_HEADER.lower())
    if not signature or not algorithm:
        raise ConnectRestError(400, "Internal request missing required signature")
    if algorithm not in _DIGESTS:
        raise ConnectRestError(400, f"Internal request signature algorithm {algorithm} is not permitted")
    if key is None:
        raise ConnectRestError(503, "This worker is still starting up and has not been able to read a session key "
                                    "from the config topic yet")
    expected = hmac.new(key.key, body, _DIGESTS[algorithm]).digest()
    try:
        given = base64.b64decode(signature, validate=True)
    except ValueError:
        given = b""
    if not hmac.compare_digest(expected, given):
        raise ConnectRestError(403, "Internal request contained invalid signature.")

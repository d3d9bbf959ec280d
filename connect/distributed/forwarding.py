"""Requests from one worker to another: REST calls forwarded to the leader or to the owner of a connector or
task, and the internal ``POST /connectors/{c}/tasks`` of task configs (Connect's ``RestClient``)."""

from __future__ import annotations

import json
import logging
import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import quote

from connect.api.errors import ConnectError
from connect.distributed import session_keys
from connect.kafka_clients import tls
from connect.storage.config_state import SessionKey

log = logging.getLogger(__name__)
TIMEOUT_S = 90.0
_REST_STORE_KEYS = ("type", "location", "password", "certificates")
_tls: ssl.SSLContext | None = None


def client_tls(props: Mapping[str, str]) -> ssl.SSLContext | None:
    """The TLS context for requests to other workers when the REST listener is ``https``, as Connect's
    ``RestClient`` builds it from the listener's settings (``listeners.https.ssl.*`` first, then ``ssl.*``): its
    truststore, its keystore when peers ask for client certificates, ``ssl.endpoint.identification.algorithm``.
    Stores default to PEM, as the listener's do."""
    if not props.get("listeners", "").strip().lower().startswith("https://"):
        return None

    def setting(key: str) -> str | None:
        return props.get(f"listeners.https.{key}") or props.get(key)

    settings: dict[str, str] = {}
    stores = ["truststore"]
    if (setting("ssl.client.auth") or "none").lower() in ("required", "requested"):
        stores.append("keystore")
        if setting("ssl.key.password"):
            settings["ssl.key.password"] = str(setting("ssl.key.password"))
    for store in stores:
        for part in _REST_STORE_KEYS:
            value = setting(f"ssl.{store}.{part}")
            if value:
                settings[f"ssl.{store}.{part}"] = value
        settings.setdefault(f"ssl.{store}.type", "PEM")
    for key in ("ssl.endpoint.identification.algorithm", "ssl.enabled.protocols"):
        value = props.get(f"listeners.https.{key}", props.get(key))
        if value is not None:
            settings[key] = value
    return tls.ssl_context(settings)


def use_tls(props: Mapping[str, str]) -> None:
    """Make worker-to-worker requests over https use the REST listener's trust (see :func:`client_tls`)."""
    global _tls
    _tls = client_tls(props)


@dataclass(frozen=True)
class Reply:
    """What the other worker answered."""

    status: int
    body: bytes
    content_type: str | None
    location: str | None = None


def send(url: str, method: str, body: bytes | None, headers: Mapping[str, str], timeout: float = TIMEOUT_S) -> Reply:
    """One HTTP request; an HTTP error status is a reply, an unreachable worker raises ``OSError``."""
    request = urllib.request.Request(url, data=body, method=method, headers={
        "User-Agent": "kafka-connect", "Accept": "application/json", **headers,
        **({"Content-Type": "application/json"} if body is not None else {})})
    try:
        context = _tls if url.lower().startswith("https:") else None
        with urllib.request.urlopen(request, timeout=timeout, context=context) as response:
            return Reply(response.status, response.read(), response.headers.get("Content-Type"),
                         response.headers.get("Location"))
    except urllib.error.HTTPError as exc:
        return Reply(exc.code, exc.read(), exc.headers.get("Content-Type"))


def join(base_url: str, path: str) -> str:
    """``base_url`` (ending with ``/`` or not) joined with an absolute ``path``."""
    return base_url.rstrip("/") + path


def forward_task_configs(leader_url: str, connector: str, configs: list[dict[str, str]],
                         key: SessionKey | None = None) -> None:
    """Hand task configs to the leader on a separate thread, so the herder's group duties go on; signed with the
    session key under the ``sessioned`` protocol."""
    body = json.dumps(configs, separators=(",", ":")).encode()
    headers = session_keys.sign(key, body) if key is not None else {}

    def post() -> None:
        url = join(leader_url, f"/connectors/{quote(connector, safe='')}/tasks?forward=true")
        try:
            reply = send(url, "POST", body, headers)
        except OSError as exc:
            log.error("[%s] Cannot send task configs to the leader at %s: %s", connector, leader_url, exc)
            return
        if reply.status >= 300:
            log.error("[%s] The leader at %s refused the task configs: %s %s", connector, leader_url, reply.status,
                      reply.body[:500].decode("utf-8", "replace"))
    threading.Thread(target=post, name=f"task-configs-{connector}", daemon=True).start()


def forward_fence(leader_url: str, connector: str, key: SessionKey | None = None) -> None:
    """Ask the leader for a round of zombie fencing (Connect's internal ``PUT /connectors/{c}/fence``), signed with
    the session key; waits for the answer, as an exactly-once task cannot start before it."""
    headers = session_keys.sign(key, b"") if key is not None else {}
    url = join(leader_url, f"/connectors/{quote(connector, safe='')}/fence?forward=true")
    try:
        reply = send(url, "PUT", None, headers)
    except OSError as exc:
        raise ConnectError(f"Forwarding zombie fencing request to the leader at {leader_url} failed: {exc}") from exc
    if reply.status >= 300:
        raise ConnectError(f"The leader at {leader_url} refused the zombie fencing request for connector {connector}: "
                           f"{reply.status} {reply.body[:500].decode('utf-8', 'replace')}")

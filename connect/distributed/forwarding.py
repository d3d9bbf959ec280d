"""Requests from one worker to another: REST calls forwarded to the leader or to the owner of a connector or
task, and the internal ``POST /connectors/{c}/tasks`` of task configs (Connect's ``RestClient``)."""

from __future__ import annotations

import json
import logging
import threading
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import quote

from connect.distributed import session_keys
from connect.storage.config_state import SessionKey

log = logging.getLogger(__name__)
TIMEOUT_S = 90.0


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
        with urllib.request.urlopen(request, timeout=timeout) as response:
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

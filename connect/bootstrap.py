"""Create or update connectors from files, idempotently, through a worker's REST API: what the Helm chart's
post-install/post-upgrade hook runs, and usable by hand::

    python -m connect.bootstrap --url http://pyconnect:8083 /etc/pyconnect/connectors/*.json

Each file holds ``{"name": ..., "config": {...}}`` (the body of ``POST /connectors``) or a bare config object
with a ``name`` key. For every connector the script reads ``GET /connectors/{name}/config``; it sends
``PUT /connectors/{name}/config`` only when the connector is missing or its stored config differs, so a second
run with the same files changes nothing. Placeholders such as ``${file:...}`` are compared and sent as written:
the worker stores them unresolved. Connectors that are not in the files are left alone.

Only the standard library is used, so the script runs in the worker's image with nothing added.
"""

from __future__ import annotations

import argparse
import base64
import json
import logging
import os
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any
from urllib.parse import quote

log = logging.getLogger(__name__)

RETRIABLE = (409, 500, 502, 503, 504)  # 409: rebalance in progress; 5xx: the worker is still starting


class BootstrapError(Exception):
    """A connector file or a worker answer that the bootstrap cannot get past."""


class Action(Enum):
    """What the bootstrap did with one connector."""

    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"


@dataclass(frozen=True)
class ConnectorSpec:
    """One connector to apply: its name and its config as Connect stores it (strings only, ``name`` included)."""

    name: str
    config: dict[str, str]


@dataclass(frozen=True)
class Reply:
    """One HTTP answer: status and parsed JSON body (None when empty or not JSON)."""

    status: int
    body: Any


def _as_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        raise BootstrapError(f"config values must be scalars, not {type(value).__name__}: {value!r}")
    return "" if value is None else str(value)


def load_spec(path: Path) -> ConnectorSpec:
    """A connector file; errors name the file and what is wrong."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BootstrapError(f"{path}: cannot read a JSON connector file: {exc}") from exc
    if not isinstance(data, dict):
        raise BootstrapError(f"{path}: a connector file must hold a JSON object")
    raw = data["config"] if isinstance(data.get("config"), dict) else data
    name = str(data.get("name") or raw.get("name") or "").strip()
    if not name:
        raise BootstrapError(f"{path}: the connector has no 'name'")
    try:
        config = {str(k): _as_string(v) for k, v in raw.items()}
    except BootstrapError as exc:
        raise BootstrapError(f"{path}: {exc}") from exc
    if config.setdefault("name", name) != name:
        raise BootstrapError(f"{path}: config.name ({config['name']}) does not match name ({name})")
    if not config.get("connector.class"):
        raise BootstrapError(f"{path}: connector {name} has no 'connector.class'")
    return ConnectorSpec(name, config)


class RestClient:
    """A small client of the worker's REST API with bounded timeouts and optional basic authentication."""

    def __init__(self, url: str, *, timeout: float = 30.0, user: str | None = None, password: str | None = None):
        self.url = url.rstrip("/")
        self.timeout = timeout
        self._auth = None
        if user is not None:
            token = base64.b64encode(f"{user}:{password or ''}".encode()).decode("ascii")
            self._auth = f"Basic {token}"

    def call(self, method: str, path: str, body: Any = None) -> Reply:
        """One request; HTTP errors are replies, network errors raise ``OSError``."""
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(f"{self.url}{path}", data=data, method=method)
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self._auth:
            request.add_header("Authorization", self._auth)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return Reply(response.status, _json(response.read()))
        except urllib.error.HTTPError as exc:
            return Reply(exc.code, _json(exc.read()))


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


def _message(reply: Reply) -> str:
    if isinstance(reply.body, dict) and reply.body.get("message"):
        return str(reply.body["message"])
    return f"HTTP {reply.status}"


class Bootstrap:
    """Applies connector specs to one worker cluster; every wait is bounded by ``deadline``."""

    def __init__(self, client: RestClient, *, timeout: float = 300.0, stop: threading.Event | None = None):
        self.client = client
        self.deadline = time.monotonic() + timeout
        self.stop = stop or threading.Event()

    def _pause(self, what: str, seconds: float) -> None:
        if time.monotonic() + seconds > self.deadline:
            raise BootstrapError(f"gave up waiting for {what} at {self.client.url}")
        self.stop.wait(seconds)
        if self.stop.is_set():
            raise BootstrapError(f"stopped while waiting for {what}")

    def wait_healthy(self) -> None:
        """Until ``GET /health`` answers 200 (503 means the worker is still starting)."""
        while True:
            try:
                reply = self.client.call("GET", "/health")
            except OSError as exc:
                log.info("Worker %s not reachable yet: %s", self.client.url, exc)
            else:
                if reply.status == 200:
                    return
                log.info("Worker %s not healthy yet: %s", self.client.url, _message(reply))
            self._pause("a healthy worker", 2.0)

    def _request(self, method: str, path: str, body: Any = None) -> Reply:
        """A request retried while the cluster answers with a retriable status or is unreachable."""
        while True:
            try:
                reply = self.client.call(method, path, body)
            except OSError as exc:
                log.warning("%s %s failed, retrying: %s", method, path, exc)
            else:
                if reply.status not in RETRIABLE:
                    return reply
                log.warning("%s %s answered %s, retrying: %s", method, path, reply.status, _message(reply))
            self._pause(f"{method} {path}", 2.0)

    def apply(self, spec: ConnectorSpec) -> Action:
        """Create or update one connector; nothing is sent when its stored config already matches."""
        path = f"/connectors/{quote(spec.name, safe='')}/config"
        current = self._request("GET", path)
        if current.status == 200 and current.body == spec.config:
            log.info("Connector %s is up to date", spec.name)
            return Action.UNCHANGED
        if current.status not in (200, 404):
            raise BootstrapError(f"connector {spec.name}: GET {path} answered {current.status}: {_message(current)}")
        reply = self._request("PUT", path, spec.config)
        if reply.status not in (200, 201):
            raise BootstrapError(f"connector {spec.name}: PUT {path} answered {reply.status}: {_message(reply)}")
        action = Action.CREATED if reply.status == 201 else Action.UPDATED
        log.info("Connector %s %s", spec.name, action.value)
        return action

    def run(self, specs: Sequence[ConnectorSpec], *, wait: bool = True) -> dict[str, Action]:
        """Wait for the worker (optionally), then apply every spec in order."""
        if wait:
            self.wait_healthy()
        return {spec.name: self.apply(spec) for spec in specs}


def connector_files(paths: Sequence[str]) -> list[Path]:
    """The ``*.json`` files named, directories expanded (sorted), so a mounted ConfigMap can be passed whole."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(sorted(p for p in path.iterdir() if p.suffix == ".json" and p.is_file()))
        else:
            files.append(path)
    return files


def _check_unique(specs: Sequence[ConnectorSpec]) -> None:
    seen: dict[str, int] = {}
    for spec in specs:
        seen[spec.name] = seen.get(spec.name, 0) + 1
    duplicates = sorted(name for name, count in seen.items() if count > 1)
    if duplicates:
        raise BootstrapError(f"connectors declared more than once: {', '.join(duplicates)}")


def _password(args: argparse.Namespace, env: Mapping[str, str]) -> str | None:
    if args.password_file:
        try:
            return Path(args.password_file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise BootstrapError(f"cannot read the password file: {exc}") from exc
    return env.get("CONNECT_REST_PASSWORD")


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    """``python -m connect.bootstrap --url URL FILE_OR_DIR...``: 0 when every connector is in place, 1 otherwise."""
    parser = argparse.ArgumentParser(prog="python -m connect.bootstrap", description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", help="connector JSON files, or directories of them")
    parser.add_argument("--url", default="http://localhost:8083", help="the worker's REST URL")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for the worker, in all")
    parser.add_argument("--request-timeout", type=float, default=30.0, help="seconds for one HTTP request")
    parser.add_argument("--no-wait", action="store_true", help="do not wait for GET /health to answer 200")
    parser.add_argument("--user", help="basic-auth user (password from --password-file or CONNECT_REST_PASSWORD)")
    parser.add_argument("--password-file", help="a file holding the basic-auth password")
    args = parser.parse_args(argv)
    from connect.runtime import log_setup  # the worker's log format (and CONNECT_LOG_FORMAT=json) for the hook too

    try:
        log_setup.configure({})
    except ValueError as exc:
        print(f"Invalid logging setting: {exc}", file=sys.stderr)
        return 1
    try:
        specs = [load_spec(path) for path in connector_files(args.paths)]
        _check_unique(specs)
        client = RestClient(args.url, timeout=args.request_timeout, user=args.user,
                            password=_password(args, os.environ if env is None else env))
        results = Bootstrap(client, timeout=args.timeout).run(specs, wait=not args.no_wait)
    except BootstrapError as exc:
        log.error("Connector bootstrap failed: %s", exc)
        return 1
    summary = ", ".join(f"{name}: {action.value}" for name, action in results.items()) or "no connectors"
    log.info("Connector bootstrap done (%s)", summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())

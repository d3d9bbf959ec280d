"""Toxiproxy, a fault-injecting TCP proxy, built from its Go module and driven through its HTTP API.

The server is ``go install``-ed once from the Go module proxy into the git-ignored ``.cache/toxiproxy-<version>/``
(``GOPATH`` and ``GOCACHE`` under ``.cache/`` too, so nothing is left in the home directory). Faults are
*toxics* on a proxy: ``latency``, ``bandwidth``, ``reset_peer``, ``timeout``, or a disabled proxy (connections
refused). See
https://github.com/Shopify/toxiproxy#toxics.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stack import procs
from stack.procs import CACHE_DIR, StackError
from stack.service import Service

VERSION = "2.12.0"
MODULE = "github.com/Shopify/toxiproxy/v2/cmd/server"
BUILD_TIMEOUT = 600.0


def binary() -> Path:
    return CACHE_DIR / f"toxiproxy-{VERSION}" / "toxiproxy-server"


def ensure_binary() -> Path:
    """Build ``toxiproxy-server`` with ``go install`` on first use (about 40 s); return its path."""
    target = binary()
    if target.is_file():
        return target
    go = shutil.which("go")
    if go is None:
        raise StackError("go is not on PATH: Toxiproxy is built from its Go module (go 1.22+ needed)")
    target.parent.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "GOPATH": str(CACHE_DIR / "go"),
        "GOCACHE": str(CACHE_DIR / "go-build"),
        "GOFLAGS": "-modcacherw -buildvcs=false",  # a module cache `rm -rf` can remove
    }
    # Built into a private folder and moved in place, so that two test runs building at once never see half a file.
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        cmd = [go, "install", f"{MODULE}@v{VERSION}"]
        try:
            result = subprocess.run(cmd, env={**env, "GOBIN": tmp}, stdin=subprocess.DEVNULL, capture_output=True,
                                    text=True, timeout=BUILD_TIMEOUT, check=False)
        except subprocess.TimeoutExpired as exc:
            raise StackError(f"building Toxiproxy did not finish within {BUILD_TIMEOUT:.0f} s") from exc
        if result.returncode != 0:
            raise StackError(f"{' '.join(cmd)} failed (exit {result.returncode}):\n{result.stderr[-4000:]}")
        os.replace(Path(tmp) / "server", target)
    return target


class ToxiproxyServer(Service):
    """``toxiproxy-server`` with its HTTP API on 127.0.0.1:``port``; its proxies live in memory only."""

    name = "toxiproxy"
    start_timeout = 30.0

    @property
    def address(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def config_path(self) -> Path:
        return self.state_dir / "toxiproxy" / "proxies.json"

    def prepare(self) -> None:
        ensure_binary()
        procs.write_atomic(self.config_path, "[]\n")  # no proxy at start; they are made through the API

    def command(self) -> list[str]:
        # the config file's path puts the state dir on the command line, which Service checks before stopping a pid
        return [str(binary()), "-host", "127.0.0.1", "-port", str(self.port), "-config", str(self.config_path)]

    def is_ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.address}/version", timeout=2) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def client(self) -> Toxiproxy:
        return Toxiproxy(self.address)


class Toxiproxy:
    """The HTTP API of a Toxiproxy server."""

    def __init__(self, url: str, timeout: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout

    def call(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.url}{path}", data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                text = response.read().decode()
        except urllib.error.HTTPError as exc:
            raise StackError(f"toxiproxy {method} {path}: {exc.code} {exc.read().decode(errors='replace')}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise StackError(f"toxiproxy {method} {path}: {exc}") from exc
        return json.loads(text) if text.strip() else None

    def create_proxy(self, name: str, listen_port: int, upstream: str) -> Proxy:
        """A proxy from 127.0.0.1:``listen_port`` to ``upstream`` (replaced if one of that name exists)."""
        if name in self.call("GET", "/proxies"):
            self.call("DELETE", f"/proxies/{name}")
        self.call("POST", "/proxies", {"name": name, "listen": f"127.0.0.1:{listen_port}", "upstream": upstream,
                                       "enabled": True})
        return Proxy(self, name, listen_port, upstream)

    def reset(self) -> None:
        """Every proxy enabled again and every toxic removed."""
        self.call("POST", "/reset")


@dataclass(frozen=True)
class Proxy:
    api: Toxiproxy
    name: str
    listen_port: int
    upstream: str

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.listen_port}"

    def add_toxic(self, kind: str, attributes: Mapping[str, int], *, stream: str = "downstream",
                  toxicity: float = 1.0, name: str | None = None) -> str:
        """Add a toxic of ``kind`` on ``stream`` (``downstream``: server to client); returns its name."""
        toxic_name = name or f"{kind}_{stream}"
        self.api.call("POST", f"/proxies/{self.name}/toxics", {
            "name": toxic_name, "type": kind, "stream": stream, "toxicity": toxicity, "attributes": dict(attributes),
        })
        return toxic_name

    def remove_toxic(self, name: str) -> None:
        self.api.call("DELETE", f"/proxies/{self.name}/toxics/{name}")

    def toxics(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.api.call("GET", f"/proxies/{self.name}/toxics")
        return found

    def clear(self) -> None:
        for toxic in self.toxics():
            self.remove_toxic(str(toxic["name"]))
        self.set_enabled(True)

    def set_enabled(self, enabled: bool) -> None:
        """False: every connection through the proxy is closed and new ones are refused."""
        self.api.call("POST", f"/proxies/{self.name}", {"enabled": enabled})

    def partition(self) -> None:
        """Nothing gets through either way until :meth:`heal`, and nothing is lost: a latency toxic of an hour on
        each stream holds the bytes, as TCP retransmission would, and delivers them when removed (a ``timeout``
        toxic would drop them, corrupting the streams, which no real network does). Connections are still
        accepted, so clients notice the partition by their own request timeouts."""
        for stream in ("upstream", "downstream"):
            self.add_toxic("latency", {"latency": 3_600_000}, stream=stream, name=f"partition_{stream}")

    def heal(self) -> None:
        self.clear()


def start_server(state_dir: Path, port: int | None = None) -> ToxiproxyServer:
    server = ToxiproxyServer(state_dir, port or procs.free_port())
    server.start()
    return server

"""Command lines mirroring Kafka's scripts:

``connect-distributed worker.properties`` and
``connect-standalone worker.properties connector1.properties|.json ...``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import ssl
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
import uvicorn

from connect.api.errors import ConnectError
from connect.config.environment import with_environment
from connect.config.properties import load_properties
from connect.runtime import log_setup
from connect.runtime.assembly import Runtime, Startup, distributed, lifespan, standalone
from connect.runtime.herder import Herder
from connect.runtime.worker_config import string_values
from rest import security as rest_security

log = logging.getLogger(__name__)


def _setup_logging(props: Mapping[str, str] | None = None) -> None:
    """Log4j-style lines (or JSON) with the start-up levels of the worker config and the environment."""
    try:
        log_setup.configure(props)
    except ValueError as exc:
        raise ConnectError(f"Invalid logging setting: {exc}") from exc


def read_connector_file(path: str) -> tuple[dict[str, str], str | None]:
    """A connector file, tried as Connect does: a JSON object of strings, a POST body, then properties."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        data: Any = orjson.loads(text)
    except orjson.JSONDecodeError:
        props = load_properties(path)
        initial = None
    else:
        if not isinstance(data, dict):
            raise ConnectError(f"{path}: a JSON connector file must hold an object")
        if isinstance(data.get("config"), dict):
            props = string_values(data["config"])
            name = data.get("name")
            if name is not None and props.setdefault("name", str(name)) != str(name):
                raise ConnectError(f"{path}: config.name does not match name")
            initial = data.get("initial_state")
        else:
            props, initial = string_values(data), None
    if not props.get("name"):
        raise ConnectError(f"{path}: connector configuration has no 'name'")
    return props, initial


def serve(runtime: Runtime, on_started: Any = None) -> int:
    """Serve the REST API until SIGTERM/SIGINT, then stop gracefully; 1 when the worker failed to start."""
    from rest.app import create_app

    host, port = runtime.config.listener()
    server: uvicorn.Server | None = None

    def failed() -> None:
        if server is not None:
            server.should_exit = True

    startup = Startup(runtime, on_started, failed)
    herder: Any = _LazyHerder(startup)
    app = create_app(herder, credentials=rest_security.basic_auth_credentials(runtime.props))
    tls = rest_security.tls_settings(runtime.props, runtime.config.listener_scheme())
    app.state.startup = startup
    app.router.lifespan_context = lifespan(startup)
    server = _RestServer(uvicorn.Config(app, host=host, port=port, log_level="warning", log_config=None,
                                        timeout_graceful_shutdown=10, **(tls.uvicorn_kwargs() if tls else {})))
    if runtime.props.get("rest.access.log.enable", "false").strip().lower() == "true":
        logging.getLogger("uvicorn.access").setLevel(logging.INFO)
    metrics_listener = None
    if (address := runtime.config.metrics_address()) is not None:
        from rest.metrics_listener import MetricsListener

        metrics_listener = MetricsListener(*address, app.state.metrics_registry)
        metrics_listener.start()
    try:
        server.run()
    finally:
        if metrics_listener is not None:
            metrics_listener.stop()
    return 1 if startup.failed is not None else 0


class _RestServer(uvicorn.Server):
    """uvicorn's server, whose graceful shutdown does not wait on https peers: a connection it closes (idle at
    shutdown, or past its keep-alive) sends TLS's close_notify and stays open until the peer answers, which an idle
    client pool (the test's, another worker's forwarding client) does not do: uvicorn then waited its whole
    ``timeout_graceful_shutdown`` (10 s). Java Connect's Jetty closes them at once; here a closing connection whose
    response was flushed is aborted after a second. Requests under way still complete."""

    async def shutdown(self, sockets: Any = None) -> None:
        reaper = asyncio.ensure_future(_abort_closing_connections(self.server_state.connections))
        try:
            await super().shutdown(sockets)
        finally:
            reaper.cancel()


async def _abort_closing_connections(connections: set[Any], grace: float = 1.0) -> None:
    await asyncio.sleep(grace)
    while True:
        for protocol in list(connections):
            transport = getattr(protocol, "transport", None)
            if transport is not None and transport.is_closing() and not transport.get_write_buffer_size():
                transport.abort()
        await asyncio.sleep(0.2)


class _LazyHerder:
    """The herder exists only once the runtime started; REST handlers reach it through this."""

    def __init__(self, startup: Startup) -> None:
        self._startup = startup

    def __getattr__(self, name: str) -> Any:
        return getattr(self._startup.runtime.herder, name)


def worker_properties(path: str | None, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The worker properties: the file (if any) overridden by the environment as the Confluent and Debezium images
    do (:mod:`connect.config.environment`)."""
    env = os.environ if env is None else env
    props = load_properties(path) if path else {}
    merged, from_env = with_environment(props, env)
    if not merged:
        raise ConnectError("No worker properties: give a properties file or set CONNECT_* variables "
                           "(CONNECT_BOOTSTRAP_SERVERS, CONNECT_GROUP_ID, ...)")
    if from_env:
        log.info("Worker properties set by the environment: %s", ", ".join(from_env))
    return merged


def distributed_main(argv: list[str] | None = None) -> int:
    """``connect-distributed [worker.properties]`` (without a file, every property from the environment)."""
    parser = argparse.ArgumentParser(prog="connect-distributed")
    parser.add_argument("worker_properties", nargs="?")
    args = parser.parse_args(argv)
    _setup_logging()
    try:
        props = worker_properties(args.worker_properties)
        _setup_logging(props)
        _set_switch_interval()
        runtime = distributed(props)
    except (ConnectError, OSError) as exc:
        log.error("Stopping due to error: %s", exc)
        return 1
    return _serve_or_fail(runtime, None, 1)


def standalone_main(argv: list[str] | None = None) -> int:
    """``connect-standalone worker.properties [connector.properties|.json ...]``."""
    parser = argparse.ArgumentParser(prog="connect-standalone")
    parser.add_argument("worker_properties")
    parser.add_argument("connector_files", nargs="*")
    args = parser.parse_args(argv)
    _setup_logging()
    try:
        connectors = [read_connector_file(path) for path in args.connector_files]
        props = worker_properties(args.worker_properties)
        _setup_logging(props)
        _set_switch_interval()
        runtime = standalone(props)
    except (ConnectError, OSError) as exc:
        log.error("Stopping due to error: %s", exc)
        return 3

    def create_connectors(herder: Herder) -> None:
        from connect.storage.config_state import TargetState

        for props, initial in connectors:
            state = None if initial is None else TargetState.STARTED if initial == "RUNNING" else TargetState(initial)
            herder.put_connector_config(props["name"], props, allow_replace=True, initial_state=state).result(60)
            log.info("Created connector %s", props["name"])

    return _serve_or_fail(runtime, create_connectors, 3)


def _freeze_start_up_heap(then: Any) -> Any:
    """``then(herder)`` after the objects of start-up (modules, classes, configs, clients: most of the heap, long
    lived) are moved out of the cyclic collector's sight (``gc.freeze``). A full collection scanned them all, ~60 ms
    each, about three per 20,000 drained events (~9 us per event, a fifth of the worker's CPU: benchmarks/results.md);
    the objects of the data path are collected as before."""
    def started(herder: Herder) -> None:
        gc.collect()  # what is garbage now is not frozen
        gc.freeze()
        if then is not None:
            then(herder)
    return started


SWITCH_INTERVAL_ENV = "PYCONNECT_GIL_SWITCH_INTERVAL_MS"
DEFAULT_SWITCH_INTERVAL_MS = 1.0


def _set_switch_interval(environ: Mapping[str, str] = os.environ) -> float:
    """Set how long a thread that wants the GIL waits before it asks the holder to let go (CPython's default: 5 ms)
    to ``PYCONNECT_GIL_SWITCH_INTERVAL_MS`` (default 1 ms); returns it in seconds.

    A reader thread (a change stream's getMore, a snapshot range's cursor) sends its next request only once it holds
    the GIL again after a reply, while the task thread converts records without letting go: at CPython's default,
    each getMore waited up to 5 ms more in a cycle of ~8.5 ms of server work per 200 events (benchmarks/results.md)."""
    text = environ.get(SWITCH_INTERVAL_ENV, str(DEFAULT_SWITCH_INTERVAL_MS))
    try:
        milliseconds = float(text)
    except ValueError:
        milliseconds = -1.0
    if not 0.05 <= milliseconds <= 100:
        raise ConnectError(f"Invalid value {text!r} for {SWITCH_INTERVAL_ENV}: a number of milliseconds from 0.05 "
                           "to 100")
    sys.setswitchinterval(milliseconds / 1000)
    return milliseconds / 1000


def _serve_or_fail(runtime: Runtime, on_started: Any, failure_code: int) -> int:
    try:
        return failure_code if serve(runtime, _freeze_start_up_heap(on_started)) else 0
    except (ConnectError, OSError, ssl.SSLError) as exc:
        log.error("Stopping due to error: %s", exc)
        return failure_code


def main(argv: list[str] | None = None) -> int:
    """``python -m connect distributed|standalone ...``."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in ("distributed", "standalone"):
        print("usage: python -m connect {distributed,standalone} [worker.properties] [connector files...]",
              file=sys.stderr)
        return 2
    return distributed_main(argv[1:]) if argv[0] == "distributed" else standalone_main(argv[1:])

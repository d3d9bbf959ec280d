"""Local development stack: a real single-node KRaft Kafka broker and SecantusDB (MongoDB wire protocol).

Used by ``make demo`` (default ports), by the test suite (free ports, temporary state dir) and from a shell::

    python -m stack start [--kafka-port 9092] [--mongo-port 27017] [--state-dir .stack]
    python -m stack status
    python -m stack stop

Not part of the installed product.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from stack.kafka import KafkaBroker
from stack.mongo import MongoServer, mongo_uri
from stack.procs import DEFAULT_STATE_DIR, StackError, free_port, free_ports, read_state

__all__ = [
    "DEFAULT_STATE_DIR",
    "KafkaBroker",
    "MongoServer",
    "StackEndpoints",
    "StackError",
    "free_port",
    "free_ports",
    "services",
    "start",
    "stop",
]


@dataclass(frozen=True)
class StackEndpoints:
    kafka_bootstrap: str  # "127.0.0.1:9092"
    mongo_uri: str  # "mongodb://127.0.0.1:27017/?replicaSet=secantus"


def _state_dir(state_dir: Path | None) -> Path:
    return (DEFAULT_STATE_DIR if state_dir is None else Path(state_dir)).resolve()


def start(
    state_dir: Path | None = None,
    kafka_port: int = 9092,
    mongo_port: int = 27017,
    *,
    kafka: bool = True,
    mongo: bool = True,
) -> StackEndpoints:
    """Start Kafka and/or SecantusDB for ``state_dir`` (default ``<repo>/.stack``) and wait until they answer.

    Idempotent: a service of this state dir that already runs (on the same port) is left alone.
    Raises :class:`StackError` with the log path and its last lines if a service fails to come up.
    """
    sdir = _state_dir(state_dir)
    sdir.mkdir(parents=True, exist_ok=True)
    chosen: list[KafkaBroker | MongoServer] = []
    if kafka:
        chosen.append(KafkaBroker(sdir, kafka_port, avoid=[mongo_port]))
    if mongo:
        chosen.append(MongoServer(sdir, mongo_port))
    for service in chosen:
        service.start()
        how = "already running" if service.startup_seconds is None else f"started in {service.startup_seconds:.1f} s"
        print(
            f"stack: {service.name} {service.address} ({how}, pid {service.pid}) log: {service.log_path}",
            file=sys.stderr,
            flush=True,
        )
    return StackEndpoints(kafka_bootstrap=f"127.0.0.1:{kafka_port}", mongo_uri=mongo_uri(mongo_port))


def services(state_dir: Path | None = None) -> tuple[KafkaBroker, MongoServer]:
    """The services of ``state_dir`` on the ports recorded there (defaults if none were recorded)."""
    sdir = _state_dir(state_dir)
    state = read_state(sdir)
    kafka_state = state.get("kafka", {})
    mongo_state = state.get("mongo", {})
    broker = KafkaBroker(sdir, kafka_state.get("port", 9092), kafka_state.get("controller_port"))
    server = MongoServer(sdir, mongo_state.get("port", 27017))
    return broker, server


def stop(state_dir: Path | None = None, timeout: float = 20.0) -> None:
    """Stop the services of ``state_dir``: SIGTERM each process group, SIGKILL after ``timeout`` s.

    Data is kept on disk; a later :func:`start` with the same state dir resumes it.
    """
    broker, server = services(state_dir)
    errors: list[str] = []
    for service in (server, broker):
        try:
            service.stop(timeout)
        except StackError as exc:
            errors.append(f"{service.name}: {exc}")
    if errors:
        raise StackError("; ".join(errors))

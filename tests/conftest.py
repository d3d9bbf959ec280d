"""Shared fixtures: the local stack (real Kafka + SecantusDB), started lazily on free ports, once per session."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# The dev-only ``stack`` package lives at the repository root and is not installed with the product.
_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

import stack as stack_mod  # noqa: E402
from stack import MongoServer, StackEndpoints  # noqa: E402


@pytest.fixture(scope="session")
def stack_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """State dir (data, logs, pid files) of the session's stack; separate from a demo's ``.stack/``."""
    return tmp_path_factory.mktemp("stack")


@pytest.fixture(scope="session")
def stack(stack_dir: Path) -> Iterator[StackEndpoints]:
    """Kafka and SecantusDB on free ports, started on first use and stopped at the end of the session."""
    kafka_port, mongo_port = stack_mod.free_ports(2)
    try:
        yield stack_mod.start(stack_dir, kafka_port=kafka_port, mongo_port=mongo_port)
    finally:
        stack_mod.stop(stack_dir)


@pytest.fixture
def mongo_server(stack: StackEndpoints, stack_dir: Path) -> Iterator[MongoServer]:
    """The session's SecantusDB server, for tests that stop/kill/restart MongoDB (restarted afterwards if down)."""
    server = MongoServer.from_state(stack_dir)
    yield server
    if not server.is_running():
        server.start()

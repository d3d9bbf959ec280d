"""``metrics.listener``'s server (rest/metrics_listener.py) leaves the process's logging as the worker set it:
no uvicorn handlers, levels or propagation of its own, and its scrapes stay out of the REST access log."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator

import httpx
import pytest
from prometheus_client import CollectorRegistry

from rest.metrics_listener import MetricsListener

NAMES = ("uvicorn", "uvicorn.error", "uvicorn.access")


def _state(name: str) -> tuple[list[logging.Handler], bool, int, bool]:
    logger = logging.getLogger(name)
    return list(logger.handlers), logger.propagate, logger.level, logger.disabled


@pytest.fixture
def access_log_on() -> Iterator[None]:
    """The REST access log enabled as log_setup and the CLI enable it; every uvicorn logger restored after."""
    saved = {name: (_state(name), list(logging.getLogger(name).filters)) for name in NAMES}
    for name in NAMES:
        logging.getLogger(name).handlers.clear()
        logging.getLogger(name).propagate = True
    logging.getLogger("uvicorn.access").setLevel(logging.INFO)
    logging.getLogger("uvicorn.access").disabled = False
    yield
    for name, ((handlers, propagate, level, disabled), filters) in saved.items():
        logger = logging.getLogger(name)
        logger.handlers[:] = handlers
        logger.filters[:] = filters
        logger.propagate, logger.disabled = propagate, disabled
        logger.setLevel(level)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_the_listener_keeps_the_worker_logging_and_its_scrapes_out_of_the_access_log(
        access_log_on: None, caplog: pytest.LogCaptureFixture) -> None:
    before = {name: _state(name) for name in NAMES}
    port = _free_port()
    listener = MetricsListener("127.0.0.1", port, CollectorRegistry())
    assert {name: _state(name) for name in NAMES} == before
    listener.start()
    try:
        with caplog.at_level(logging.INFO, logger="uvicorn.access"):
            assert httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).status_code == 200
            logging.getLogger("uvicorn.access").info("a REST request")  # another thread's: still logged
        assert [r.getMessage() for r in caplog.records if r.name == "uvicorn.access"] == ["a REST request"]
    finally:
        listener.stop()
    assert {name: _state(name) for name in NAMES} == before

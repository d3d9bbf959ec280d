"""The job's session leaves py4j's INFO lines out (one of them came from ``__del__`` at interpreter exit, into a
closed stream) unless its logger's level was set."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from spark_jobs.session import quiet_py4j


@pytest.fixture
def py4j_logger() -> Iterator[logging.Logger]:
    logger = logging.getLogger("py4j")
    before = logger.level
    yield logger
    logger.setLevel(before)


def test_py4j_info_lines_are_left_out(py4j_logger: logging.Logger) -> None:
    py4j_logger.setLevel(logging.NOTSET)
    quiet_py4j()
    assert not py4j_logger.isEnabledFor(logging.INFO)
    assert py4j_logger.isEnabledFor(logging.WARNING)


def test_a_level_the_user_set_stays(py4j_logger: logging.Logger) -> None:
    py4j_logger.setLevel(logging.DEBUG)
    quiet_py4j()
    assert py4j_logger.level == logging.DEBUG

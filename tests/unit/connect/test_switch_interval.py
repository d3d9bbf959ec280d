"""The worker's GIL switch interval (``PYCONNECT_GIL_SWITCH_INTERVAL_MS``): set at start, refused with a message
naming the variable when it is not a number of milliseconds in range."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from connect.api.errors import ConnectError
from connect.cli import DEFAULT_SWITCH_INTERVAL_MS, SWITCH_INTERVAL_ENV, _set_switch_interval


@pytest.fixture(autouse=True)
def _restore() -> Iterator[None]:
    before = sys.getswitchinterval()
    yield
    sys.setswitchinterval(before)


def test_the_default_is_one_millisecond() -> None:
    assert _set_switch_interval({}) == pytest.approx(DEFAULT_SWITCH_INTERVAL_MS / 1000)
    assert sys.getswitchinterval() == pytest.approx(0.001)


def test_the_environment_sets_it() -> None:
    assert _set_switch_interval({SWITCH_INTERVAL_ENV: "0.5"}) == pytest.approx(0.0005)
    assert sys.getswitchinterval() == pytest.approx(0.0005)


@pytest.mark.parametrize("value", ["fast", "0", "-1", "1000", ""])
def test_a_bad_value_names_the_variable(value: str) -> None:
    with pytest.raises(ConnectError, match=SWITCH_INTERVAL_ENV):
        _set_switch_interval({SWITCH_INTERVAL_ENV: value})

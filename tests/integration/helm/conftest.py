"""Fixtures for running the chart's rendered artifacts against the real stack."""

from __future__ import annotations

import pytest

from tests.helm.conftest import Helm


@pytest.fixture(scope="session")
def helm() -> Helm:
    return Helm()

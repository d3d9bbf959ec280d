"""Fixtures for running the chart's rendered artifacts against the real stack."""

from __future__ import annotations

import pytest

from stack.helm import ensure_helm
from tests.helm.conftest import Helm


@pytest.fixture(scope="session")
def helm(tmp_path_factory: pytest.TempPathFactory) -> Helm:
    return Helm(ensure_helm(), tmp_path_factory.mktemp("helm-home"))

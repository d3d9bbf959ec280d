"""Fixtures for the Helm chart's tests: the pinned Helm binary (built once into .cache/ by stack/helm.py) and a
renderer of the chart's manifests."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from stack.helm import ensure_helm
from stack.procs import REPO_ROOT

CHART = REPO_ROOT / "helm" / "pyconnect"
EXAMPLE_VALUES = REPO_ROOT / "helm" / "examples" / "values-production.yaml"
KUBE_VERSION = "1.33.0"


class Helm:
    """The ``helm`` command line, with its config, cache and data homes in a temporary directory."""

    def __init__(self, binary: Path, home: Path) -> None:
        self.binary = binary
        self.env = {"HELM_CACHE_HOME": str(home / "cache"), "HELM_CONFIG_HOME": str(home / "config"),
                    "HELM_DATA_HOME": str(home / "data"), "PATH": "/usr/bin:/bin", "HOME": str(home)}

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.binary), *args], env=self.env, capture_output=True, text=True,
                              timeout=120, check=False, stdin=subprocess.DEVNULL)

    @staticmethod
    def _value_args(values: Iterable[Path], sets: Mapping[str, str]) -> list[str]:
        args: list[str] = []
        for path in values:
            args += ["-f", str(path)]
        for key, value in sets.items():
            args += ["--set", f"{key}={value}"]
        return args

    def template_text(self, *values: Path, sets: Mapping[str, str] | None = None, release: str = "cdc",
                      namespace: str = "data") -> str:
        """``helm template`` output (hooks included); fails the test with Helm's message when it fails."""
        result = self.run("template", release, str(CHART), "--namespace", namespace, "--kube-version", KUBE_VERSION,
                          *self._value_args(values, sets or {}))
        assert result.returncode == 0, result.stderr
        return result.stdout

    def template(self, *values: Path, sets: Mapping[str, str] | None = None, release: str = "cdc",
                 namespace: str = "data") -> list[dict[str, Any]]:
        """The rendered manifests, parsed."""
        text = self.template_text(*values, sets=sets, release=release, namespace=namespace)
        return [doc for doc in yaml.safe_load_all(text) if doc]

    def template_error(self, *values: Path, sets: Mapping[str, str] | None = None) -> str:
        """Helm's error message for values it must reject."""
        result = self.run("template", "cdc", str(CHART), "--kube-version", KUBE_VERSION,
                          *self._value_args(values, sets or {}))
        assert result.returncode != 0, f"helm accepted the values:\n{result.stdout[:2000]}"
        return result.stderr


@pytest.fixture(scope="session")
def helm(tmp_path_factory: pytest.TempPathFactory) -> Helm:
    return Helm(ensure_helm(), tmp_path_factory.mktemp("helm-home"))


def find(manifests: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    """The one manifest of ``kind`` (and ``name``)."""
    found = [m for m in manifests if m["kind"] == kind and (name is None or m["metadata"]["name"] == name)]
    assert len(found) == 1, f"{len(found)} manifests of kind {kind} named {name}: {[m['metadata'] for m in found]}"
    return found[0]


def kinds(manifests: list[dict[str, Any]]) -> list[str]:
    return sorted(m["kind"] for m in manifests)

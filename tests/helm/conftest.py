"""Fixtures for the Helm chart's tests: Helm v4's Go SDK, in process (the C library bundled in the pinned PyPI
package helm-python-sdk: no helm binary, no cluster, no network), and a renderer of the chart's manifests."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import helm_python
import pytest
import yaml
from helm_python import _native

from stack.procs import REPO_ROOT

CHART = REPO_ROOT / "helm" / "pyconnect"
EXAMPLE_VALUES = REPO_ROOT / "helm" / "examples" / "values-production.yaml"
KUBE_VERSION = "1.33.0"
NOTES = "templates/NOTES.txt"


def _merge(base: dict[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Helm's merge of user values: maps merge key by key, anything else is replaced."""
    for key, value in overrides.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value
    return base


class Helm:
    """What ``helm template`` and ``helm lint --strict`` do, through Helm's Go SDK.

    Values are composed as the command line composes ``-f`` files and then ``--set`` expressions, parsed by Helm's
    own YAML and strvals parsers. One difference: the SDK takes values as JSON, so a number given with ``--set``
    reaches the templates as a float64 (as one from a values file always does), not as an int64.
    """

    @staticmethod
    def values(files: Iterable[Path] = (), sets: Mapping[str, str] | None = None) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        for path in files:
            _merge(merged, helm_python.values_from_yaml(path.read_text()))
        for key, value in (sets or {}).items():
            _merge(merged, helm_python.parse_set_string(f"{key}={value}"))
        return merged

    def render(self, *values: Path, sets: Mapping[str, str] | None = None, release: str = "cdc",
               namespace: str = "data", kube_version: str | None = KUBE_VERSION) -> dict[str, str]:
        """Every template rendered (hooks and NOTES.txt included), by path within the chart's directory; raises
        ``helm_python.HelmError`` with Helm's message when the values or a template fail."""
        options: dict[str, Any] = {"name": release, "namespace": namespace}
        if kube_version is not None:
            # `--kube-version`: the library's render takes it, the binding's Chart.render does not pass it on
            options["kube_version"] = kube_version
        with helm_python.Chart.load(CHART) as loaded:
            rendered = _native.call_string("helm_render", loaded._raw(), json.dumps(self.values(values, sets)),
                                           json.dumps(options))
        manifests: dict[str, str] = json.loads(rendered)
        return {path.split("/", 1)[1]: text for path, text in manifests.items()}

    def template_text(self, *values: Path, sets: Mapping[str, str] | None = None, release: str = "cdc",
                      namespace: str = "data") -> str:
        """``helm template``'s manifests (hooks included, NOTES.txt not); fails the test with Helm's message."""
        try:
            rendered = self.render(*values, sets=sets, release=release, namespace=namespace)
        except helm_python.HelmError as exc:
            pytest.fail(f"helm rejected the chart or values: {exc}")
        return "".join(f"---\n# Source: {path}\n{text}" for path, text in sorted(rendered.items())
                       if path != NOTES and text.strip())

    def template(self, *values: Path, sets: Mapping[str, str] | None = None, release: str = "cdc",
                 namespace: str = "data") -> list[dict[str, Any]]:
        """The rendered manifests, parsed."""
        text = self.template_text(*values, sets=sets, release=release, namespace=namespace)
        return [doc for doc in yaml.safe_load_all(text) if doc]

    def template_error(self, *values: Path, sets: Mapping[str, str] | None = None) -> str:
        """Helm's error message for values it must reject."""
        try:
            rendered = self.render(*values, sets=sets)
        except helm_python.HelmError as exc:
            return str(exc)
        pytest.fail(f"helm accepted the values:\n{json.dumps(rendered)[:2000]}")

    def lint(self, *values: Path, kube_version: str = KUBE_VERSION) -> dict[str, Any]:
        """``helm lint --strict``'s report: ``errors`` lists every finding of warning severity or worse."""
        return helm_python.lint(CHART, self.values(values), strict=True, kube_version=f"v{kube_version}")

    def install_dry_run(self, release: str = "cdc", namespace: str = "data") -> dict[str, Any]:
        """``helm install --dry-run=client`` with no Kubernetes version named: Helm's install action, which checks
        the chart's ``kubeVersion`` against the Kubernetes the SDK assumes."""
        with helm_python.Config(storage_driver="memory", namespace=namespace) as config:
            return config.install(CHART, release, {}, namespace=namespace, dry_run="client")


@pytest.fixture(scope="session")
def helm() -> Helm:
    return Helm()


def find(manifests: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    """The one manifest of ``kind`` (and ``name``)."""
    found = [m for m in manifests if m["kind"] == kind and (name is None or m["metadata"]["name"] == name)]
    assert len(found) == 1, f"{len(found)} manifests of kind {kind} named {name}: {[m['metadata'] for m in found]}"
    return found[0]


def kinds(manifests: list[dict[str, Any]]) -> list[str]:
    return sorted(m["kind"] for m in manifests)

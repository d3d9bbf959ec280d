"""The Dockerfile cannot be built here (no Docker engine); these checks keep it consistent with the chart and the
package: the version the chart pulls, the user the pods run as, and every package of the wheel in the context."""

from __future__ import annotations

import re
import tomllib

import yaml

from stack.procs import REPO_ROOT
from tests.helm.conftest import CHART

DOCKERFILE = (REPO_ROOT / "Dockerfile").read_text()


def _instructions(name: str) -> list[str]:
    return re.findall(rf"^{name}\s+(.+)$", DOCKERFILE, flags=re.MULTILINE)


def test_chart_pulls_the_packaged_version_and_image_name() -> None:
    version = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["version"]
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert chart["appVersion"] == version
    assert f"docker build -t {values['image']['repository']}:{version} ." in DOCKERFILE


def test_multi_stage_slim_non_root_matching_the_pod_security_context() -> None:
    stages = _instructions("FROM")
    assert len(stages) == 2 and all(s.split()[0].endswith("-slim") for s in stages)
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    uid, gid = values["podSecurityContext"]["runAsUser"], values["podSecurityContext"]["runAsGroup"]
    assert _instructions("USER") == [f"{uid}:{gid}"]
    assert f"--uid {uid}" in DOCKERFILE and f"--gid {gid}" in DOCKERFILE
    assert _instructions("ENTRYPOINT") == ['["connect-distributed"]']
    assert _instructions("CMD") == []  # no file needed: CONNECT_* variables configure the worker
    assert _instructions("EXPOSE") == [str(values["worker"]["restPort"])]


def test_build_context_holds_every_package_of_the_wheel() -> None:
    includes = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    packages = {pattern.rstrip("*") for pattern in includes["include"]}
    copied = {line.split()[0] for line in _instructions("COPY") if not line.startswith("--from")}
    assert packages <= copied, f"packages not copied into the build stage: {packages - copied}"
    ignored = {line.strip() for line in (REPO_ROOT / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")}
    assert not packages & ignored and "pyproject.toml" not in ignored and "README.md" not in ignored

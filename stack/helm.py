"""Helm itself, for the chart's tests: ``go install helm.sh/helm/v3/cmd/helm@HELM_VERSION`` through the Go module
proxy, once, into the git-ignored cache (module cache and build cache there too, so a fresh clone needs only Go).

The binary is built into a temporary directory and renamed when complete, under a lock, so a half build is
never used and parallel callers build it once. ``python -m stack.helm`` prints its path.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from stack.procs import CACHE_DIR, StackError

HELM_VERSION = "v3.22.0"
HELM_MODULE = "helm.sh/helm/v3/cmd/helm"
# The Kubernetes version Helm assumes without --kube-version: Helm's own Makefile derives it from the client-go
# module it builds with (v0.37 for v3.22.0, so 1.37); a plain `go install` would leave it at 1.20.
KUBE_MAJOR, KUBE_MINOR = 1, 37
_LDFLAGS = " ".join([
    f"-X helm.sh/helm/v3/internal/version.version={HELM_VERSION}",
    *(f"-X helm.sh/helm/v3/pkg/{pkg}.k8sVersionMajor={KUBE_MAJOR}" for pkg in ("chartutil", "lint/rules")),
    *(f"-X helm.sh/helm/v3/pkg/{pkg}.k8sVersionMinor={KUBE_MINOR}" for pkg in ("chartutil", "lint/rules")),
])
GO_TIMEOUT = 3600.0  # a cold build downloads the Kubernetes client modules and compiles them on 2 cores


def helm_path(cache: Path = CACHE_DIR) -> Path:
    """Where the pinned Helm binary lives once built."""
    return cache / f"helm-{HELM_VERSION}" / "helm"


def _go_env(cache: Path) -> dict[str, str]:
    go_dir = cache / "go"
    env = dict(os.environ)
    env.update({
        "GOPATH": str(go_dir),
        "GOMODCACHE": str(go_dir / "pkg" / "mod"),
        "GOCACHE": str(go_dir / "build"),
        "GOFLAGS": "-modcacherw",  # a writable module cache, so `make clean` can remove it
    })
    return env


def ensure_helm(cache: Path = CACHE_DIR) -> Path:
    """The pinned Helm binary, built with ``go install`` on first use."""
    target = helm_path(cache)
    if target.is_file():
        return target
    target.parent.parent.mkdir(parents=True, exist_ok=True)
    with (cache / ".helm-build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be building it right now; go itself is bounded
        if target.is_file():
            return target
        go = shutil.which("go")
        if go is None:
            raise StackError("Go is not on PATH; it is needed once to build Helm for the chart's tests")
        tmp = Path(tempfile.mkdtemp(prefix=".helm-", dir=cache))
        env = _go_env(cache)
        env["GOBIN"] = str(tmp)
        cmd = [go, "install", f"-ldflags={_LDFLAGS}", f"{HELM_MODULE}@{HELM_VERSION}"]
        print(f"building Helm {HELM_VERSION} with `{' '.join(cmd)}` into {target} (once) ...", file=sys.stderr,
              flush=True)
        try:
            result = subprocess.run(cmd, env=env, cwd=cache, stdin=subprocess.DEVNULL, capture_output=True,
                                    text=True, timeout=GO_TIMEOUT, check=False)
            if result.returncode != 0 or not (tmp / "helm").is_file():
                raise StackError(f"go install of Helm failed (exit {result.returncode}): {' '.join(cmd)}\n"
                                 f"{(result.stdout + result.stderr)[-4000:]}")
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp / "helm", target)
        except subprocess.TimeoutExpired as exc:
            raise StackError(f"go install of Helm did not finish within {GO_TIMEOUT:.0f} s") from exc
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def main() -> int:
    try:
        print(ensure_helm())
    except StackError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A local S3 endpoint for the Spark jobs' ``s3a://`` tests: moto's server mode (``python -m moto.server``, a
test-only dependency) on 127.0.0.1 and a free port, in its own process group, with the Hadoop S3A settings that
point a Spark session at it."""

from __future__ import annotations

import sys
import urllib.error
import urllib.request
from pathlib import Path

from stack.procs import REPO_ROOT, free_port, group_alive, spawn, stop_group, wait_until

__all__ = ["S3Server"]

ACCESS_KEY = "testing"
SECRET_KEY = "testing"
REGION = "us-east-1"


class S3Server:
    """moto's S3 server; :meth:`start` waits until it answers, :meth:`stop` ends its process group."""

    def __init__(self, log_path: Path) -> None:
        self.log_path = log_path
        self.port = 0
        self._pid: int | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> S3Server:
        self.port = free_port()
        self._pid = spawn([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
                          log_path=self.log_path, cwd=REPO_ROOT)
        pid = self._pid
        wait_until(self._answers, timeout=timeout, what="moto S3 server", alive=lambda: group_alive(pid),
                   log_path=self.log_path)
        return self

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=2):
                return True
        except (OSError, urllib.error.URLError):
            return False

    def create_bucket(self, name: str) -> None:
        request = urllib.request.Request(f"{self.endpoint}/{name}", method="PUT")
        with urllib.request.urlopen(request, timeout=10) as response:
            if response.status != 200:
                raise OSError(f"creating bucket {name}: HTTP {response.status}")

    def hadoop_conf(self) -> dict[str, str]:
        """The ``fs.s3a.*`` settings (Hadoop configuration keys) that send S3A to this server."""
        return {
            "fs.s3a.endpoint": self.endpoint,
            "fs.s3a.endpoint.region": REGION,
            "fs.s3a.path.style.access": "true",
            "fs.s3a.connection.ssl.enabled": "false",
            "fs.s3a.access.key": ACCESS_KEY,
            "fs.s3a.secret.key": SECRET_KEY,
            "fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
        }

    def stop(self) -> None:
        if self._pid is not None:
            stop_group(self._pid, timeout=10)
            self._pid = None

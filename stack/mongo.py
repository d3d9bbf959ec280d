"""SecantusDB, a MongoDB wire-protocol server advertising itself as the single-node replica set ``secantus``."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

from stack import procs
from stack.procs import StackError
from stack.service import Service

REPLICA_SET = "secantus"
LAUNCHER = "secantusd-py"


def launcher() -> str:
    """The ``secantusd-py`` launcher of this interpreter's environment, else the one on PATH."""
    local = procs.python_bin_dir() / LAUNCHER
    if local.is_file():
        return str(local)
    found = shutil.which(LAUNCHER)
    if found is None:
        raise StackError(
            f"{LAUNCHER} not found next to {procs.python_bin_dir()} nor on PATH; "
            "install the dev extras: pip install -e '.[dev]' (secantusdb==0.7.0b3)"
        )
    return found


def mongo_uri(port: int, host: str = "127.0.0.1") -> str:
    return f"mongodb://{host}:{port}/?replicaSet={REPLICA_SET}"


class MongoServer(Service):
    """A SecantusDB server on 127.0.0.1 with its data in ``<state_dir>/mongo-data`` (kept across restarts)."""

    name = "mongo"
    start_timeout = 60.0

    def __init__(self, state_dir: Path, port: int = 27017) -> None:
        super().__init__(state_dir, port)

    @classmethod
    def from_state(cls, state_dir: Path) -> MongoServer:
        """The server recorded in ``state_dir`` (by a previous start), on the port it was started with."""
        server = cls(state_dir)
        port = server.recorded_port()
        if port is None:
            raise StackError(f"no MongoDB recorded in {server.state_dir}; start the stack first")
        server.port = port
        return server

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def uri(self) -> str:
        return mongo_uri(self.port)

    @property
    def data_dir(self) -> Path:
        return self.state_dir / "mongo-data"

    @property
    def config_path(self) -> Path:
        # An explicit (empty) config file disables secantusd's auto-discovery of ./, ~/.secantus/ and /etc/ configs.
        return self.state_dir / "mongo" / "secantusd.toml"

    def prepare(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        procs.write_atomic(self.config_path, "# written by stack/mongo.py; settings are passed as flags\n")

    def command(self) -> list[str]:
        return [
            launcher(), "--config", str(self.config_path), "--host", "127.0.0.1", "--port", str(self.port),
            "--storage-path", str(self.data_dir),
        ]  # fmt: skip

    def env(self) -> dict[str, str]:
        return {"PYTHONUNBUFFERED": "1"}

    def is_ready(self) -> bool:
        from pymongo import MongoClient

        client: MongoClient[dict[str, object]] | None = None
        try:
            client = MongoClient(self.uri, serverSelectionTimeoutMS=1000, connectTimeoutMS=1000, socketTimeoutMS=3000)
            hello = client.admin.command("hello")
            return hello.get("setName") == REPLICA_SET and bool(hello.get("isWritablePrimary"))
        except Exception:  # noqa: BLE001 - any failure of the probe just means "not ready yet"
            return False
        finally:
            if client is not None:
                with contextlib.suppress(Exception):
                    client.close()

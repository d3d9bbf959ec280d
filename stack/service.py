"""Base class of a stack service: one detached process, a pid file, a log file and a readiness probe."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, ClassVar

from stack import procs
from stack.procs import StackError


class Service:
    """A server process owned by a state directory.

    Subclasses define ``name``, :meth:`command`, :meth:`is_ready` and optionally :meth:`prepare`.
    """

    name: ClassVar[str]
    #: Bound on waiting for the service to answer after it was spawned.
    start_timeout: ClassVar[float] = 120.0

    def __init__(self, state_dir: Path, port: int) -> None:
        self.state_dir = Path(state_dir).resolve()
        self.port = port
        #: Seconds the last :meth:`start` took from spawn to ready (None if it found the service running).
        self.startup_seconds: float | None = None

    # -- paths ---------------------------------------------------------------------------------------------------
    @property
    def pid_file(self) -> Path:
        return self.state_dir / f"{self.name}.pid"

    @property
    def log_path(self) -> Path:
        return self.state_dir / "logs" / f"{self.name}.log"

    # -- to be defined by subclasses -----------------------------------------------------------------------------
    def command(self) -> list[str]:
        raise NotImplementedError

    def is_ready(self) -> bool:
        """True if the service answers its protocol right now (short, bounded probe)."""
        raise NotImplementedError

    def prepare(self) -> None:
        """Create data directories and configuration before the process is spawned."""

    def env(self) -> dict[str, str]:
        return {}

    def state(self) -> dict[str, Any]:
        """What is recorded in the state JSON file for this service."""
        return {"port": self.port}

    @property
    def address(self) -> str:
        raise NotImplementedError

    # -- lifecycle -----------------------------------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        """Pid of the running service process of this state dir, or None."""
        pid = procs.read_pid(self.pid_file)
        if pid is None or not procs.pid_alive(pid):
            return None
        if not procs.cmdline_contains(pid, str(self.state_dir)):
            return None  # the pid was reused by an unrelated process
        return pid

    def is_running(self) -> bool:
        return self.pid is not None

    def recorded_port(self) -> int | None:
        port = procs.read_state(self.state_dir).get(self.name, {}).get("port")
        return port if isinstance(port, int) else None

    def start(self) -> None:
        """Start the service and wait until it answers. A service of this state dir already running is kept."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.startup_seconds = None
        pid = self.pid
        if pid is not None:
            running_port = self.recorded_port()
            if running_port is not None and running_port != self.port:
                raise StackError(
                    f"{self.name} of {self.state_dir} already runs on port {running_port} (pid {pid}), "
                    f"not {self.port}; stop it first (python -m stack stop --state-dir {self.state_dir})"
                )
            self._wait_ready(pid)
            return
        self._stop_leftover_group()
        procs.remove(self.pid_file)
        if not procs.port_is_free(self.port):
            raise StackError(f"cannot start {self.name}: port {self.port} on 127.0.0.1 is already in use")
        self.prepare()
        started = time.monotonic()
        pid = procs.spawn(self.command(), log_path=self.log_path, cwd=self.state_dir, env=self.env())
        procs.write_atomic(self.pid_file, f"{pid}\n")
        procs.update_state(self.state_dir, self.name, self.state())
        try:
            self._wait_ready(pid)
        except BaseException:
            procs.kill_group(pid)
            procs.remove(self.pid_file)
            raise
        self.startup_seconds = time.monotonic() - started

    def _wait_ready(self, pid: int) -> None:
        procs.wait_until(
            self.is_ready,
            timeout=self.start_timeout,
            what=f"{self.name} (pid {pid}, {self.address})",
            alive=lambda: procs.pid_alive(pid),
            log_path=self.log_path,
        )

    def _stop_leftover_group(self) -> None:
        # The leader died but members of its process group may live on (they would hold the port).
        pid = procs.read_pid(self.pid_file)
        if pid is not None and not procs.pid_alive(pid) and procs.group_alive(pid):
            procs.kill_group(pid)

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM the process group, wait up to ``timeout`` s, then SIGKILL; remove the pid file."""
        pid = procs.read_pid(self.pid_file)
        if pid is not None and (self.pid == pid or (not procs.pid_alive(pid) and procs.group_alive(pid))):
            procs.stop_group(pid, timeout)
        procs.remove(self.pid_file)

    def kill(self) -> None:
        """SIGKILL the process group right away (simulates a crash); remove the pid file."""
        pid = procs.read_pid(self.pid_file)
        if pid is not None and (self.pid == pid or (not procs.pid_alive(pid) and procs.group_alive(pid))):
            procs.kill_group(pid)
        procs.remove(self.pid_file)

    def restart(self, timeout: float = 20.0) -> None:
        """Stop (clean, bounded by ``timeout``) and start again on the same port and data."""
        self.stop(timeout)
        self.start()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(state_dir={str(self.state_dir)!r}, port={self.port})"

"""Process plumbing shared by the stack services: detached spawning, pid files, liveness, clean stop.

Every service runs as the leader of its own session/process group (``start_new_session=True``), so stopping
it signals the whole group and nothing leaks. Every wait is bounded by a deadline.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_STATE_DIR = REPO_ROOT / ".stack"
CACHE_DIR = REPO_ROOT / ".cache"
STATE_FILE_NAME = "stack.json"

# Popen objects of the services this interpreter spawned, kept alive so that they can be reaped (no zombies
# masquerading as live processes) and so that their finalizers do not warn about still-running children.
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


class StackError(RuntimeError):
    """A stack service could not be started, reached or stopped."""


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that is free right now (there is an inherent race until it is bound)."""
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """Return ``count`` distinct free ports (sockets are held open until all are picked, so no duplicates)."""
    socks: list[socket.socket] = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """True if nothing listens on ``host:port`` (checked by binding, like the server would)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def tail(path: Path, lines: int = 30) -> str:
    """Last ``lines`` lines of a (log) file, or a note if it does not exist."""
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 64 * 1024))
            data = f.read()
    except FileNotFoundError:
        return f"(no log file at {path})"
    text = data.decode("utf-8", errors="replace").splitlines()
    return "\n".join(text[-lines:])


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def read_state(state_dir: Path) -> dict[str, Any]:
    """The JSON state file (ports in use), or an empty dict."""
    try:
        data = json.loads((state_dir / STATE_FILE_NAME).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def update_state(state_dir: Path, service: str, values: dict[str, Any]) -> None:
    state = read_state(state_dir)
    state[service] = values
    write_atomic(state_dir / STATE_FILE_NAME, json.dumps(state, indent=2, sort_keys=True) + "\n")


def pid_alive(pid: int) -> bool:
    """True if ``pid`` is a live (non-zombie) process."""
    child = _CHILDREN.get(pid)
    if child is not None:
        if child.poll() is not None:
            _CHILDREN.pop(pid, None)
            return False
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie still answers kill(0); look at its state where /proc exists.
    with contextlib.suppress(OSError, IndexError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat[stat.rindex(")") + 2] in "ZX":
            return False
    return True


def group_alive(pgid: int) -> bool:
    """True if any process of process group ``pgid`` is alive (zombies of our own children are reaped first)."""
    pid_alive(pgid)  # reaps the leader if it is our child
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return pid_alive(pgid) or _group_has_live_members(pgid)


def _group_has_live_members(pgid: int) -> bool:
    proc = Path("/proc")
    if not proc.is_dir():
        return True  # cannot tell; killpg(0) said the group exists
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = (entry / "stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            if int(fields[2]) == pgid and fields[0] not in "ZX":
                return True
    return False


def cmdline_contains(pid: int, needle: str) -> bool:
    """True if the command line of ``pid`` mentions ``needle`` (guards against pid reuse); True if unknowable."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return not Path("/proc").is_dir()
    except OSError:
        return True
    return needle in raw.replace(b"\0", b" ").decode("utf-8", errors="replace")


def spawn(cmd: Sequence[str], *, log_path: Path, cwd: Path, env: dict[str, str] | None = None) -> int:
    """Start ``cmd`` detached in a new session with stdout+stderr appended to ``log_path``; return its pid."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        log.write(f"\n===== {stamp} starting: {' '.join(cmd)}\n".encode())
        log.flush()
        proc = subprocess.Popen(
            list(cmd),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=str(cwd),
            env={**os.environ, **(env or {})},
            start_new_session=True,
            close_fds=True,
        )
    _CHILDREN[proc.pid] = proc
    return proc.pid


def stop_group(pgid: int, timeout: float = 20.0) -> bool:
    """SIGTERM process group ``pgid``, wait up to ``timeout`` s, then SIGKILL. Returns True if it stopped cleanly."""
    if not _signal_group(pgid, signal.SIGTERM):
        _wait_gone(pgid, 1.0)
        return True
    if _wait_gone(pgid, timeout):
        return True
    kill_group(pgid)
    return False


def kill_group(pgid: int, timeout: float = 10.0) -> None:
    """SIGKILL process group ``pgid`` and wait (bounded) until it is gone."""
    _signal_group(pgid, signal.SIGKILL)
    if not _wait_gone(pgid, timeout):
        raise StackError(f"process group {pgid} survived SIGKILL for {timeout:.0f} s")


def _signal_group(pgid: int, sig: signal.Signals) -> bool:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError as exc:
        raise StackError(f"not allowed to signal process group {pgid}: {exc}") from exc
    return True


def _wait_gone(pgid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        if not group_alive(pgid):
            _CHILDREN.pop(pgid, None)
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)


def wait_until(
    probe: Callable[[], bool],
    *,
    timeout: float,
    what: str,
    alive: Callable[[], bool],
    log_path: Path,
    interval: float = 0.25,
) -> None:
    """Poll ``probe`` until it returns True; fail early if ``alive`` turns False, or at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        if probe():
            return
        if not alive():
            raise StackError(f"{what} exited during startup; see {log_path}. Last lines:\n{tail(log_path)}")
        if time.monotonic() >= deadline:
            raise StackError(
                f"{what} did not become ready within {timeout:.0f} s; see {log_path}. Last lines:\n{tail(log_path)}"
            )
        time.sleep(interval)


def read_pid(pid_file: Path) -> int | None:
    try:
        return int(pid_file.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None


def remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def python_bin_dir() -> Path:
    """The bin/ directory of the running interpreter's environment (not resolved: venv symlinks matter)."""
    return Path(sys.executable).parent


def java() -> str:
    """The ``java`` of ``JAVA_HOME``, else the one on PATH (Java 17+ runs Kafka and Kafka Connect)."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").is_file():
        return str(Path(java_home) / "bin" / "java")
    found = shutil.which("java")
    if found is None:
        raise StackError("java is not on PATH (Java 17+ is needed for Kafka and the reference Kafka Connect)")
    return found

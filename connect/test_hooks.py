"""Points where a test can hold a worker process, to crash or freeze it at an exact place (a transaction commit
under way, a leader's config write) instead of at a random moment.

Off unless the process runs with ``CONNECT_TEST_HOLD_DIR`` set: then, when ``<dir>/<point>.hold`` exists as the
worker reaches ``point``, it writes ``<dir>/<point>.reached`` and waits (bounded) until the ``.hold`` file is
removed. Without the variable every call returns at once and nothing is read from the disk.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

log = logging.getLogger(__name__)

ENV = "CONNECT_TEST_HOLD_DIR"
MAX_HOLD_S = 600.0

_DIR = Path(os.environ[ENV]) if os.environ.get(ENV) else None


def armed(point: str) -> bool:
    """True when a test asks to hold the process at ``point`` now."""
    return _DIR is not None and (_DIR / f"{point}.hold").exists()


def hold(point: str) -> None:
    """Wait at ``point`` while a test holds it (at most :data:`MAX_HOLD_S`); return at once otherwise."""
    if _DIR is None or not armed(point):
        return
    hold_file, reached = _DIR / f"{point}.hold", _DIR / f"{point}.reached"
    log.warning("Test hook: holding at %s until %s is removed", point, hold_file)
    reached.write_text(str(os.getpid()))
    deadline = time.monotonic() + MAX_HOLD_S
    while hold_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    reached.unlink(missing_ok=True)
    log.warning("Test hook: released at %s", point)

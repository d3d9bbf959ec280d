"""The results file every benchmark appends to: a heading naming the benchmark, the time and the machine, then
the figures, printed and appended to ``benchmarks/results.md``."""

from __future__ import annotations

import os
import platform
from datetime import UTC, datetime
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results.md"


def heading(name: str) -> str:
    """``## <name> — <UTC time> — <machine>``."""
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    return f"## {name} — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC — {machine}"


def append(lines: list[str]) -> None:
    """Print the section and append it to the results file."""
    text = "\n".join(lines)
    print(text)
    with open(RESULTS, "a", encoding="utf-8") as handle:
        handle.write(text + "\n")

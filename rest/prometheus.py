"""Prometheus text exposition (format 0.0.4) of the worker's and its tasks' metrics."""

from __future__ import annotations

import math
from collections.abc import Iterable

from connect.api.metrics import Metric

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _escape_help(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n")


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if float(value).is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(float(value))


def _sanitize(name: str) -> str:
    out = "".join(c if c.isalnum() or c in "_:" else "_" for c in name)
    return "_" + out if out[:1].isdigit() else out


def render(metrics: Iterable[Metric]) -> str:
    """The samples grouped by family, each family with its ``# HELP`` and ``# TYPE`` lines."""
    families: dict[str, list[Metric]] = {}
    for metric in metrics:
        families.setdefault(_sanitize(metric.name), []).append(metric)
    lines: list[str] = []
    for name, samples in families.items():
        first = samples[0]
        if first.help:
            lines.append(f"# HELP {name} {_escape_help(first.help)}")
        lines.append(f"# TYPE {name} {first.kind}")
        for sample in samples:
            labels = ",".join(f'{_sanitize(k)}="{_escape_label(str(v))}"' for k, v in sorted(sample.labels.items()))
            lines.append(f"{name}{{{labels}}} {_number(sample.value)}" if labels else f"{name} {_number(sample.value)}")
    return "\n".join(lines) + ("\n" if lines else "")

"""Reading the chart's Grafana dashboard: every PromQL query, parsed by a real PromQL parser (promql-parser), and
the series and labels each one selects."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import promql_parser

from stack.procs import REPO_ROOT

DASHBOARD = REPO_ROOT / "helm" / "pyconnect" / "dashboards" / "pyconnect.json"
SCRAPE_LABELS = {"job", "instance"}  # added by Prometheus when it scrapes


def load(path: Path = DASHBOARD) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def queries(dashboard: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(panel title, PromQL) of every panel target and query variable."""
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            yield panel["title"], target["expr"]
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            match = re.fullmatch(r"label_values\((\w+),\s*(\w+)\)", variable["definition"])
            assert match, variable["definition"]
            yield f"variable {variable['name']}", f"count by ({match.group(2)}) ({match.group(1)})"


def parse(expr: str) -> Any:
    """The expression with Grafana's variables given values, parsed."""
    text = expr.replace("$__rate_interval", "5m").replace("$__interval", "1m")
    text = re.sub(r"\$\{?(\w+)\}?", r"\1", text)
    return promql_parser.parse(text)


def selected(node: Any) -> Iterator[tuple[str, set[str]]]:
    """(series name, label names it matches on or groups by) for every vector selector in ``node``."""
    kind = type(node).__name__
    if kind == "VectorSelector":
        yield node.name, {m.name for m in node.matchers.matchers}
        return
    grouping: set[str] = set()
    if kind == "AggregateExpr" and node.modifier is not None:
        grouping = set(node.modifier.labels)
    children: list[Any] = []
    for field in ("expr", "lhs", "rhs", "vector_selector", "param"):
        child = getattr(node, field, None)
        if child is not None and not isinstance(child, (int, float, str)):
            children.append(child)
    children.extend(getattr(node, "args", None) or [])
    for child in children:
        for name, labels in selected(child):
            yield name, labels | grouping

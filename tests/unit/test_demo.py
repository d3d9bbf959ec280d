"""``make demo``'s words (stack/demo.py), without starting anything: each step announced before it runs, and the
closing text naming where to look further (the REST API, ``/metrics`` on both ports, the topics, the Spark tables)
with commands that are valid as printed."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

from stack import demo
from stack.worker import ConnectWorker

REPO_ROOT = Path(__file__).resolve().parents[2]


def _text(tmp_path: Path) -> str:
    return demo.look_further(ConnectWorker(tmp_path / "worker", demo.REST_PORT), "127.0.0.1:39092")


def _python_snippets(text: str) -> list[str]:
    """The code of every ``python -c "..."`` command in ``text``."""
    return re.findall(rf'^\s*(?:\S+\s{{2,}})?{re.escape(sys.executable)} -c "(.+)"$', text, re.MULTILINE)


def test_a_step_is_announced_before_it_runs(capsys: pytest.CaptureFixture[str]) -> None:
    demo.step("starting Kafka")
    assert capsys.readouterr().out == "\n==> starting Kafka\n"


def test_look_further_names_the_rest_api_and_the_metrics(tmp_path: Path) -> None:
    text = _text(tmp_path)
    rest = f"http://127.0.0.1:{demo.REST_PORT}"
    assert f"curl -s {rest}/connectors?expand=status" in text
    assert f"curl -s {rest}/connectors/{demo.CONNECTOR}/offsets" in text
    assert f"curl -s {rest}/metrics" in text
    assert f"curl -s http://127.0.0.1:{demo.METRICS_PORT}/metrics" in text  # the metrics.listener main() sets
    assert f"{rest}/admin/loggers" in text
    assert str(tmp_path / "worker" / "logs" / "worker.log") in text
    assert "make stop" in text


def test_look_further_says_how_to_read_the_topics_and_the_spark_tables(tmp_path: Path) -> None:
    text = _text(tmp_path)
    snippets = _python_snippets(text)
    assert len(snippets) == 2, text
    topics, tables = snippets
    for code in snippets:
        ast.parse(code)  # runnable as printed: valid Python, no shell quote inside
        assert '"' not in code
    assert "KafkaConsumer(bootstrap_servers='127.0.0.1:39092').topics()" in topics
    table = demo.SPARK_OUT / "tables" / f"{demo.PREFIX}.inventory.customers"  # delta_output: tables/<topic>/
    assert f"{demo.SPARK_OUT}/tables/" in text
    assert f"read.format('delta').load('{table}')" in tables
    assert "from spark_jobs.session import session;" in tables
    session_module = ast.parse((REPO_ROOT / "spark_jobs" / "session.py").read_text())
    assert any(isinstance(node, ast.FunctionDef) and node.name == "session" for node in session_module.body)


def test_the_install_says_what_it_does_before_the_long_commands() -> None:
    """``make demo`` first builds the virtualenv: each long command follows an ``==>`` line, the big install shows
    pip's progress."""
    makefile = (REPO_ROOT / "Makefile").read_text()
    recipe = makefile.split("$(STAMP):", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    commands = [line.strip() for line in recipe]
    announced = [n for n, line in enumerate(commands) if line.startswith('@echo "==> ')]
    venv = next(n for n, line in enumerate(commands) if "-m venv" in line)
    install = next(n for n, line in enumerate(commands) if "pip install" in line and "-e " in line)
    assert any(n < venv for n in announced) and any(venv < n < install for n in announced), commands
    assert "--quiet" not in commands[install] and "-q " not in commands[install]

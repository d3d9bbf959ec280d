# The two commands a user needs: `make demo` and `make test`. Everything else is what they build on.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: venv services stop demo test lint typecheck pytest bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev,spark]"
	touch $(STAMP)

venv: $(STAMP)

services: venv
	$(PY) -m stack start

stop: venv
	$(PY) -m stack.demo stop
	$(PY) -m stack stop

demo: venv
	$(PY) -m stack.demo

lint: venv
	$(VENV)/bin/ruff check .

typecheck: venv
	$(VENV)/bin/mypy connect connectors converters rest stack compat benchmarks spark_jobs tests

pytest: venv
	$(VENV)/bin/pytest

test: lint typecheck pytest

bench: venv
	$(PY) -m benchmarks.backlog_drain

clean:
	rm -rf $(VENV) .cache .stack .pytest_cache .mypy_cache .ruff_cache

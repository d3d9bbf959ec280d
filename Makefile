# The two commands a user needs: `make demo` and `make test`. Everything else is what they build on.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: venv services stop demo test test-long test-unit lint typecheck pytest chaos soak many-connectors bench bench-compare clean

# The install also builds native/ (cargo: the MongoDB connector's Extended JSON writer, JsonConverter's writer):
# its sources are prerequisites so that an edited crate is rebuilt before the tests run.
$(STAMP): pyproject.toml native/Cargo.toml native/Cargo.lock $(wildcard native/src/*.rs native/jackson/Cargo.toml native/jackson/src/*.rs)
	@echo "==> creating the virtualenv $(VENV)"
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@echo "==> installing the project and its dependencies (pyspark is ~400 MB; native/ is built with cargo: a few minutes the first time)"
	$(PY) -m pip install --progress-bar off -e ".[dev,spark]"
	@echo "==> installed"
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

# the slowest tests listed at the end: `make test` is to stay under 60 minutes on a fresh clone (CI's budget is 90)
pytest: venv
	$(VENV)/bin/pytest --durations=40

test: lint typecheck pytest

# The end-to-end tests `make test` runs smaller, at the sizes their issues name (about 10 minutes): 10,000 mixed
# changes materialized by Spark (3,000 in `make test`), parallel snapshots of 200,000 documents (60,000)
test-long: venv
	SPARK_E2E_CHANGES=10000 PARALLEL_SNAPSHOT_DOCS=200000 $(VENV)/bin/pytest -q --durations=10 \
		tests/integration/spark/test_spark_materialize.py::test_snapshot_then_mixed_changes_in_every_format \
		tests/integration/snapshots/test_parallel_snapshot.py

# The tests that need no service: no Kafka, no SecantusDB, no worker process, no Spark session (tests/unit/spark
# starts one in a JVM; it runs with `make test`).
test-unit: venv
	$(VENV)/bin/pytest tests/unit tests/helm -m "not integration" --ignore=tests/unit/spark

# the whole fault matrix through Toxiproxy (about 20 minutes): writes benchmarks/chaos-results.md, keeps the logs in
# .stack/chaos/. `make test` runs one cell per fault kind.
chaos: venv
	mkdir -p .stack && CHAOS_MATRIX=full $(VENV)/bin/pytest tests/integration/chaos -q -s --basetemp=.stack/chaos

# 100 FileStreamSource connectors on one worker (20 in `make test`): start-up time and memory per connector, appended
# to benchmarks/results.md
many-connectors: venv
	MANY_CONNECTORS=100 $(VENV)/bin/pytest tests/integration/test_many_connectors.py -q -s

# 10 connectors on one worker for 30 minutes (3 in `make test`): writes benchmarks/soak-results.md
soak: venv
	SOAK_SECONDS=1800 $(VENV)/bin/pytest tests/integration/test_soak.py -q -s

bench: venv
	$(PY) -m benchmarks.backlog_drain

# ours and the real Debezium on Java Connect, each on its own stack, taking turns (about 15 minutes; quiet machine)
bench-compare: venv
	$(PY) -m benchmarks.side_by_side

clean:
	rm -rf $(VENV) .cache .stack .pytest_cache .mypy_cache .ruff_cache native/target

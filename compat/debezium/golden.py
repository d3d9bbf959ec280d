"""Record the golden file: the scripted operations of :mod:`compat.debezium.harness` captured by the real
Debezium MongoDB connector on the real Kafka Connect, against SecantusDB and a real Kafka broker.

    python -m compat.debezium.golden [--release 3.6.3.Final] [--out PATH]
        [--scenario streaming|snapshot|incremental|window|cloudevents|split|corpus|keys]

Re-record after changing the operations or the pinned Debezium version (compat/debezium/pom.xml); the test
``tests/integration/mongodb/test_debezium_golden.py`` runs the same operations through our connector and compares.
Starts everything on free ports in a temporary directory and stops it all before returning (about 1-2 minutes).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pymongo

from compat.debezium import (
    cloudevents_scenario,
    corpus_scenario,
    harness,
    incremental_scenario,
    keys_scenario,
    notification_order,
    releases,
    snapshot_scenario,
    split_scenario,
    window_scenario,
)

GOLDEN_DIR = Path(__file__).resolve().parents[2] / "tests" / "integration" / "mongodb" / "golden"


SCENARIOS = ("streaming", "snapshot", "incremental", "window", "cloudevents", "split", "corpus", "keys")
SCRIPTED = {"snapshot": snapshot_scenario, "incremental": incremental_scenario, "window": window_scenario,
            "cloudevents": cloudevents_scenario, "split": split_scenario, "corpus": corpus_scenario,
            "keys": keys_scenario}
"""The scenarios that run their own steps against a connector made by a callback."""


def golden_path(release: str, scenario: str = "streaming") -> Path:
    """The golden file of a Debezium release (:mod:`compat.debezium.releases`) and scenario."""
    return GOLDEN_DIR / (f"debezium-{release}.jsonl" if scenario == "streaming"
                         else f"debezium-{release}-{scenario}.jsonl")


PREFIX = "golden"
MINIMUM_RECORDS = 20


def record(out: Path, release: str | None = None, scenario: str = "streaming") -> int:
    """Run Debezium ``release`` over the scenario's operations and write the normalised records to ``out``;
    returns their number."""
    left_out = getattr(SCRIPTED.get(scenario), "PLUGIN_JARS_LEFT_OUT", ())
    with harness.running("golden", release, left_out) as (endpoints, connect):
        client: pymongo.MongoClient[dict[str, object]] = pymongo.MongoClient(endpoints.mongo_uri)
        if scenario in SCRIPTED:
            def create(config: dict[str, str]) -> None:
                harness.post_connector(connect.address, {"name": config["topic.prefix"], "config": config})
            records = SCRIPTED[scenario].capture(client, endpoints.kafka_bootstrap, PREFIX, create,
                                                 endpoints.mongo_uri)
            client.close()
        else:
            start = client.admin.command("ping")["operationTime"]
            harness.run_operations(client)
            client.close()
            config = harness.connector_config(endpoints.mongo_uri, PREFIX, harness.op_time(start))
            harness.post_connector(connect.address, {"name": "golden", "config": config})
            records = harness.read_records(endpoints.kafka_bootstrap, PREFIX, MINIMUM_RECORDS)
    records = [notification_order.canonical(r) for r in records]  # Debezium's order of them varies per JVM
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(harness.recorded_with(release) + "\n"
                   + "".join(json.dumps(r, sort_keys=False, ensure_ascii=False) + "\n" for r in records))
    return len(records)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--release", choices=releases.available(), default=releases.pinned())
    parser.add_argument("--scenario", choices=SCENARIOS, default="streaming")
    known, rest = parser.parse_known_args(argv)
    return harness.record_main(rest, __doc__, golden_path(known.release, known.scenario),
                               lambda out: record(out, known.release, known.scenario), "records",
                               minimum=SCRIPTED[known.scenario].RECORDS if known.scenario in SCRIPTED
                               else MINIMUM_RECORDS)


if __name__ == "__main__":
    sys.exit(main())

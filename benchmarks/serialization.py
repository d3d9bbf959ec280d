"""Serialization alone (no I/O, one thread, so one core): records/s of the converters and transforms over typical
MongoDB change events of about 1 KB (the documents of ``backlog_drain``, turned into Debezium records by the
connector's own ``ChangeEventConverter`` beforehand).

Rates are records per CPU-second of the benchmark's single thread (``time.process_time``), so they mean "on one
core" even on a busy machine. Measured per record: the value, and key + value, with JsonConverter (schemas
enabled, what most Debezium users run); the value with CloudEventsConverter, with its default JSON data schema
and without; ExtractNewDocumentState + JsonConverter (key + value); and the seed example's chain (HeaderFrom
gated by a predicate, the headers written by JsonConverter, CloudEvents from header metadata, the key). Prints
the figures and appends them to ``benchmarks/results.md``.

    python -m benchmarks.serialization [--records 5000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import bson
from bson import Timestamp
from bson.codec_options import CodecOptions, DatetimeConversion

from benchmarks.backlog_drain import document
from connect.api.records import SourceRecord
from connect.runtime.transformation_chain import build_chain
from connectors.mongodb.event_converter import ChangeEventConverter
from connectors.mongodb.transforms.extract_new_document_state import ExtractNewDocumentState
from converters.cloudevents import CloudEventsConverter
from converters.json import JsonConverter

RESULTS = Path(__file__).resolve().parent / "results.md"
GOALS = {"JsonConverter": 200_000, "CloudEventsConverter": 150_000, "ExtractNewDocumentState": 100_000}
"""records/s on one core, by the scenario's first word (issue 15); other scenarios: DEFAULT_GOAL."""
DEFAULT_GOAL = 50_000


def goal(scenario: str) -> int:
    """The records/s goal of a scenario."""
    return GOALS.get(scenario.split(",")[0].split(" ")[0], DEFAULT_GOAL)


def records(count: int) -> list[SourceRecord]:
    """``count`` insert and update events of about 1 KB documents, as the MongoDB connector emits them."""
    rng = random.Random(7)
    conv = ChangeEventConverter(topic_prefix="bench", run_id="run", clock_ms=lambda: 1_800_000_000_000)
    options: CodecOptions[Any] = CodecOptions(datetime_conversion=DatetimeConversion.DATETIME_AUTO)
    out: list[SourceRecord] = []
    for n in range(count):
        doc = document(n, rng)
        change = {"_id": {"_data": f"82{n:016X}"}, "operationType": "insert" if n % 4 else "update",
                  "clusterTime": Timestamp(1_795_265_284 + n // 100, n % 100 + 1),
                  "wallTime": datetime(2026, 11, 21, tzinfo=UTC), "ns": {"db": "shop", "coll": "customers"},
                  "documentKey": {"_id": n}, "fullDocument": doc}
        if n % 4 == 0:
            change["updateDescription"] = {"updatedFields": {"score": doc["score"]}, "removedFields": []}
        out.append(conv.to_records(bson.decode(bson.encode(change), codec_options=options))[0])
    return out


def _json(conv: JsonConverter, keys: JsonConverter) -> Callable[[SourceRecord], Any]:
    def run(r: SourceRecord) -> Any:
        keys.from_connect_data(r.topic, r.key_schema, r.key)
        return conv.from_connect_data(r.topic, r.value_schema, r.value, r.headers)
    return run


def scenarios() -> dict[str, Callable[[SourceRecord], Any]]:
    """name -> per-record work."""
    values, keys = JsonConverter(), JsonConverter()
    values.configure({}, False)
    keys.configure({}, True)
    ce, ce_plain, ce_header = CloudEventsConverter(), CloudEventsConverter(), CloudEventsConverter()
    ce.configure({}, False)
    ce_plain.configure({"json.schemas.enable": "false"}, False)
    ce_header.configure({"metadata.source": "header,id:generate,type:generate"}, False)
    unwrap = ExtractNewDocumentState()
    unwrap.configure({})
    seed_chain = build_chain({
        "transforms": "meta", "transforms.meta.type": "org.apache.kafka.connect.transforms.HeaderFrom$Value",
        "transforms.meta.fields": "source,op,transaction", "transforms.meta.headers": "source,op,transaction",
        "transforms.meta.operation": "copy", "transforms.meta.predicate": "hb", "transforms.meta.negate": "true",
        "predicates": "hb", "predicates.hb.type": "TopicNameMatches", "predicates.hb.pattern": "__debezium-heartbeat.*",
    })
    json_kv = _json(values, keys)

    def cloudevents(conv: CloudEventsConverter) -> Callable[[SourceRecord], Any]:
        def run(r: SourceRecord) -> Any:
            return conv.from_connect_data(r.topic, r.value_schema, r.value, r.headers)
        return run

    def unwrapped(r: SourceRecord) -> Any:
        out = unwrap.apply(r)
        assert out is not None
        return json_kv(out)

    def seed(r: SourceRecord) -> Any:
        out = seed_chain.apply(r)
        keys.from_connect_data(out.topic, out.key_schema, out.key)
        for h in out.headers[-3:]:
            values.from_connect_data(out.topic, h.schema, h.value)
        return ce_header.from_connect_data(out.topic, out.value_schema, out.value, out.headers)

    def json_value(r: SourceRecord) -> Any:
        return values.from_connect_data(r.topic, r.value_schema, r.value, r.headers)

    return {
        "JsonConverter, schemas (value)": json_value,
        "JsonConverter, schemas (key + value)": json_kv,
        "CloudEventsConverter, data with schema (value)": cloudevents(ce),
        "CloudEventsConverter, json.schemas.enable=false (value)": cloudevents(ce_plain),
        "ExtractNewDocumentState + JsonConverter": unwrapped,
        "seed chain: HeaderFrom + predicate + CloudEvents from headers": seed,
    }


def measure(work: Callable[[SourceRecord], Any], batch: list[SourceRecord], rounds: int) -> tuple[float, int]:
    """Median records/s over ``rounds`` passes, and the mean serialized size of a value."""
    size = sum(len(work(r) or b"") for r in batch) // len(batch)  # also warms the schema caches
    rates = []
    for _ in range(rounds):
        start = time.process_time()  # CPU time: records per second of one core, whatever else the machine runs
        for r in batch:
            work(r)
        rates.append(len(batch) / (time.process_time() - start))
    return statistics.median(rates), size


def main() -> None:
    """Run every scenario, print and record the figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    batch = records(args.records)
    lines = []
    for name, work in scenarios().items():
        rate, size = measure(work, batch, args.rounds)
        line = f"| {name} | {rate:,.0f} | {size:,} B | {goal(name):,} | {'yes' if rate >= goal(name) else 'no'} |"
        print(line, flush=True)
        lines.append(line)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    section = (f"\n## serialization — {stamp} — {platform.machine()}, {platform.python_version()}, one thread\n\n"
               f"{args.records} change events of ~1 KB documents, median of {args.rounds} passes, records per "
               f"CPU-second (one core); 1-minute load average {os.getloadavg()[0]:.2f} at the end.\n\n"
               "| scenario | records/s | value size | goal | goal met |\n| --- | --- | --- | --- | --- |\n"
               + "\n".join(lines) + "\n")
    with RESULTS.open("a", encoding="utf-8") as out:
        out.write(section)


if __name__ == "__main__":
    main()

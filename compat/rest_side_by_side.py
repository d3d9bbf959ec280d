"""Side-by-side REST check: the same requests against Apache Kafka Connect 4.3.1 (Java) and against our worker.

    python -m compat.rest_side_by_side [--work-dir DIR]

Starts a local Kafka broker (``stack``) on free ports in a temporary state dir, the reference Kafka Connect in
distributed mode from the Maven Central jars pinned in ``compat/pom.xml`` (fetched once into ``.cache/``), and our
worker (``stack.worker.ConnectWorker``), each with its own group id and internal topics. Then it sends the same
sequence of requests to both and compares, per request, the status code, the JSON keys of the body (the key
sets and their order, at every level), its values (except the run- or implementation-specific ones in
:data:`RUN_SPECIFIC`: worker ids, timestamps, documentation text) and the headers clients use
(:data:`COMPARED_HEADERS`). Plugins installed on one side only (:data:`JAVA_ONLY_PLUGINS`, :data:`OUR_ONLY_PLUGINS`)
are left out of the arrays that list them; every other element is compared, in order.

Prints a table and exits 1 if a status code, a key set, a value or a header differs, except for the few differences
listed, each with its reason, in :data:`KNOWN_DIFFERENCES`; a status poll that reaches its state on one side only
(e.g. PAUSED) also counts as a difference, and so do a value of another type (a string where Java has a number, null
where it has a value) and an array of another length. With ``--work-dir`` every request and both answers are kept in
``replies.json`` there. Every process it starts is stopped before it returns. Takes about 30-60 s.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import stack
from compat.java_connect import JavaConnect, ensure_libs
from stack.procs import StackError
from stack.service import Service
from stack.worker import ConnectWorker, distributed_properties

REQUEST_TIMEOUT = 90.0
COMPARED_HEADERS = ("Location", "Content-Type")
"""Answer headers clients use: compared on both sides (a ``Location`` with each side's own address removed)."""
POLL_TIMEOUT = 30.0
CONNECTOR = "compat-file-source"
TOPIC = "compat-file-lines"
FILE_SOURCE_CLASS = "org.apache.kafka.connect.file.FileStreamSourceConnector"
LOGGER = "org.apache.kafka.connect.file"


# -- known differences -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class KnownDifference:
    """A deliberate status difference: forgiven only when Java and we answer exactly these codes."""

    java_status: int
    our_status: int
    reason: str


#: Request title (see :attr:`Step.title`) -> the documented difference.
KNOWN_DIFFERENCES: dict[str, KnownDifference] = {
    "POST /connectors (malformed JSON)": KnownDifference(
        500, 400,
        "Java's Jersey/Jackson provider lets the JsonParseException reach the generic exception mapper (500); "
        "a body that is not JSON is the client's error, so we answer 400 Bad Request on purpose.",
    ),
}




# -- HTTP --------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Reply:
    status: int
    body: Any  # the parsed JSON body; None if empty (or not JSON, then see ``text``)
    text: str
    headers: dict[str, str] = field(default_factory=dict)  # COMPARED_HEADERS present in the answer


def http(base: str, method: str, path: str, *, body: Any = None, raw: bytes | None = None) -> Reply:
    """One request; ``raw`` is sent as is (with a JSON content type), else ``body`` as JSON if not None."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    headers = {"Accept": "application/json"}
    if data is not None:
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(f"{base}{path}", data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT) as response:
            status, payload, got = response.status, response.read(), response.headers
    except urllib.error.HTTPError as err:
        status, payload, got = err.code, err.read(), err.headers
    headers = {name: str(got[name]) for name in COMPARED_HEADERS if got is not None and got[name] is not None}
    text = payload.decode("utf-8", errors="replace")
    try:
        parsed = json.loads(text) if text.strip() else None
    except ValueError:
        parsed = None
    return Reply(status, parsed, text, headers)


# -- the request sequence ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    method: str
    path: str
    body: Any = None
    raw: bytes | None = None
    label: str = ""  # tells apart requests with the same method and path
    expect: int | None = None  # what the Java reference is expected to answer (a note if it does not)
    until: Callable[[Reply], bool] | None = None  # poll (each side) until true, at most POLL_TIMEOUT s
    unordered: tuple[str, ...] = ()  # JSON paths of config maps (Java keeps them in hash order): key sets only
    maps: tuple[str, ...] = ()  # JSON paths whose keys are data that differs (logger names): value shapes compared
    free: tuple[str, ...] = ()  # JSON paths whose values differ on purpose (see where the step is defined)

    @property
    def title(self) -> str:
        return f"{self.method} {self.path}" + (f" ({self.label})" if self.label else "")


def _state(reply: Reply) -> str:
    if reply.status != 200 or not isinstance(reply.body, dict):
        return f"HTTP {reply.status}"
    status = reply.body
    if isinstance(status.get(CONNECTOR), dict):  # GET /connectors?expand=status: {name: {"status": {...}}}
        status = status[CONNECTOR].get("status") or {}
    connector = status.get("connector") or {}
    tasks = status.get("tasks") or []
    return "/".join([str(connector.get("state")), *(str(t.get("state")) for t in tasks)])


def reached(state: str) -> Callable[[Reply], bool]:
    """Poll predicate on a status reply: connector and all tasks in ``state`` (STOPPED: no tasks), or FAILED."""

    def check(reply: Reply) -> bool:
        if reply.status != 200 or not isinstance(reply.body, dict):
            return False
        states = _state(reply).split("/")
        if "FAILED" in states:
            return True  # will not get better; the row shows it
        if state == "STOPPED":
            return states == ["STOPPED"]
        return len(states) > 1 and all(s == state for s in states)

    return check


SMTS = {
    "transforms": "route,meta,drop",
    "transforms.route.type": "RegexRouter", "transforms.route.regex": "compat-(.*)",
    "transforms.route.replacement": "routed-$1",
    "transforms.meta.type": "org.apache.kafka.connect.transforms.InsertField$Value",
    "transforms.meta.topic.field": "topic", "transforms.meta.predicate": "notTombstone",
    "transforms.meta.negate": "true",
    "transforms.drop.type": "Filter", "transforms.drop.predicate": "isTombstone",
    "predicates": "isTombstone,notTombstone",
    "predicates.isTombstone.type": "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
    "predicates.notTombstone.type": "RecordIsTombstone",
}
BAD_SMTS = {
    "transforms": "route,x,y",
    "transforms.route.type": "RegexRouter", "transforms.route.replacement": "r",
    "transforms.x.type": "com.example.NoSuchTransform",
    "transforms.y.type": "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
    "predicates": "p", "predicates.p.type": "TopicNameMatches",
}


def sequence(data_file: Path) -> list[Step]:
    """The requests, in order, sent to both workers."""
    c = f"/connectors/{CONNECTOR}"
    config = {"connector.class": FILE_SOURCE_CLASS, "tasks.max": "1", "file": str(data_file), "topic": TOPIC}
    info = ("$.config",)
    plugin = "/connector-plugins/FileStreamSource"
    return [
        Step("GET", "/", expect=200),
        Step("GET", "/connectors", expect=200),
        Step("GET", "/connector-plugins", expect=200),
        Step("GET", "/connector-plugins?connectorsOnly=false", expect=200),
        Step("POST", "/connectors", {"name": CONNECTOR, "config": config}, expect=201, unordered=info),
        Step("POST", "/connectors", {"name": CONNECTOR, "config": config}, label="again", expect=409),
        Step("POST", "/connectors", {"name": "compat-no-class", "config": {"tasks.max": "1"}},
             label="without connector.class", expect=400),
        Step("POST", "/connectors", raw=b'{"name": "compat-bad", "config": {', label="malformed JSON", expect=500),
        Step("GET", c, expect=200, unordered=info),
        Step("GET", f"{c}/config", expect=200, unordered=("$",)),
        Step("GET", f"{c}/status", label="until RUNNING", expect=200, until=reached("RUNNING")),
        Step("GET", f"{c}/tasks", expect=200, unordered=("$[].config",)),
        Step("GET", f"{c}/tasks/0/status", expect=200),
        Step("GET", f"{c}/tasks/7/status", label="no such task", expect=404),
        Step("GET", "/connectors/compat-missing", label="no such connector", expect=404),
        Step("PUT", f"{c}/config", {**config, "batch.size": "100"}, expect=200, unordered=info),
        Step("PATCH", f"{c}/config", {"batch.size": "50"}, expect=200, unordered=info),
        Step("GET", f"{c}/tasks", label="until the new task config", expect=200, unordered=("$[].config",),
             until=lambda r: isinstance(r.body, list) and all(
                 t.get("config", {}).get("batch.size") == "50" for t in r.body) and bool(r.body)),
        # a task restarted for its new config passes through UNASSIGNED; the old RUNNING may still show here
        Step("GET", "/connectors?expand=status&expand=info", label="until RUNNING after reconfiguration",
             expect=200, unordered=("$.*.info.config",), until=reached("RUNNING")),
        Step("PUT", f"{c}/pause", expect=202),
        Step("GET", f"{c}/status", label="until PAUSED", expect=200, until=reached("PAUSED")),
        Step("PUT", f"{c}/resume", expect=202),
        Step("GET", f"{c}/status", label="until RUNNING after resume", expect=200, until=reached("RUNNING")),
        Step("POST", f"{c}/restart", expect=204),
        Step("GET", f"{c}/status", label="until RUNNING after restart", expect=200, until=reached("RUNNING")),
        Step("POST", f"{c}/restart?includeTasks=true", expect=202),
        Step("GET", f"{c}/status", label="until RUNNING after restart with tasks", expect=200,
             until=reached("RUNNING")),
        Step("POST", f"{c}/tasks/0/restart", expect=204),
        Step("GET", f"{c}/status", label="until RUNNING after task restart", expect=200, until=reached("RUNNING")),
        Step("GET", f"{c}/offsets", label="while running", expect=200),
        Step("DELETE", f"{c}/offsets", label="while running", expect=400),
        Step("PUT", f"{c}/stop", expect=204),
        Step("GET", f"{c}/status", label="until STOPPED", expect=200, until=reached("STOPPED")),
        Step("GET", f"{c}/offsets", expect=200),
        Step("PATCH", f"{c}/offsets",
             {"offsets": [{"partition": {"filename": str(data_file)}, "offset": {"position": 0}}]}, expect=200),
        Step("GET", f"{c}/offsets", label="after PATCH", expect=200),
        Step("DELETE", f"{c}/offsets", expect=200),
        Step("PUT", f"{c}/resume", label="after stop", expect=202),
        Step("GET", f"{c}/status", label="until RUNNING after stop", expect=200, until=reached("RUNNING")),
        Step("GET", f"{c}/topics", expect=200),
        Step("PUT", f"{c}/topics/reset", expect=202),
        Step("GET", f"{plugin}/config", expect=200),
        Step("PUT", f"{plugin}/config/validate", {**config, "name": CONNECTOR, "connector.class": "FileStreamSource"},
             label="valid", expect=200),
        Step("PUT", f"{plugin}/config/validate", {"connector.class": "FileStreamSource", "tasks.max": "many"},
             label="invalid", expect=200),
        Step("PUT", f"{plugin}/config/validate", {**config, "name": CONNECTOR, **SMTS}, label="transforms",
             expect=200),
        Step("PUT", f"{plugin}/config/validate", {**config, "name": CONNECTOR, **BAD_SMTS}, label="bad transforms",
             expect=200),
        # The message lists the same errors; ours prefixes the key of each error that does not name it (a 400
        # names the field it is about), Java's does not.
        Step("POST", "/connectors", {"name": "compat-bad-smt", "config": {**config, **BAD_SMTS}},
             label="bad transforms", expect=400, free=("$.message",)),
        Step("GET", "/connector-plugins/org.apache.kafka.connect.transforms.HeaderFrom$Value/config", expect=200),
        Step("GET", "/connector-plugins/TopicNameMatches/config", expect=200),
        Step("GET", "/admin/loggers", expect=200, maps=("$",)),
        Step("GET", "/admin/loggers/root", expect=200),
        Step("PUT", f"/admin/loggers/{LOGGER}", {"level": "DEBUG"}, expect=200),
        Step("GET", f"/admin/loggers/{LOGGER}", expect=200),
        Step("PUT", f"/admin/loggers/{LOGGER}?scope=cluster", {"level": "INFO"}, expect=204),
        Step("GET", "/health", expect=200),
        Step("GET", "/compat/no-such-path", label="unknown path", expect=404),
        Step("DELETE", c, expect=204),
        Step("GET", c, label="deleted", expect=404),
    ]


# -- comparing bodies --------------------------------------------------------------------------------------------
def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


RUN_SPECIFIC: tuple[str, ...] = (
    "*.worker_id",  # host:port of each worker
    "$.last_modified", "$.*.last_modified",  # logger level change times
    "$.configs[].definition.documentation", "$[].documentation",  # our own words, never Java's text
)
"""JSON paths whose values depend on the run or on the implementation; every other value is compared."""

JAVA_ONLY_PLUGINS: dict[str, str] = {
    "org.apache.kafka.connect.file.FileStreamSinkConnector":
        "this worker runs source connectors only (README, Where we differ)",
}
"""Plugins of the reference Java Connect that this worker does not have, each with the reason."""
OUR_ONLY_PLUGINS = "io.debezium."
"""The prefix of the plugins only this worker has: it bundles Debezium's MongoDB connector, ExtractNewDocumentState
and CloudEventsConverter, the reference Java Connect runs with Kafka's plugins only."""


def _one_sided(element: Any, java: bool) -> bool:
    """Whether an array element names a plugin installed on one side only: a class name (the recommended values of
    a ``*.converter`` or ``transforms.*.type``, the logger of a plugin's class in a ``PUT /admin/loggers`` answer)
    or a ``{"class": ...}`` entry of ``GET /connector-plugins``."""
    name = element.get("class") if isinstance(element, dict) else element
    if not isinstance(name, str):
        return False
    return name in JAVA_ONLY_PLUGINS if java else name.startswith(OUR_ONLY_PLUGINS)


def without_one_sided_plugins(body: Any, java: bool) -> Any:
    """``body`` without the array elements that name a plugin installed on one side only (see
    :data:`JAVA_ONLY_PLUGINS`, :data:`OUR_ONLY_PLUGINS`): the rest of such an array, order and values, is compared."""
    if isinstance(body, dict):
        return {k: without_one_sided_plugins(v, java) for k, v in body.items()}
    if isinstance(body, list):
        return [without_one_sided_plugins(e, java) for e in body if not _one_sided(e, java)]
    return body


def _matches(path: str, patterns: Sequence[str]) -> bool:
    """Whether ``path`` matches one of ``patterns``, where ``*`` is any text and everything else (``[]`` too) is
    literal."""
    return any(re.fullmatch(".*".join(map(re.escape, p.split("*"))), path) for p in patterns)


def compare_json(java: Any, ours: Any, step: Step, path: str = "$") -> list[str]:
    """The differences between two bodies, as ``"<json path>: ..."`` lines: key sets and order, value types (null
    included), array lengths and values, each except where :data:`RUN_SPECIFIC` or the step exempts it."""
    keys: list[str] = []

    def walk(a: Any, b: Any, at: str, values: bool = True) -> None:
        if isinstance(a, dict) and isinstance(b, dict):
            if _matches(at, step.maps):
                if a and b:  # the keys are names that differ by nature; their values have one shape
                    walk(next(iter(a.values())), next(iter(b.values())), f"{at}.*", values=False)
                return
            if set(a) != set(b):
                missing = [k for k in a if k not in b]
                extra = [k for k in b if k not in a]
                keys.append(f"{at}: Java has keys {missing} we lack; we have {extra} Java lacks"
                            if missing and extra else
                            f"{at}: we lack Java's keys {missing}" if missing else f"{at}: we add keys {extra}")
            elif list(a) != list(b) and not _matches(at, step.unordered):
                keys.append(f"{at}: key order: Java {list(a)}, ours {list(b)}")
            for k in a:
                if k in b:
                    walk(a[k], b[k], f"{at}.{k}", values)
        elif isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b) and not _matches(f"{at}[]", RUN_SPECIFIC):
                keys.append(f"{at}: Java {len(a)} element(s), ours {len(b)}")
            for x, y in zip(a, b, strict=False):  # the extra elements of the longer side are the line above
                walk(x, y, f"{at}[]", values)
        elif _kind(a) != _kind(b) and not _matches(at, (*RUN_SPECIFIC, *step.free)):
            keys.append(f"{at}: Java {_kind(a)} {json.dumps(a)[:60]}, ours {_kind(b)} {json.dumps(b)[:60]}")
        elif values and a != b and step.title not in KNOWN_DIFFERENCES \
                and not _matches(at, (*RUN_SPECIFIC, *step.free)):
            keys.append(f"{at}: value Java {json.dumps(a)[:80]}, ours {json.dumps(b)[:80]}")

    walk(java, ours, path)
    return list(dict.fromkeys(keys))


@dataclass
class Outcome:
    step: Step
    java: Reply
    ours: Reply
    key_diffs: list[str] = field(default_factory=list)

    @property
    def known(self) -> KnownDifference | None:
        known = KNOWN_DIFFERENCES.get(self.step.title)
        if known and (known.java_status, known.our_status) == (self.java.status, self.ours.status):
            return known
        return None

    @property
    def status_ok(self) -> bool:
        return self.java.status == self.ours.status or self.known is not None

    @property
    def failed(self) -> bool:
        return not self.status_ok or bool(self.key_diffs)

    def as_json(self) -> dict[str, Any]:
        return {"request": self.step.title, "body": self.step.body, "failed": self.failed,
                "key_diffs": self.key_diffs,
                "java": {"status": self.java.status, "body": self.java.body if self.java.body is not None
                         else self.java.text},
                "ours": {"status": self.ours.status, "body": self.ours.body if self.ours.body is not None
                         else self.ours.text}}

    def note(self) -> str:
        notes = []
        if self.known is not None:
            notes.append("known difference")
        if self.step.expect is not None and self.java.status != self.step.expect:
            notes.append(f"Java answered {self.java.status}, expected {self.step.expect}")
        if self.step.until is not None:
            notes.append(f"state Java {_state(self.java)}, ours {_state(self.ours)}")
        return "; ".join(notes)


def run_step(base: str, step: Step) -> Reply:
    reply = http(base, step.method, step.path, body=step.body, raw=step.raw)
    if step.until is not None:
        deadline = time.monotonic() + POLL_TIMEOUT
        while not step.until(reply) and time.monotonic() < deadline:
            time.sleep(0.3)
            reply = http(base, step.method, step.path, body=step.body, raw=step.raw)
    return reply


def _media_type(value: str) -> str:
    return value.split(";")[0].strip().lower()


def compare_headers(java: Reply, java_base: str, ours: Reply, our_base: str) -> list[str]:
    """Differences in :data:`COMPARED_HEADERS` that Java sends (a client cannot rely on one Java leaves out, e.g.
    the ``Content-Type`` of its 404 for an unknown path): presence, the ``Location`` path, the ``Content-Type``
    media type (charset parameters aside: both are UTF-8)."""
    diffs = []
    for name in COMPARED_HEADERS:
        a, b = java.headers.get(name), ours.headers.get(name)
        if a is None:
            continue
        if b is None:
            diffs.append(f"header {name}: Java {a!r}, ours {b!r}")
        elif name == "Location" and a.removeprefix(java_base) != b.removeprefix(our_base):
            diffs.append(f"header Location: Java {a!r}, ours {b!r}")
        elif name == "Content-Type" and (java.body is not None or ours.body is not None) \
                and _media_type(a) != _media_type(b):
            diffs.append(f"header Content-Type: Java {a!r}, ours {b!r}")
    return diffs


def compare(java_base: str, our_base: str, steps: Sequence[Step]) -> list[Outcome]:
    """Send each step to Java, then to us, and compare the two answers."""
    outcomes = []
    for step in steps:
        java, ours = run_step(java_base, step), run_step(our_base, step)
        key_diffs = compare_json(without_one_sided_plugins(java.body, java=True),
                                 without_one_sided_plugins(ours.body, java=False), step)
        key_diffs += compare_headers(java, java_base, ours, our_base)
        if step.until is not None and step.until(java) != step.until(ours):
            key_diffs.insert(0, f"state: Java {_state(java)}, ours {_state(ours)} (after polling up to "
                                f"{POLL_TIMEOUT:.0f} s)")
        if (java.body is None) != (ours.body is None):
            key_diffs.insert(0, f"$: body Java {java.text[:80]!r}, ours {ours.text[:80]!r}")
        outcomes.append(Outcome(step, java, ours, key_diffs))
    return outcomes


# -- running everything ------------------------------------------------------------------------------------------
def run_comparison(kafka_bootstrap: str | None = None, *, work_dir: Path | None = None) -> list[Outcome]:
    """Start what is needed, run :func:`sequence` against both workers, stop everything; return the outcomes.

    ``kafka_bootstrap``: an existing broker to use (the test suite's), else a stack is started on free ports in
    ``work_dir`` (a temporary directory, removed afterwards, if None).
    """
    own_dir = work_dir is None
    root = Path(tempfile.mkdtemp(prefix="compat-rest-")) if work_dir is None else Path(work_dir)
    root.mkdir(parents=True, exist_ok=True)
    stack_dir = root / "stack"
    started_stack = False
    workers: list[Service] = []
    try:
        ensure_libs()
        if kafka_bootstrap is None:
            kafka_port, mongo_port = stack.free_ports(2)
            started_stack = True
            kafka_bootstrap = stack.start(stack_dir, kafka_port=kafka_port, mongo_port=mongo_port,
                                          mongo=False).kafka_bootstrap
        run = uuid.uuid4().hex[:8]
        java_port, our_port = stack.free_ports(2)
        java = JavaConnect(root / "java", java_port,
                           distributed_properties(kafka_bootstrap, java_port, group_id=f"compat-java-{run}"))
        ours = ConnectWorker(root / "ours", our_port,
                             distributed_properties(kafka_bootstrap, our_port, group_id=f"compat-ours-{run}"))
        workers = [java, ours]
        with ThreadPoolExecutor(max_workers=2) as pool:
            for future in [pool.submit(w.start) for w in workers]:
                future.result()
        for w in workers:
            print(f"compat: {w.name} {w.address} started in {w.startup_seconds or 0:.1f} s, log: {w.log_path}",
                  file=sys.stderr, flush=True)
        data_file = root / "data" / "lines.txt"
        data_file.parent.mkdir(parents=True, exist_ok=True)
        data_file.write_text("".join(f"line {n}\n" for n in range(1, 6)), encoding="utf-8")
        return compare(java.address, ours.address, sequence(data_file))
    finally:
        errors = []
        for w in workers:
            try:
                w.stop(timeout=20)
            except StackError as exc:
                errors.append(f"{w.name}: {exc}")
        if started_stack:
            try:
                stack.stop(stack_dir)
            except StackError as exc:
                errors.append(f"stack: {exc}")
        if own_dir and not errors:
            shutil.rmtree(root, ignore_errors=True)
        if errors:
            print(f"compat: could not stop everything ({root} kept): {'; '.join(errors)}", file=sys.stderr)


def render(outcomes: Sequence[Outcome]) -> str:
    """The table, then the details of every difference and the known differences met."""
    width = max(len(o.step.title) for o in outcomes)
    lines = [f"{'request':<{width}}  java  ours  keys  note", "-" * (width + 30)]
    for o in outcomes:
        keys = "NO" if o.key_diffs else "yes"
        status = "" if o.java.status == o.ours.status else (" ~" if o.known else " !")
        lines.append(f"{o.step.title:<{width}}  {o.java.status:<4}  {o.ours.status:<4}  {keys:<4}  "
                     f"{o.note()}{status}".rstrip())
    failed = [o for o in outcomes if o.failed]
    if failed:
        lines += ["", f"DIFFERENCES ({len(failed)} request(s)):"]
        for o in failed:
            lines.append(f"* {o.step.title}: Java {o.java.status}, ours {o.ours.status}")
            lines += [f"    {d}" for d in o.key_diffs]
            if o.java.status != o.ours.status:
                lines.append(f"    Java body: {o.java.text[:300]}")
                lines.append(f"    our body:  {o.ours.text[:300]}")
    known = [o for o in outcomes if o.known is not None]
    if known:
        lines += ["", "KNOWN DIFFERENCES (not failing):"]
        lines += [f"* {o.step.title}: Java {o.java.status}, ours {o.ours.status}: {o.known.reason}"
                  for o in known if o.known is not None]
    lines += ["", f"{len(outcomes)} requests, {len(failed)} with differences"]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m compat.rest_side_by_side",
                                     description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--work-dir", type=Path,
                        help="state dir to use and keep, with every request and both answers in "
                             "replies.json (default: a temporary dir, removed afterwards)")
    args = parser.parse_args(argv)
    outcomes = run_comparison(work_dir=args.work_dir)
    print(render(outcomes), flush=True)
    if args.work_dir is not None:
        dump = args.work_dir / "replies.json"
        dump.write_text(json.dumps([o.as_json() for o in outcomes], indent=1) + "\n", encoding="utf-8")
        print(f"every request and both answers: {dump}")
    return 1 if any(o.failed for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())

"""REST under load: 50 concurrent clients against a 3-worker cluster for ``REST_LOAD_SECONDS`` (60 in
``make test``): status polls, listings, config updates, pause/resume, restarts and validations, spread over the
three workers. No answer is a 5xx (a 409 during a rebalance is Connect's answer), none takes longer than
``MAX_LATENCY``, and once the load stops every connector's config and state are the last ones its owner set.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.integration.support import Worker, create_connector, unique

pytestmark = [pytest.mark.integration, pytest.mark.timeout(int(os.environ.get("REST_LOAD_SECONDS", "60")) + 600)]

SECONDS = float(os.environ.get("REST_LOAD_SECONDS", "60"))
CONNECTORS = 10
READERS = 40  # + one owner per connector: 50 clients
MAX_LATENCY = 30.0
FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"


class Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.codes: Counter[int] = Counter()
        self.slowest = 0.0
        self.slowest_call = ""
        self.errors: list[str] = []

    def call(self, client: httpx.Client, method: str, path: str, **kwargs: Any) -> httpx.Response | None:
        started = time.monotonic()
        try:
            reply = client.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            with self.lock:
                self.errors.append(f"{method} {path}: {exc!r}")
            return None
        took = time.monotonic() - started
        with self.lock:
            self.codes[reply.status_code] += 1
            if took > self.slowest:
                self.slowest, self.slowest_call = took, f"{method} {path}"
            if reply.status_code >= 500:
                self.errors.append(f"{method} {path}: {reply.status_code} {reply.text[:300]}")
        return reply


def _config(data: Path, topic: str, batch: int) -> dict[str, str]:
    return {"connector.class": FILE_SOURCE, "file": str(data), "topic": topic, "tasks.max": "1",
            "batch.size": str(batch)}


def _owner(url: str, name: str, data: Path, topic: str, stop: threading.Event, tally: Tally,
           last: dict[str, tuple[dict[str, str], str]]) -> None:
    """Updates its connector's config and pauses/resumes it; remembers what it last set (acknowledged)."""
    rng = random.Random(name)
    with httpx.Client(base_url=url, timeout=MAX_LATENCY * 2) as client:
        batch, state = 100, "RUNNING"
        while not stop.is_set():
            if rng.random() < 0.6:
                wanted = _config(data, topic, batch + 1)
                reply = tally.call(client, "PUT", f"/connectors/{name}/config", json=wanted)
                if reply is not None and reply.status_code in (200, 201):
                    batch = batch + 1
            else:
                action = "pause" if state == "RUNNING" else "resume"
                reply = tally.call(client, "PUT", f"/connectors/{name}/{action}")
                if reply is not None and reply.status_code == 202:
                    state = "PAUSED" if action == "pause" else "RUNNING"
            last[name] = (_config(data, topic, batch), state)
            stop.wait(rng.uniform(0.2, 0.6))


def _reader(urls: list[str], names: list[str], seed: int, stop: threading.Event, tally: Tally) -> None:
    rng = random.Random(seed)
    clients = [httpx.Client(base_url=url, timeout=MAX_LATENCY * 2) for url in urls]
    validate = {"connector.class": FILE_SOURCE, "topic": "t", "file": "/tmp/x", "batch.size": "not-a-number"}
    actions: list[tuple[float, Callable[[httpx.Client, str], Any]]] = [
        (0.5, lambda c, n: tally.call(c, "GET", f"/connectors/{n}/status")),
        (0.15, lambda c, n: tally.call(c, "GET", "/connectors?expand=status&expand=info")),
        (0.1, lambda c, n: tally.call(c, "GET", f"/connectors/{n}/config")),
        (0.1, lambda c, n: tally.call(c, "POST", f"/connectors/{n}/restart?includeTasks=true&onlyFailed=true")),
        (0.15, lambda c, n: tally.call(c, "PUT", "/connector-plugins/FileStreamSourceConnector/config/validate",
                                       json=validate)),
    ]
    try:
        while not stop.is_set():
            roll, client, name = rng.random(), rng.choice(clients), rng.choice(names)
            for weight, action in actions:
                roll -= weight
                if roll <= 0:
                    action(client, name)
                    break
            stop.wait(rng.uniform(0.05, 0.3))
    finally:
        for client in clients:
            client.close()


def test_fifty_clients_on_three_workers(worker_factory: Callable[..., Worker], tmp_path: Path) -> None:
    workers = [worker_factory() for _ in range(3)]
    urls = [w.url for w in workers]
    data = tmp_path / "lines.txt"
    data.write_text("".join(f"line {n}\n" for n in range(100)))
    names = [unique("load-") for _ in range(CONNECTORS)]
    topic = unique("load-lines-")
    for i, name in enumerate(names):
        create_connector(workers[i % 3], name, _config(data, topic, 100), timeout=120)
    stop, tally = threading.Event(), Tally()
    last: dict[str, tuple[dict[str, str], str]] = {}
    threads = [threading.Thread(target=_owner, args=(urls[i % 3], name, data, topic, stop, tally, last))
               for i, name in enumerate(names)]
    threads += [threading.Thread(target=_reader, args=(urls, names, seed, stop, tally)) for seed in range(READERS)]
    for thread in threads:
        thread.start()
    stop.wait(SECONDS)
    stop.set()
    for thread in threads:
        thread.join(MAX_LATENCY * 3)
    print(f"\nREST load: {sum(tally.codes.values())} requests, codes {dict(tally.codes)}, "
          f"slowest {tally.slowest:.1f} s ({tally.slowest_call})")
    assert not tally.errors, f"{len(tally.errors)} failed requests, first: {tally.errors[:5]}"
    assert tally.slowest <= MAX_LATENCY, f"slowest request {tally.slowest:.1f} s: {tally.slowest_call}"
    assert tally.codes[200] > 0

    def in_state(state: str) -> Callable[[dict[str, Any]], bool]:
        return lambda s: (s["connector"]["state"] == state and bool(s["tasks"])
                          and all(t["state"] == state for t in s["tasks"]))

    for name in names:  # every worker ends up answering what the owner set last
        config, state = last[name]
        for w in workers:
            w.wait_status(name, in_state(state), timeout=120)
            deadline = time.monotonic() + 60
            while (shown := w.http.get(f"/connectors/{name}/config").json()) != {**config, "name": name}:
                assert time.monotonic() < deadline, f"{w.url} shows {shown} for {name}, not {config}"
                time.sleep(0.2)

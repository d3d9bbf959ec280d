"""Faults: SecantusDB killed and restarted mid-stream (nothing lost), change-stream history lost under each
snapshot mode, refused credentials (one clear FAILED, no retry storm), and TLS options."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pymongo.errors import PyMongoError

from tests.integration.mongodb.conftest import client, create_mongodb_connector, values
from tests.integration.support import Worker, create_connector, read_topic, unique

pytestmark = pytest.mark.integration

FAST_RETRY = {"mongodb.server.selection.timeout.ms": "2000", "mongodb.connect.timeout.ms": "2000",
              "retriable.restart.connector.wait.ms": "1000"}


def _ids(bootstrap: str, topic: str, count: int, timeout: float = 120) -> set[Any]:
    return {json.loads(r.key)["payload"]["id"] for r in read_topic(bootstrap, topic, count, timeout=timeout)}


def _replayed_ids(uri: str, token: Any) -> set[str]:
    """Every insert the server still has in its change-stream history after ``token``."""
    ids = set()
    with client(uri) as mongo, mongo.watch(resume_after=token, max_await_time_ms=500) as stream:
        while (event := stream.try_next()) is not None:
            ids.add(str(event["documentKey"]["_id"]))
    return ids


@pytest.mark.parametrize("fault", ["restart", "freeze", "stepdown"])
def test_mongodb_down_mid_stream_loses_nothing(worker: Worker, stack: Any, secantus_factory: Any, fault: str) -> None:
    """``restart``: SecantusDB stopped and started again on the same data; ``freeze``: the process hangs (SIGSTOP)
    for longer than the socket and server-selection timeouts, then goes on. (SIGKILL is not used: SecantusDB's
    WiredTiger store then often refuses to reopen with WT_TRY_SALVAGE.) ``stepdown``: ``replSetStepDown``, the
    primary steps down for a few seconds."""
    server = secantus_factory()
    mongo = client(server.uri)
    with mongo.watch(max_await_time_ms=100) as stream:
        stream.try_next()
        token = stream.resume_token
    prefix, db = unique("k"), unique("down")
    name = unique("down-")
    create_mongodb_connector(worker, name, {"mongodb.connection.string": server.uri, "topic.prefix": prefix,
                                            "mongodb.socket.timeout.ms": "3000", **FAST_RETRY})
    total, done = 300, threading.Event()

    def write() -> None:
        i = 0
        while i < total:
            try:
                mongo[db]["c"].insert_one({"_id": i})
                i += 1
            except PyMongoError as exc:
                if "duplicate key" in str(exc):
                    i += 1
                else:
                    time.sleep(0.2)
            time.sleep(0.01)
        done.set()

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    read_topic(stack.kafka_bootstrap, f"{prefix}.{db}.c", 20)  # streaming
    if fault == "restart":
        server.stop()
        time.sleep(2.0)  # the length of the outage
        server.start()
    elif fault == "stepdown":  # the writer waits out the 5 s without a primary
        with client(server.uri) as admin, contextlib.suppress(PyMongoError):
            admin.admin.command("replSetStepDown", 5, force=True)
    else:
        pid = server.pid
        os.kill(pid, signal.SIGSTOP)
        time.sleep(6.0)  # the length of the freeze: past the 3 s socket and 2 s selection timeouts
        os.kill(pid, signal.SIGCONT)
    assert done.wait(120)
    stored = {str(doc["_id"]) for doc in mongo[db]["c"].find({}, {"_id": 1})}
    mongo.close()
    assert stored == {str(i) for i in range(total)}
    expected = _replayed_ids(server.uri, token)
    assert expected == stored
    captured = _ids(stack.kafka_bootstrap, f"{prefix}.{db}.c", total)
    assert expected <= captured, sorted(expected - captured, key=int)
    worker.wait_running(name)


def _lose_history(worker: Worker, stack: Any, secantus_factory: Any, mode: str) -> tuple[str, str, str, Any]:
    server = secantus_factory("--oplog-max-entries", "20")
    mongo = client(server.uri)
    name, prefix, db = unique("lost-"), unique("l"), unique("lost")
    mongo[db]["c"].insert_one({"_id": "before"})
    create_mongodb_connector(worker, name, {"mongodb.connection.string": server.uri, "topic.prefix": prefix,
                                            "snapshot.mode": mode, "collection.include.list": f"{db}.c", **FAST_RETRY})
    if mode != "no_data":  # the copy may read a write made during it as well as stream it: write after it
        read_topic(stack.kafka_bootstrap, f"{prefix}.{db}.c", 1)
    mongo[db]["c"].insert_one({"_id": "streamed"})
    read_topic(stack.kafka_bootstrap, f"{prefix}.{db}.c", 1 if mode == "no_data" else 2)
    assert worker.http.put(f"/connectors/{name}/stop").status_code in (202, 204)
    worker.wait_status(name, lambda s: s["connector"]["state"] == "STOPPED")
    mongo[db]["c"].insert_one({"_id": "while stopped"})
    mongo[unique("noise")]["n"].insert_many([{"i": i} for i in range(1200)])  # the oplog keeps 20 entries
    assert worker.http.put(f"/connectors/{name}/resume").status_code == 202
    return name, prefix, db, mongo


def test_history_lost_when_needed_takes_a_new_snapshot(worker: Worker, stack: Any, secantus_factory: Any) -> None:
    name, prefix, db, mongo = _lose_history(worker, stack, secantus_factory, "when_needed")
    worker.wait_running(name)
    records = read_topic(stack.kafka_bootstrap, f"{prefix}.{db}.c", 5)
    snapshot = [json.loads(r.value)["payload"] for r in records[2:5]]
    assert [v["op"] for v in snapshot] == ["r", "r", "r"]
    assert {json.loads(v["after"])["_id"] for v in snapshot} == {"before", "streamed", "while stopped"}
    mongo[db]["c"].insert_one({"_id": "after"})
    last = values(stack.kafka_bootstrap, f"{prefix}.{db}.c", 6)[-1]
    assert last["op"] == "c" and json.loads(last["after"])["_id"] == "after"


@pytest.mark.parametrize("mode", ["initial", "no_data", "always"])  # always: Debezium checks before its snapshot
def test_history_lost_fails_with_debeziums_message(worker: Worker, stack: Any, secantus_factory: Any,
                                                   mode: str) -> None:
    name, _prefix, _db, _mongo = _lose_history(worker, stack, secantus_factory, mode)
    status = worker.wait_status(name, lambda s: bool(s["tasks"]) and s["tasks"][0]["state"] == "FAILED")
    trace = status["tasks"][0]["trace"]
    assert "is trying to read change stream starting at {sec=" in trace
    assert "no longer available on the server. Reconfigure the connector to use a snapshot mode when needed." in trace


def test_refused_credentials_fail_once(worker: Worker, stack: Any, secantus_factory: Any) -> None:
    server = secantus_factory()
    admin = client(server.uri)
    admin.admin.command("createUser", "cdc", pwd="right", roles=["root"])
    admin.close()
    server.stop()
    server.flags.append("--auth")
    server.start()
    prefix, db = unique("a"), unique("auth")
    name = unique("auth-")
    create_connector(worker, name, {"connector.class": "MongoDbConnector", "mongodb.connection.string": server.uri,
                                    "topic.prefix": prefix, "mongodb.user": "cdc", "mongodb.password": "wrong",
                                    **FAST_RETRY}, wait_running=False)
    status = worker.wait_status(name, lambda s: bool(s["tasks"]) and s["tasks"][0]["state"] == "FAILED")
    trace = status["tasks"][0]["trace"]
    assert "MongoDB refused user 'cdc' (authSource 'admin')" in trace and "mongodb.password" in trace
    # the right password, given in the URI this time, streams
    uri = server.uri.replace("mongodb://", "mongodb://cdc:right@")
    create_mongodb_connector(worker, unique("auth-ok-"), {"mongodb.connection.string": uri, "topic.prefix": prefix,
                                                          **FAST_RETRY})
    with client(uri) as mongo:
        mongo[db]["c"].insert_one({"_id": 1})
    assert _ids(stack.kafka_bootstrap, f"{prefix}.{db}.c", 1) == {"1"}
    # meanwhile (several retry waits of 1 s) the refused task was not retried
    again = worker.http.get(f"/connectors/{name}/status").json()
    assert again["tasks"][0]["state"] == "FAILED" and again["tasks"][0]["trace"] == trace
    assert worker.process.log_path.read_text(errors="replace").count("MongoDB refused user 'cdc'") <= 2


def _certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for the host name ``db.example.invalid`` (not 127.0.0.1) and its key."""
    cert, key = directory / "server.pem", directory / "server.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                    "/CN=db.example.invalid", "-addext", "subjectAltName=DNS:db.example.invalid",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True, timeout=60)
    return cert, key


def test_tls(worker: Worker, stack: Any, secantus_factory: Any, tmp_path: Path) -> None:
    cert, key = _certificate(tmp_path)
    server = secantus_factory("--tls-cert-file", str(cert), "--tls-key-file", str(key))
    uri = server.uri
    tls = {"mongodb.connection.string": uri, "mongodb.ssl.enabled": "true", "mongodb.ssl.truststore": str(cert),
           **FAST_RETRY}
    name = unique("tls-strict-")
    create_connector(worker, name, {"connector.class": "MongoDbConnector", "topic.prefix": unique("x"), **tls},
                     wait_running=False)
    status = worker.wait_status(name, lambda s: bool(s["tasks"]) and s["tasks"][0]["state"] == "FAILED")
    assert "Unable to connect to MongoDB" in status["tasks"][0]["trace"]
    prefix, db = unique("tls"), unique("tls")
    create_mongodb_connector(worker, unique("tls-"), {**tls, "topic.prefix": prefix,
                                                      "mongodb.ssl.invalid.hostname.allowed": "true"})
    with client(uri + f"&tls=true&tlsCAFile={cert}&tlsAllowInvalidHostnames=true") as mongo:
        mongo[db]["c"].insert_one({"_id": 7})
    assert _ids(stack.kafka_bootstrap, f"{prefix}.{db}.c", 1) == {"7"}


def test_retries_are_bounded_by_errors_max_retries(worker: Worker, stack: Any, secantus_factory: Any) -> None:
    server = secantus_factory()
    name = unique("retries-")
    create_mongodb_connector(worker, name, {"mongodb.connection.string": server.uri, "topic.prefix": unique("r"),
                                            "errors.max.retries": "2", "mongodb.server.selection.timeout.ms": "1000",
                                            "retriable.restart.connector.wait.ms": "500"})
    server.stop()
    status = worker.wait_status(name, lambda s: bool(s["tasks"]) and s["tasks"][0]["state"] == "FAILED", 90)
    assert "failed 3 times in a row (errors.max.retries=2)" in status["tasks"][0]["trace"]

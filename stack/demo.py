"""``make demo``: the local stack, a worker in distributed mode on http://127.0.0.1:8083, a Debezium MongoDB
connector registered by POSTing its JSON, sample writes into ``inventory``, and the resulting Kafka records.

``python -m stack.demo stop`` stops the demo worker (``make stop`` also stops Kafka and SecantusDB).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from typing import Any

import pymongo
from bson import ObjectId
from kafka import KafkaConsumer

import stack
from stack.procs import DEFAULT_STATE_DIR, StackError
from stack.worker import ConnectWorker, distributed_properties

REST_PORT = 8083
METRICS_PORT = 9404
CONNECTOR = "inventory-connector"
PREFIX = "demo"
SPARK_OUT = DEFAULT_STATE_DIR / "spark-delta"


def connector_json(mongo_uri: str) -> dict[str, Any]:
    """What a Debezium user POSTs to Kafka Connect today."""
    return {
        "name": CONNECTOR,
        "config": {
            "connector.class": "io.debezium.connector.mongodb.MongoDbConnector",
            "mongodb.connection.string": mongo_uri,
            "topic.prefix": PREFIX,
            "database.include.list": "inventory",
            "tasks.max": "1",
        },
    }


def rest(method: str, path: str, body: Any = None) -> tuple[int, Any]:
    """A JSON call to the worker's REST API."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{REST_PORT}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json", "Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read()
            return response.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


def wait_running(timeout: float = 60.0) -> dict[str, Any]:
    """Wait until the connector and its task report RUNNING."""
    deadline = time.monotonic() + timeout
    status: Any = None
    step(f"waiting for {CONNECTOR} and its task to be RUNNING")
    while time.monotonic() < deadline:
        code, status = rest("GET", f"/connectors/{CONNECTOR}/status")
        if code == 200 and status["connector"]["state"] == "RUNNING" and status["tasks"] \
                and all(t["state"] == "RUNNING" for t in status["tasks"]):
            return dict(status)
        if code == 200 and any(t["state"] == "FAILED" for t in status["tasks"]):
            raise StackError(f"connector task FAILED:\n{status['tasks'][0].get('trace')}")
        time.sleep(0.3)
    raise StackError(f"connector not RUNNING after {timeout:.0f} s: {status}")


def write_samples(mongo_uri: str) -> int:
    """Inserts, updates, a replace, deletes and one multi-document transaction; returns the expected records."""
    client: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(mongo_uri)
    db = client.inventory
    run = ObjectId()
    ids = [f"{run}-{n}" for n in range(3)]
    print("\n>>> insert 3 customers, update one, replace one, delete one, then a transaction", flush=True)
    db.customers.insert_one({"_id": ids[0], "first_name": "Sally", "last_name": "Thomas", "email": "sally@acme.com"})
    db.customers.insert_one({"_id": ids[1], "first_name": "George", "last_name": "Bailey", "tags": ["vip"]})
    db.customers.insert_one({"_id": ids[2], "first_name": "Edward", "last_name": "Walker", "address": {
        "city": "Springfield", "zip": "11111"}})
    db.customers.update_one({"_id": ids[0]}, {"$set": {"email": "sally.thomas@acme.com"}, "$unset": {"x": ""}})
    db.customers.replace_one({"_id": ids[1]}, {"first_name": "George", "last_name": "Bailey", "since": 1998})
    db.customers.delete_one({"_id": ids[2]})
    with client.start_session() as session, session.start_transaction():
        db.orders.insert_one({"_id": f"{run}-o1", "customer": ids[0], "qty": 2}, session=session)
        db.orders.insert_one({"_id": f"{run}-o2", "customer": ids[1], "qty": 1}, session=session)
        db.customers.update_one({"_id": ids[0]}, {"$inc": {"orders": 2}}, session=session)
    client.close()
    return 3 + 1 + 1 + 2 + 3  # the delete is followed by a tombstone


def show_records(kafka_bootstrap: str, expected: int, since_ms: int, timeout: float = 60.0) -> int:
    """Print the records of ``demo.inventory.*`` written since ``since_ms``; returns how many were seen."""
    consumer = KafkaConsumer(bootstrap_servers=kafka_bootstrap, group_id=None, auto_offset_reset="earliest",
                             enable_auto_commit=False, consumer_timeout_ms=1000, metadata_max_age_ms=1000)
    consumer.subscribe(pattern=rf"^{PREFIX}\.inventory\..*")
    seen, deadline = 0, time.monotonic() + timeout
    try:
        while seen < expected and time.monotonic() < deadline:
            for message in consumer:
                if message.timestamp < since_ms:
                    continue
                snapshot = message.value is not None and json.loads(message.value)["payload"]["op"] == "r"
                seen += 0 if snapshot else 1  # documents from earlier runs come first, as snapshot (r) records
                print_record(message)
                if seen >= expected:
                    break
    finally:
        consumer.close()
    return seen


def print_record(message: Any) -> None:
    """One record: topic, key and a readable summary of the value."""
    key = json.loads(message.key)["payload"] if message.key else None
    print(f"\n--- {message.topic} partition {message.partition} offset {message.offset}")
    print(f"key:   {json.dumps(key)}")
    if message.value is None:
        print("value: null (tombstone)")
        return
    payload = json.loads(message.value)["payload"]
    source = payload["source"]
    summary = {"op": payload["op"], "before": payload["before"], "after": payload["after"],
               "updateDescription": payload["updateDescription"],
               "source": {k: source[k] for k in ("db", "collection", "ord", "lsid", "txnNumber")}}
    print(f"value: {json.dumps(summary, indent=2)}")


def step(text: str) -> None:
    """Say what the demo does next (it can take minutes the first time: nothing runs silently)."""
    print(f"\n==> {text}", flush=True)


def _read_back() -> str:
    """Python reading the demo's customers table back with plain ``spark.read.format("delta")``."""
    table = SPARK_OUT / "tables" / f"{PREFIX}.inventory.customers"
    return ("from spark_jobs.session import session; "
            f"session().read.format('delta').load('{table}').drop('_raw').show(truncate=24)")


def look_further(worker: ConnectWorker, kafka_bootstrap: str) -> str:
    """Where to look once the demo ran."""
    py = sys.executable
    spark_out = SPARK_OUT
    topics = ("from kafka import KafkaConsumer; "
              f"print(sorted(KafkaConsumer(bootstrap_servers='{kafka_bootstrap}').topics()))")
    read = _read_back()
    return f"""
Look further (everything keeps running; stop it with: make stop)
  REST API        curl -s http://127.0.0.1:{REST_PORT}/connectors?expand=status
                  curl -s http://127.0.0.1:{REST_PORT}/connectors/{CONNECTOR}/offsets
  Metrics         curl -s http://127.0.0.1:{REST_PORT}/metrics
                  curl -s http://127.0.0.1:{METRICS_PORT}/metrics   (metrics.listener: no REST auth)
  Log levels      curl -s http://127.0.0.1:{REST_PORT}/admin/loggers
                  curl -s -X PUT -H 'Content-Type: application/json' -d '{{"level":"DEBUG"}}' \\
                       http://127.0.0.1:{REST_PORT}/admin/loggers/io.debezium.connector.mongodb
  Worker log      tail -f {worker.log_path}
  Topics          {py} -c "{topics}"
  Spark tables    {spark_out}/tables/  (Delta Lake: one latest-state table per collection; changes/: change logs)
                  {py} -c "{read}"
  Grafana         helm/pyconnect/dashboards/pyconnect.json (import it; Prometheus scraping :{METRICS_PORT}/metrics)
"""


def main() -> int:
    """Run the demo; leave everything running."""
    step("starting Kafka (KRaft) and SecantusDB; the first run fetches Kafka's jars from Maven Central (a minute "
         "or two)")
    endpoints = stack.start()
    step(f"starting a worker in distributed mode: REST on :{REST_PORT}, /metrics also on :{METRICS_PORT}")
    worker = ConnectWorker(DEFAULT_STATE_DIR / "worker", REST_PORT,
                           distributed_properties(endpoints.kafka_bootstrap, REST_PORT, group_id="connect-demo",
                                                  extra={"metrics.listener": f"http://127.0.0.1:{METRICS_PORT}"}))
    worker.start()
    print(f"worker: {worker.address} (log: {worker.log_path})", flush=True)
    body = connector_json(endpoints.mongo_uri)
    print(f"\n>>> POST /connectors\n{json.dumps(body, indent=2)}", flush=True)
    code, reply = rest("POST", "/connectors", body)
    print(f"<<< {code} {json.dumps(reply)}", flush=True)
    if code not in (201, 409):
        return 1
    print(f"status: {json.dumps(wait_running())}", flush=True)
    since_ms = int(time.time() * 1000) - 1000
    expected = write_samples(endpoints.mongo_uri)
    seen = show_records(endpoints.kafka_bootstrap, expected, since_ms)
    print(f"\n{seen} of {expected} expected records arrived.")
    step("Spark: the topics materialized as Delta tables (python -m spark_jobs.materialize); the first run "
         "fetches Spark's Kafka and Delta Lake jars from Maven Central")
    spark_out = SPARK_OUT
    spark_code = subprocess.run([sys.executable, "-m", "spark_jobs.materialize", "--bootstrap-servers",
                                 endpoints.kafka_bootstrap, "--topics-pattern", rf"{PREFIX}\.inventory\..*",
                                 "--output", str(spark_out), "--show", "20"],
                                check=False, timeout=900).returncode
    step("Spark: the latest-state table read back with plain spark.read.format('delta')")
    read_back = _read_back()
    print(f'{sys.executable} -c "{read_back}"', flush=True)
    read_code = subprocess.run([sys.executable, "-c", read_back], check=False, timeout=600).returncode
    print(look_further(worker, endpoints.kafka_bootstrap), flush=True)
    return 0 if seen >= expected and spark_code == 0 and read_code == 0 else 1


def stop() -> int:
    """Stop the demo worker."""
    ConnectWorker(DEFAULT_STATE_DIR / "worker", REST_PORT).stop()
    return 0


if __name__ == "__main__":
    sys.exit(stop() if sys.argv[1:] == ["stop"] else main())

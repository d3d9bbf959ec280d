"""Schema-driven fuzzing of the REST API with schemathesis, against a real running worker.

Every operation of the worker's own ``/openapi.json`` gets positive (schema-valid) and negative (schema-breaking)
requests, first with whatever connector names the fuzzer draws (mostly unknown connectors), then again on one
existing connector. Each response must:

- not be a 5xx, except where Kafka Connect itself answers 500 (:data:`CONNECT_500`);
- if an error, be Connect's error body ``{"error_code": <status>, "message": "..."}``;
- conform to the response schema the document declares for its status;
- have a status the document declares (minus the known documentation gaps of :data:`UNDOCUMENTED`).

All failures are collected and reported together (operation, check, status, a curl command and the response).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.core.failures import Failure, FailureGroup
from schemathesis.specs.openapi import checks as openapi_checks

from tests.integration.support import Worker

if TYPE_CHECKING:  # schemathesis names the case of an OpenAPI operation for type checkers only
    from schemathesis.specs.openapi.schemas import OpenApiCase

pytestmark = pytest.mark.integration

MAX_EXAMPLES = {GenerationMode.POSITIVE: 25, GenerationMode.NEGATIVE: 10}
# Served on the herder thread, which reads the config topic to its end first: ~0.5 s a request even for an unknown
# connector. Their only input is the connector name (and two booleans), so a few names cover them; 25 would take
# the test past its time budget on its own.
HERDER_BOUND = {
    "DELETE /connectors/{connector}", "PUT /connectors/{connector}/pause", "PUT /connectors/{connector}/resume",
    "PUT /connectors/{connector}/stop", "POST /connectors/{connector}/restart",
    "POST /connectors/{connector}/tasks/{task}/restart", "DELETE /connectors/{connector}/offsets",
}
HERDER_BOUND_EXAMPLES = 6
EXISTING_EXAMPLES = 6  # per operation, on the existing connector (most of them are herder-bound)

# Documentation gap: these routes parse their JSON body by hand (``rest.common.json_body``), so the document
# declares no request body and schemathesis would never send one. Until the routes declare them, the test adds
# Connect's request shapes here (only where the document has none). ``connector.class``/``topic`` are hints so that
# some generated configs are valid and really create connectors (with whatever names the fuzzer draws).
CONNECTOR_CONFIG = {
    "type": "object",
    "properties": {"connector.class": {"enum": ["FileStreamSource",
                                                "org.apache.kafka.connect.file.FileStreamSourceConnector"]},
                   "topic": {"type": "string"}},
    "additionalProperties": {"type": "string"},
}
REQUEST_BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("post", "/connectors"): {
        "type": "object",
        "properties": {"name": {"type": "string"}, "config": CONNECTOR_CONFIG,
                       "initial_state": {"enum": ["RUNNING", "PAUSED", "STOPPED"]}},
        "required": ["name", "config"],
    },
    ("put", "/connectors/{connector}/config"): CONNECTOR_CONFIG,
    ("patch", "/connectors/{connector}/config"): {
        "type": "object", "additionalProperties": {"type": ["string", "null"]}},
    ("patch", "/connectors/{connector}/offsets"): {
        "type": "object",
        "properties": {"offsets": {"type": "array", "items": {
            "type": "object",
            "properties": {"partition": {"type": "object"}, "offset": {"type": ["object", "null"]}},
            "required": ["partition", "offset"]}}},
        "required": ["offsets"],
    },
    ("put", "/connector-plugins/{plugin}/config/validate"): CONNECTOR_CONFIG,
    ("put", "/admin/loggers/{logger}"): {
        "type": "object", "properties": {"level": {"type": "string"}}, "required": ["level"]},
}

# Statuses a route answers that its OpenAPI description does not declare. Every route now declares Connect's
# statuses (rest/openapi.py), so this stays empty but for /health's 503/500, which are not_a_server_error's
# business; add an entry only with the reason it cannot be declared.
UNDOCUMENTED: dict[str, set[int]] = {
    "GET /health": {503, 500},
}

# Kafka Connect's own 500s: an unknown connector class (ConnectException from the plugin lookup) and a request
# timeout (ConnectRestException(500)). Any other 5xx is a bug.
CONNECT_500 = ("Failed to find any class that implements", "Request timed out")
EXISTING = "fuzz existing"


def _json(response: Any) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def not_a_server_error(ctx: Any, response: Any, case: OpenApiCase) -> None:
    if response.status_code < 500:
        return
    body = _json(response)
    message = body.get("message") if isinstance(body, dict) else None
    if response.status_code == 500 and isinstance(message, str) and message.startswith(CONNECT_500):
        return
    if case.operation.label == "GET /health" and response.status_code in UNDOCUMENTED["GET /health"]:
        return  # unhealthy / starting: the answer Connect gives
    raise AssertionError(f"Server error {response.status_code}")


def connect_error_body(ctx: Any, response: Any, case: OpenApiCase) -> None:
    if response.status_code < 400 or case.operation.label == "GET /health":
        return
    body = _json(response)
    if not (isinstance(body, dict) and set(body) == {"error_code", "message"}
            and body["error_code"] == response.status_code and isinstance(body["message"], str)):
        raise AssertionError(f"Not a Connect error body: {response.text[:300]}")


def status_code_conformance(ctx: Any, response: Any, case: OpenApiCase) -> Any:
    if response.status_code >= 500 or response.status_code in UNDOCUMENTED.get(case.operation.label, set()):
        return None  # 5xx: not_a_server_error's business
    return openapi_checks.status_code_conformance(ctx, response, case)


def response_schema_conformance(ctx: Any, response: Any, case: OpenApiCase) -> Any:
    return openapi_checks.response_schema_conformance(ctx, response, case)


CHECKS: list[Callable[..., Any]] = [not_a_server_error, connect_error_body, response_schema_conformance,
                                    status_code_conformance]


def _load(worker: Worker) -> Any:
    document = worker.http.get("/openapi.json").json()
    for (method, path), body in REQUEST_BODIES.items():
        document["paths"][path][method].setdefault(
            "requestBody", {"required": True, "content": {"application/json": {"schema": body}}})
    return schemathesis.openapi.from_dict(document)


def test_every_operation_survives_fuzzing(worker: Worker, tmp_path: Path) -> None:
    schema = _load(worker)
    found: dict[tuple[str, str, int, str], str] = {}
    # One keep-alive connection for all requests, as real clients do: a response must not break it for the next.
    session = requests.Session()
    previous = ["(none)"]

    def fuzz(operation: Any, mode: GenerationMode, examples: int, **fixed: Any) -> None:
        @given(case=operation.as_strategy(generation_mode=mode, **fixed))
        @settings(max_examples=examples, deadline=None, phases=[Phase.explicit, Phase.generate],
                  suppress_health_check=list(HealthCheck), database=None)
        def run(case: OpenApiCase) -> None:
            try:
                response = case.call(base_url=worker.url, session=session, timeout=120)
            except requests.ConnectionError as exc:
                key = (operation.label, "connection_kept", 0, type(exc).__name__)
                found.setdefault(key, f"{case.as_curl_command()}\n    -> {exc}\n    the request before it on the "
                                      f"same keep-alive connection: {previous[0]}")
                return
            previous[0] = f"{case.as_curl_command()[:300]} -> {response.status_code}"
            for check in CHECKS:
                try:
                    case.validate_response(response, checks=[check])
                except (FailureGroup, Failure, AssertionError) as exc:
                    failures = getattr(exc, "exceptions", [exc])
                    title = "; ".join(getattr(f, "title", str(f)) for f in failures)[:120]
                    key = (operation.label, check.__name__, response.status_code, title)
                    example = f"{case.as_curl_command()}\n    -> {response.status_code} {response.text[:500]}"
                    if key not in found or len(example) < len(found[key]):
                        found[key] = example  # the shortest reproduction

        with contextlib.suppress(Unsatisfiable):  # nothing to negate: no parameters and no body
            run()

    operations = [result.ok() for result in schema.get_all_operations()]
    for operation in operations:
        for mode, examples in MAX_EXAMPLES.items():
            fuzz(operation, mode, HERDER_BOUND_EXAMPLES if operation.label in HERDER_BOUND else examples)

    # Again on a connector that exists (recreated when an earlier operation deleted it; its state, config and
    # offsets are whatever the earlier operations left).
    source = tmp_path / "input.txt"
    source.write_text("one\ntwo\n")
    url = f"/connectors/{quote(EXISTING, safe='')}"
    for operation in operations:
        if "{connector}" not in operation.path:
            continue
        if worker.http.get(url).status_code == 404:
            reply = worker.http.put(url + "/config", json={
                "connector.class": "FileStreamSource", "topic": "fuzz-existing", "file": str(source)})
            assert reply.status_code == 201, reply.text
        fuzz(operation, GenerationMode.POSITIVE, EXISTING_EXAMPLES, path_parameters={"connector": EXISTING})

    report = "\n".join(f"{label} [{check}] {status}: {title}\n    {example}"
                       for (label, check, status, title), example in sorted(found.items()))
    assert not found, f"{len(found)} distinct failures:\n{report}"

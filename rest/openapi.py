"""OpenAPI descriptions of the routes: request bodies read by hand, Connect's status codes and entity shapes.

The handlers parse JSON bodies themselves (Connect's 400s, not FastAPI's 422s), so the document gets the
bodies from here, and every route lists the statuses Kafka Connect answers with, each error with Connect's
``{"error_code","message"}`` body.
"""

from __future__ import annotations

from typing import Any

_STR_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
_NULLABLE_STR_MAP = {"type": "object", "additionalProperties": {"type": ["string", "null"]}}
ERROR = {"type": "object", "properties": {"error_code": {"type": "integer"}, "message": {"type": "string"}},
         "required": ["error_code", "message"]}
TASK_ID = {"type": "object", "properties": {"connector": {"type": "string"}, "task": {"type": "integer"}},
           "required": ["connector", "task"]}
CONNECTOR_INFO = {"type": "object", "properties": {
    "name": {"type": "string"}, "config": _STR_MAP, "tasks": {"type": "array", "items": TASK_ID},
    "type": {"type": "string", "enum": ["source", "sink", "unknown"]}}, "required": ["name", "config", "tasks", "type"]}
_STATE = {"type": "object", "properties": {
    "state": {"type": "string"}, "worker_id": {"type": "string"}, "trace": {"type": "string"},
    "version": {"type": "string"}}, "required": ["state", "worker_id"]}
TASK_STATE = {"type": "object", "properties": {"id": {"type": "integer"}, **_STATE["properties"]},  # type: ignore[dict-item]
              "required": ["id", "state", "worker_id"]}
CONNECTOR_STATE = {"type": "object", "properties": {
    "name": {"type": "string"}, "connector": _STATE, "tasks": {"type": "array", "items": TASK_STATE},
    "type": {"type": "string"}}, "required": ["name", "connector", "tasks", "type"]}
TASK_INFO = {"type": "object", "properties": {"id": TASK_ID, "config": _STR_MAP}, "required": ["id", "config"]}
OFFSETS = {"type": "object", "properties": {"offsets": {"type": "array", "items": {
    "type": "object", "properties": {"partition": {"type": "object"}, "offset": {"type": ["object", "null"]}},
    "required": ["partition", "offset"]}}}, "required": ["offsets"]}
MESSAGE = {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}
LOGGER_LEVEL = {"type": "object", "properties": {"level": {"type": "string"},
                                                 "last_modified": {"type": ["integer", "null"]}}}
CREATE_REQUEST = {"type": "object", "properties": {
    "name": {"type": "string"}, "config": _STR_MAP,
    "initial_state": {"type": "string", "enum": ["RUNNING", "PAUSED", "STOPPED"]}}, "required": ["name", "config"]}

_REASONS = {200: "OK", 201: "Created", 202: "Accepted", 204: "No Content", 400: "Bad request", 401: "Unauthorized",
            403: "Forbidden", 404: "Not found", 409: "Conflict (a rebalance or a concurrent change)",
            500: "Internal error (as Kafka Connect answers it)", 503: "Starting"}


def responses(ok: dict[int, dict[str, Any] | None], *errors: int) -> dict[int | str, dict[str, Any]]:
    """Success statuses with their body schema (None: no body) and error statuses with Connect's error body."""
    result: dict[int | str, dict[str, Any]] = {}
    for code, schema in ok.items():
        entry: dict[str, Any] = {"description": _REASONS.get(code, "OK")}
        if schema is not None:
            entry["content"] = {"application/json": {"schema": schema}}
        result[code] = entry
    for code in (*errors, 500):
        result[code] = {"description": _REASONS[code], "content": {"application/json": {"schema": ERROR}}}
    result[422] = {"description": "Never answered: invalid requests are Connect's 400s"}
    return result


def body(schema: dict[str, Any]) -> dict[str, Any]:
    """``openapi_extra`` declaring a JSON request body read by the handler itself."""
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


CONFIG_BODY = body(_STR_MAP)
PATCH_BODY = body(_NULLABLE_STR_MAP)
OFFSETS_BODY = body(OFFSETS)
LEVEL_BODY = body({"type": "object", "properties": {"level": {"type": "string"}}})

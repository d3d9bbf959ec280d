"""Forwarding a request to the worker that must serve it (the leader, or the owner of a connector or task),
as Connect's ``HerderRequestHandler`` does: same method, path, query and body, with ``forward=true`` on the
first hop, ``forward=false`` on a second, and a 409 when a third would be needed. Like Connect, a request that
cannot be forwarded raises the REST error to answer with (:mod:`rest.error_handlers` writes it)."""

from __future__ import annotations

import asyncio
import logging
from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import Response

from connect.distributed import forwarding
from connect.distributed.cluster import RequestTargetError
from connect.runtime.rest_errors import ConflictError, ConnectRestError

log = logging.getLogger(__name__)


def _target(request: Request, exc: RequestTargetError) -> str | None:
    forward = request.query_params.get("forward")
    if forward is not None and forward.strip().lower() == "false":
        return None
    params = [(k, v) for k, v in request.query_params.multi_items() if k != "forward"]
    params.append(("forward", "false" if forward is not None else "true"))
    raw_path = request.scope.get("raw_path") or request.url.path.encode()
    path = raw_path.decode("latin-1").split("?", 1)[0]
    return forwarding.join(exc.url, path) + "?" + urlencode(params)


async def forward(request: Request, exc: RequestTargetError) -> Response:
    """The other worker's answer, relayed unchanged (status, body, ``Location``); raises Connect's 409 when a
    third hop would be needed and its 500 when the other worker cannot be reached."""
    url = _target(request, exc)
    if url is None:
        raise ConflictError("Cannot complete request because of a conflicting operation (e.g. worker rebalance)")
    body = await request.body()
    headers = {name: request.headers[name] for name in ("authorization", "x-connect-authorization",
                                                         "x-connect-request-signature-algorithm")
               if name in request.headers}
    log.debug("Forwarding %s %s to %s", request.method, request.url.path, url)
    try:
        reply = await asyncio.to_thread(forwarding.send, url, request.method, body or None, headers)
    except OSError as exc_io:
        raise ConnectRestError(500, f"IO Error trying to forward REST request: {exc_io}") from exc_io
    response = Response(reply.body, status_code=reply.status, media_type=reply.content_type)
    if reply.status == 204:
        response = Response(status_code=204)
    if reply.location:
        response.headers["Location"] = reply.location
    return response

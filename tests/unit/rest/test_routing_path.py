"""Names in the path as Connect routes them: ``%2F`` inside a name, and a name that ends in a newline.

Starlette's route patterns end in ``$``, which also matches before a final newline: ``GET /connectors/%0A`` (the
connector named "\\n") used to answer the connector list. Connect answers that the connector is not found.
"""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from connect.api.errors import NotFoundError
from rest.app import create_app
from rest.common import routing_path


class _Herder:
    """Knows one connector, ``a/b``."""

    def connectors(self) -> list[str]:
        return ["a/b"]

    def connector_info(self, name: str) -> object:
        raise NotFoundError(f"Connector {name} not found")

    def connector_status(self, name: str) -> object:
        raise NotFoundError(f"Connector {name} not found")

    def connector_config(self, name: str) -> dict[str, str]:
        if name != "a/b":
            raise NotFoundError(f"Connector {name} not found")
        return {"name": name}


def _client() -> TestClient:
    herder: Any = _Herder()  # the app calls only these methods
    return TestClient(create_app(herder), raise_server_exceptions=False)


def test_a_name_of_a_newline_is_a_connector_not_the_list() -> None:
    client = _client()
    for path in ("/connectors/%0A", "/connectors/%0A/status", "/connectors/%0A/"):
        reply = client.get(path)
        assert reply.status_code == 404, path
        assert reply.json() == {"error_code": 404, "message": "Connector \n not found"}, path
    assert client.get("/connectors/").json() == ["a/b"]
    assert client.get("/connectors").json() == ["a/b"]


def test_a_newline_after_a_fixed_path_matches_nothing() -> None:
    client = _client()
    for path in ("/connectors%0A", "/connectors/a%2Fb/config%0A"):
        reply = client.get(path)
        assert reply.status_code == 404, path
        assert reply.json()["error_code"] == 404, path


def test_an_encoded_slash_stays_in_the_name() -> None:
    client = _client()
    assert client.get("/connectors/a%2Fb/config").json() == {"name": "a/b"}
    reply = client.get("/connectors/a%2Fb%0A/config")
    assert reply.status_code == 404 and reply.json()["message"] == "Connector a/b\n not found"


def test_routing_path() -> None:
    assert routing_path(b"/connectors/x", "/connectors/x") == "/connectors/x"
    assert routing_path(None, "/connectors/x") == "/connectors/x"
    assert routing_path(b"/connectors/a%2Fb/status", "/connectors/a/b/status") == "/connectors/a\x00b/status"
    assert routing_path(b"/connectors/%0A", "/connectors/\n") == "/connectors/\x01"
    assert routing_path(b"/connectors/a%0Ab", "/connectors/a\nb") == "/connectors/a\nb"

"""A tiny OAuth 2 authorization server for the security tests: the client-credentials grant at ``/token``
(HTTP basic authentication of a registered client, an RS256-signed JWT back) and the signing key at ``/jwks``,
which Kafka's ``OAuthBearerValidatorCallbackHandler`` fetches to validate the tokens."""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

KID = "test-key-1"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _int(value: int) -> str:
    return _b64url(value.to_bytes((value.bit_length() + 7) // 8, "big"))


class OAuthServer:
    """Serves on 127.0.0.1 from a daemon thread; ``clients`` maps client ids to secrets."""

    def __init__(self, clients: dict[str, str], lifetime_s: int = 3600) -> None:
        self.clients = dict(clients)
        self.lifetime_s = lifetime_s
        self.issued: list[str] = []
        self._key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        server = self
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), type("Handler", (_Handler,), {"oauth": server}))
        self._thread = threading.Thread(target=self._http.serve_forever, name="oauth-server", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    @property
    def token_url(self) -> str:
        return f"{self.url}/token"

    @property
    def jwks_url(self) -> str:
        return f"{self.url}/jwks"

    def start(self) -> OAuthServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()

    def jwks(self) -> dict[str, Any]:
        numbers = self._key.public_key().public_numbers()
        return {"keys": [{"kty": "RSA", "kid": KID, "use": "sig", "alg": "RS256", "n": _int(numbers.n),
                          "e": _int(numbers.e)}]}

    def token(self, subject: str, scope: str | None) -> str:
        now = int(time.time())
        claims: dict[str, Any] = {"sub": subject, "iat": now, "exp": now + self.lifetime_s, "iss": self.url}
        if scope:
            claims["scope"] = scope
        header = {"alg": "RS256", "typ": "JWT", "kid": KID}
        signing_input = f"{_b64url(json.dumps(header).encode())}.{_b64url(json.dumps(claims).encode())}"
        signature = self._key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        self.issued.append(subject)
        return f"{signing_input}.{_b64url(signature)}"


class _Handler(BaseHTTPRequestHandler):
    oauth: OAuthServer

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.startswith("/jwks"):
            self._reply(200, self.oauth.jwks())
        else:
            self._reply(404, {"error": "not_found"})

    def do_POST(self) -> None:
        form = urllib.parse.parse_qs(self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode())
        auth = self.headers.get("Authorization", "")
        try:
            user, _, secret = base64.b64decode(auth.split(" ", 1)[1]).decode().partition(":")
        except (IndexError, ValueError):
            user, secret = "", ""
        client_id, client_secret = urllib.parse.unquote(user), urllib.parse.unquote(secret)
        if form.get("grant_type") != ["client_credentials"]:
            self._reply(400, {"error": "unsupported_grant_type"})
        elif self.oauth.clients.get(client_id) != client_secret or not client_id:
            self._reply(401, {"error": "invalid_client"})
        else:
            scope = form.get("scope", [None])[0]
            self._reply(200, {"access_token": self.oauth.token(client_id, scope), "token_type": "Bearer",
                              "expires_in": self.oauth.lifetime_s})

    def log_message(self, *_args: Any) -> None:
        pass

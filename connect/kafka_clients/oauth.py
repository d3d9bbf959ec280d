"""SASL/OAUTHBEARER tokens for kafka-python's ``sasl_oauth_token_provider`` hook, as Kafka's login callback
handlers get them:

* ``OAuthBearerLoginCallbackHandler`` (a ``sasl.oauthbearer.token.endpoint.url``): the OAuth client-credentials
  grant, ``clientId``/``clientSecret``/``scope`` from the JAAS options (or Kafka 4.1's
  ``sasl.oauthbearer.client.credentials.client.id``/``.secret`` and ``sasl.oauthbearer.scope``), sent as HTTP
  basic authentication; a ``file:`` URL names a file holding the token;
* no handler and no endpoint: Kafka's default ``OAuthBearerUnsecuredLoginCallbackHandler``, an unsigned JWT built
  from the ``unsecuredLoginStringClaim_sub`` (and ``unsecuredLoginLifetimeSeconds``) options, for test clusters.

``extension_<name>`` JAAS options become SASL extensions. An ``https`` token endpoint is trusted with the client's
``ssl.truststore.*`` settings when there are some (as Kafka's token retriever does), else the system's CAs.
Tokens are reused until 80 % of their lifetime has passed; one provider per endpoint and client id is shared by
every client of the process.
"""

from __future__ import annotations

import base64
import json
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from kafka.net.sasl.oauth import AbstractTokenProvider

from connect.api.errors import ConfigError
from connect.kafka_clients import tls

LOGIN_HANDLERS = (
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
    "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler",
)
UNSECURED_HANDLER = "org.apache.kafka.common.security.oauthbearer.internals.unsecured." \
                    "OAuthBearerUnsecuredLoginCallbackHandler"
REFRESH_FRACTION = 0.8

_providers: dict[tuple[str, ...], AbstractTokenProvider] = {}
_lock = threading.Lock()


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


class _CachingProvider(AbstractTokenProvider):  # type: ignore[misc]
    def __init__(self, extensions: Mapping[str, str]) -> None:
        super().__init__()
        self._extensions = dict(extensions)
        self._token: str | None = None
        self._refresh_at = 0.0
        self._lock = threading.Lock()

    def _fetch(self) -> tuple[str, float]:
        raise NotImplementedError

    def token(self) -> str:
        with self._lock:
            if self._token is None or time.monotonic() >= self._refresh_at:
                token, lifetime = self._fetch()
                self._token, self._refresh_at = token, time.monotonic() + lifetime * REFRESH_FRACTION
            return self._token

    def extensions(self) -> dict[str, str]:
        return dict(self._extensions)


class ClientCredentialsProvider(_CachingProvider):
    """Tokens from an OAuth token endpoint with the client-credentials grant (or a token file)."""

    def __init__(self, url: str, client_id: str | None, client_secret: str | None, scope: str | None,
                 extensions: Mapping[str, str], timeout: float = 10.0, context: ssl.SSLContext | None = None) -> None:
        super().__init__(extensions)
        self._url, self._client_id, self._secret, self._scope = url, client_id, client_secret, scope
        self._timeout, self._context = timeout, context

    def __repr__(self) -> str:
        return f"ClientCredentialsProvider({self._url!r}, client_id={self._client_id!r})"

    def _fetch(self) -> tuple[str, float]:
        if self._url.startswith("file:"):
            path = urllib.parse.urlparse(self._url).path
            with open(path, encoding="utf-8") as f:
                token = f.read().strip()
            return token, _jwt_lifetime(token)
        body = {"grant_type": "client_credentials"}
        if self._scope:
            body["scope"] = self._scope
        credentials = f"{urllib.parse.quote(self._client_id or '')}:{urllib.parse.quote(self._secret or '')}"
        request = urllib.request.Request(self._url, data=urllib.parse.urlencode(body).encode(), method="POST", headers={
            "Authorization": "Basic " + base64.b64encode(credentials.encode()).decode(),
            "Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json",
            "Cache-Control": "no-cache"})
        try:
            with urllib.request.urlopen(request, timeout=self._timeout, context=self._context) as response:
                answer = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise ConnectionError(f"OAuth token endpoint {self._url} answered {exc.code} {exc.reason}") from exc
        except (OSError, ValueError) as exc:
            raise ConnectionError(f"OAuth token endpoint {self._url} failed: {exc}") from exc
        access = answer.get("access_token") if isinstance(answer, dict) else None
        if not isinstance(access, str) or not access:
            raise ConnectionError(f"OAuth token endpoint {self._url} returned no access_token")
        expires = answer.get("expires_in")
        return access, float(expires) if isinstance(expires, int | float) else _jwt_lifetime(access)


class UnsecuredProvider(_CachingProvider):
    """Kafka's unsecured (unsigned) tokens, for clusters that validate them with the unsecured validator."""

    def __init__(self, options: Mapping[str, str], extensions: Mapping[str, str]) -> None:
        super().__init__(extensions)
        self._subject = options.get("unsecuredLoginStringClaim_sub", "")
        self._lifetime = float(options.get("unsecuredLoginLifetimeSeconds", "3600"))
        self._scope = options.get("unsecuredLoginListClaim_scope")
        if not self._subject:
            raise ConfigError("sasl.jaas.config", None, "OAUTHBEARER without sasl.oauthbearer.token.endpoint.url "
                                                        "needs the unsecuredLoginStringClaim_sub option")

    def _fetch(self) -> tuple[str, float]:
        now = time.time()
        claims: dict[str, Any] = {"sub": self._subject, "iat": now, "exp": now + self._lifetime}
        if self._scope:  # a list claim: its first character is the delimiter, as in Kafka
            claims["scope"] = [s for s in self._scope[1:].split(self._scope[0]) if s]
        header = _b64url(json.dumps({"alg": "none"}).encode())
        return f"{header}.{_b64url(json.dumps(claims).encode())}.", self._lifetime


def _jwt_lifetime(token: str) -> float:
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        return max(float(claims["exp"]) - time.time(), 1.0)
    except (IndexError, KeyError, ValueError, TypeError):
        return 300.0


def token_provider(settings: Mapping[str, Any], options: Mapping[str, str]) -> AbstractTokenProvider:
    """The token provider the OAUTHBEARER settings and JAAS options describe (shared within the process)."""
    extensions = {k[len("extension_"):]: v for k, v in options.items() if k.startswith("extension_")}
    handler = str(settings.get("sasl.login.callback.handler.class") or "")
    url = str(settings.get("sasl.oauthbearer.token.endpoint.url") or "")
    if handler and handler not in (*LOGIN_HANDLERS, UNSECURED_HANDLER):
        raise ConfigError("sasl.login.callback.handler.class", handler,
                          f"only Kafka's {LOGIN_HANDLERS[0]} (or the unsecured one) can run here")
    if url and handler != UNSECURED_HANDLER:
        client_id = options.get("clientId") or settings.get("sasl.oauthbearer.client.credentials.client.id")
        secret = options.get("clientSecret") or settings.get("sasl.oauthbearer.client.credentials.client.secret")
        scope = options.get("scope") or settings.get("sasl.oauthbearer.scope")
        if not url.startswith("file:") and not (client_id and secret):
            raise ConfigError("sasl.jaas.config", None, "the OAuth client-credentials flow needs the clientId and "
                                                        "clientSecret options")
        timeout = float(settings.get("sasl.login.read.timeout.ms") or 10_000) / 1000
        # as Kafka's token retriever, an https endpoint is trusted with the client's own ssl.* settings
        tls_settings = {k: str(v) for k, v in settings.items() if k.startswith("ssl.")}
        context = tls.ssl_context(tls_settings) if url.lower().startswith("https:") and any(
            k.startswith("ssl.truststore.") for k in tls_settings) else None
        key: tuple[str, ...] = ("cc", url, str(client_id), str(scope), json.dumps(extensions, sort_keys=True),
                                json.dumps(tls_settings, sort_keys=True))
        factory: Any = lambda: ClientCredentialsProvider(  # noqa: E731
            url, str(client_id) if client_id else None, str(secret) if secret else None,
            str(scope) if scope else None, extensions, timeout, context)
    elif handler in LOGIN_HANDLERS:
        raise ConfigError("sasl.oauthbearer.token.endpoint.url", None,
                          f"{handler} needs the token endpoint URL")
    else:
        key = ("unsecured", json.dumps(dict(options), sort_keys=True))
        factory = lambda: UnsecuredProvider(options, extensions)  # noqa: E731
    with _lock:
        provider = _providers.get(key)
        if provider is None:
            provider = _providers[key] = factory()
        return provider

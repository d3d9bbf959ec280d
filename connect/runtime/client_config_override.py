"""The worker's ``connector.client.config.override.policy`` (Connect's ``ConnectorClientConfigOverridePolicy``):
which ``producer.override.*``, ``consumer.override.*`` and ``admin.override.*`` keys a connector config may set.

``All`` (the default) allows every key, ``None`` none, ``Principal`` only ``sasl.jaas.config``, ``sasl.mechanism``
and ``security.protocol``, ``Allowlist`` the keys of ``connector.client.config.override.allowlist``.
"""

from __future__ import annotations

from collections.abc import Mapping

POLICY_CONFIG = "connector.client.config.override.policy"
ALLOWLIST_CONFIG = "connector.client.config.override.allowlist"
_CLIENT_PREFIXES = ("producer.override.", "consumer.override.", "admin.override.")
_PRINCIPAL_KEYS = frozenset({"sasl.jaas.config", "sasl.mechanism", "security.protocol"})


def client_override_error(key: str, worker: Mapping[str, str]) -> str | None:
    """The policy's error for the connector config key ``key`` under the worker config ``worker``, or None when the
    key is not a client override or the policy allows it."""
    prefix = next((p for p in _CLIENT_PREFIXES if key.startswith(p)), None)
    if prefix is None:
        return None
    policy = worker.get(POLICY_CONFIG, "All")
    name = key[len(prefix):]
    allowed = {"All": True, "None": False, "Principal": name in _PRINCIPAL_KEYS,
               "Allowlist": name in {n.strip() for n in worker.get(ALLOWLIST_CONFIG, "").split(",") if n.strip()}
               }.get(policy, True)
    if allowed:
        return None
    return f"The '{policy}' policy does not allow '{name}' to be overridden in the connector configuration."

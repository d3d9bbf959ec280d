"""Config providers (KIP-297): ``${provider:[path:]key}`` placeholders in connector configs, resolved when a
connector or task starts and never stored resolved (REST and the config topic keep the placeholders).

Configured like Connect's worker::

    config.providers=file,env,dir
    config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
    config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
    config.providers.dir.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from connect.config.properties import load_properties
from connect.runtime.worker_config import prefixed

log = logging.getLogger(__name__)

_PLACEHOLDER = re.compile(r"\$\{([^}]*?):(?:([^}]*?):)?([^}]*?)\}")
Provider = Callable[[str | None, str], str | None]


def _file_provider(_params: Mapping[str, str]) -> Provider:
    def lookup(path: str | None, key: str) -> str | None:
        if not path:
            return None
        try:
            return load_properties(path).get(key)
        except OSError as exc:
            log.warning("Config provider could not read %s: %s", path, exc)
            return None
    return lookup


def _directory_provider(_params: Mapping[str, str]) -> Provider:
    def lookup(path: str | None, key: str) -> str | None:
        file = Path(path or ".") / key
        try:
            return file.read_text(encoding="utf-8")
        except OSError:
            return None
    return lookup


def _env_provider(params: Mapping[str, str]) -> Provider:
    allowed = re.compile(params.get("allowlist.pattern", ".*"))

    def lookup(_path: str | None, key: str) -> str | None:
        return os.environ.get(key) if allowed.fullmatch(key) else None
    return lookup


_CLASSES: dict[str, Callable[[Mapping[str, str]], Provider]] = {
    "org.apache.kafka.common.config.provider.FileConfigProvider": _file_provider,
    "FileConfigProvider": _file_provider,
    "org.apache.kafka.common.config.provider.DirectoryConfigProvider": _directory_provider,
    "DirectoryConfigProvider": _directory_provider,
    "org.apache.kafka.common.config.provider.EnvVarConfigProvider": _env_provider,
    "EnvVarConfigProvider": _env_provider,
}


class ConfigTransformer:
    """Resolves placeholders with the providers the worker config declares (Connect's ``WorkerConfigTransformer``)."""

    def __init__(self, worker_props: Mapping[str, str]) -> None:
        self._providers: dict[str, Provider] = {}
        for alias in (a.strip() for a in worker_props.get("config.providers", "").split(",") if a.strip()):
            class_name = worker_props.get(f"config.providers.{alias}.class", "")
            factory = _CLASSES.get(class_name)
            if factory is None:
                log.error("Unknown config provider class %r for %s; its placeholders stay unresolved", class_name,
                          alias)
                continue
            self._providers[alias] = factory(prefixed(worker_props, f"config.providers.{alias}.param."))

    def transform(self, props: Mapping[str, str]) -> dict[str, str]:
        """``props`` with every resolvable placeholder replaced."""
        if not self._providers:
            return dict(props)
        return {key: _PLACEHOLDER.sub(self._replace, value) if "${" in value else value for key, value in props.items()}

    def _replace(self, match: re.Match[str]) -> str:
        provider = self._providers.get(match.group(1))
        if provider is None:
            return match.group(0)
        value = provider(match.group(2), match.group(3))
        return match.group(0) if value is None else value

    @staticmethod
    def restore(raw: Mapping[str, str], resolved: Mapping[str, str], task_config: Mapping[str, str]) -> dict[str, str]:
        """A task config with the connector's placeholders put back where their resolved value was copied."""
        return {k: raw[k] if k in raw and "${" in raw[k] and resolved.get(k) == v else v
                for k, v in task_config.items()}

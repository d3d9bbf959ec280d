"""The error tree of the plugin contract (Python counterpart of Connect's ``errors`` package).

::

    ConnectError                      root; ``retriable`` says whether a retry may succeed
    ├── RetriableError                transient: the framework retries or restarts the task
    ├── DataError                     a record could not be converted or is malformed
    ├── ConfigError                   a configuration value is missing or invalid
    ├── NotFoundError                 a connector, task or plugin does not exist
    └── AlreadyExistsError            a connector with that name exists already
"""

from __future__ import annotations

from typing import ClassVar


class ConnectError(Exception):
    """Root of every error raised by the worker, its plugins and its REST layer."""

    retriable: ClassVar[bool] = False


class RetriableError(ConnectError):
    """A transient failure: the operation may succeed if tried again."""

    retriable: ClassVar[bool] = True


class DataError(ConnectError):
    """A value does not match its schema, or bytes cannot be decoded."""


class ConfigError(ConnectError):
    """A configuration value is missing or invalid."""

    def __init__(self, name: str, value: object, message: str) -> None:
        self.name = name
        self.value = value
        self.reason = message
        super().__init__(f"Invalid value {value} for configuration {name}: {message}")


class NotFoundError(ConnectError):
    """The named connector, task or plugin does not exist."""


class AlreadyExistsError(ConnectError):
    """A connector with the same name already exists."""

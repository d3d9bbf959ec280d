"""Runtime errors that carry an HTTP status (Connect's ``ConnectRestException`` family)."""

from __future__ import annotations

from connect.api.errors import ConnectError


class ConnectRestError(ConnectError):
    """An error the REST layer reports with its own status code."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class BadRequestError(ConnectRestError):
    """A 400: the request is invalid."""

    def __init__(self, message: str) -> None:
        super().__init__(400, message)


class ConflictError(ConnectRestError):
    """A 409: the request conflicts with ongoing work (for example a rebalance)."""

    def __init__(self, message: str) -> None:
        super().__init__(409, message)

"""Value checks of the ConfigDef kernel, with Java's ``ConfigDef`` validators' messages.

A :data:`Check` gets ``(key name, parsed value)`` -- the value as :func:`connect.config.values.parse` typed it, or
None when the key is unset without default or its value does not parse -- and returns the whole error message
(``ConfigException(name, value, reason)``'s text) or None. As in Java, a check sees a missing value too: most
reject it, some (``allow_null``) let it through.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from connect.javalang import value_of

Check = Callable[[str, Any], str | None]
"""A Java-style validator: ``(key name, parsed value or None)`` -> a full error message or None."""


def invalid(name: str, value: Any, reason: str) -> str:
    """Java's ``ConfigException(name, value, message)`` text."""
    return f"Invalid value {value_of(value)} for configuration {name}: {reason}"


def at_least(minimum: int, *, allow_null: bool = False) -> Check:
    """``ConfigDef.Range.atLeast`` (with ``allow_null``: Connect's null-tolerant variant)."""
    def check(name: str, value: Any) -> str | None:
        if value is None:
            return None if allow_null else invalid(name, None, "Value must be non-null")
        return None if value >= minimum else invalid(name, value, f"Value must be at least {minimum}")
    return check


def one_of(*allowed: str) -> Check:
    """``ConfigDef.ValidString.in``."""
    def check(name: str, value: Any) -> str | None:
        return None if value in allowed else invalid(name, value, f"String must be one of: {', '.join(allowed)}")
    return check


def one_of_ignoring_case(*allowed: str) -> Check:
    """``ConfigDef.CaseInsensitiveValidString.in`` (``allowed`` in upper case)."""
    def check(name: str, value: Any) -> str | None:
        if value is not None and str(value).upper() in allowed:
            return None
        return invalid(name, value, f"String must be one of (case insensitive): {', '.join(allowed)}")
    return check


def non_empty(name: str, value: Any) -> str | None:
    """``ConfigDef.NonEmptyString`` (null passes)."""
    return None if value is None or str(value) else invalid(name, value, "String must be non-empty")


def non_empty_without_controls(name: str, value: Any) -> str | None:
    """``ConfigDef.NonEmptyStringWithoutControlChars`` (null passes)."""
    if value is None:
        return None
    if not str(value):
        return invalid(name, value, "String may not be empty")
    controls = [str(ord(c)) for c in str(value) if ord(c) < 32 or 127 <= ord(c) < 160]
    if controls:
        return invalid(name, value, "String may not contain control sequences but had the following ASCII "
                                    f"chars: {', '.join(controls)}")
    return None

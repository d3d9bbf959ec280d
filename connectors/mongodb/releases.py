"""The Debezium releases whose records this connector reproduces byte for byte (``debezium.release``, ours).

Debezium's bytes change between releases through the MongoDB Java driver it bundles: 3.6.1 (driver 5.6.2) writes a
double with a non-negative exponent as ``1.0E300``, 3.6.3 (driver 5.9.2) as ``1.0E+300``, in every Extended JSON it
writes (``after``, ``before``, ``updateDescription``, the key). That is the only difference the golden files of the
two releases show (``tests/integration/mongodb/golden/``, recorded by ``python -m compat.debezium.golden
--release ...``). The default is the newest release; users who migrate from an older one set it to keep their
consumers' bytes.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DebeziumRelease:
    version: str  # source.version, the connector's reported version
    plus_exponent: bool  # doubles written 1.0E+7 (MongoDB Java driver 5.9+), not 1.0E7


RELEASES: dict[str, DebeziumRelease] = {
    "3.6.1.Final": DebeziumRelease("3.6.1.Final", plus_exponent=False),
    "3.6.3.Final": DebeziumRelease("3.6.3.Final", plus_exponent=True),
}
NEWEST = RELEASES["3.6.3.Final"]


def release(name: str | None) -> DebeziumRelease:
    """The release named ``name`` (``3.6.1.Final``, or short ``3.6.1``); the newest when empty."""
    if not name or not name.strip():
        return NEWEST
    text = name.strip()
    found = RELEASES.get(text) or RELEASES.get(f"{text}.Final")
    if found is None:
        raise ValueError(f"Value must be one of {', '.join(RELEASES)}")
    return found


def validate_release(_name: str, value: str) -> str | None:
    try:
        release(value)
    except ValueError as exc:
        return str(exc)
    return None

"""spark_jobs.columns: expressions built once per JVM."""

from __future__ import annotations

from spark_jobs import columns


def test_built_builds_once_per_key() -> None:
    calls: list[str] = []

    def build(name: str) -> list[str]:
        calls.append(name)
        return [name]

    first = columns.built(("test", "a"), lambda: build("a"))
    assert columns.built(("test", "a"), lambda: build("a")) is first
    assert columns.built(("test", "b"), lambda: build("b")) == ["b"]
    assert calls == ["a", "b"]


def test_built_stays_bounded() -> None:
    for n in range(3 * columns._MAX):
        columns.built(("bounded", n), lambda n=n: n)  # type: ignore[misc]
    assert len(columns._BUILT) <= columns._MAX

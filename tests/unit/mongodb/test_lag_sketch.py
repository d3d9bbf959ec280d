"""Debezium's quantiles of the lag behind the source (``MilliSecondsBehindSourceP50``/``P95``/``P99``)."""

from __future__ import annotations

from connectors.mongodb.streaming.metrics import LagSketch


def test_the_lag_quantiles_are_within_one_percent() -> None:
    sketch = LagSketch()
    assert sketch.quantile(0.5) is None
    sketch.add([0, -3])  # no lag (or a clock ahead): Debezium's zero bucket
    sketch.add(list(range(1, 1001)))
    for q in (0.5, 0.95, 0.99):
        exact = sorted([0, 0, *range(1, 1001)])[int(q * 1001)]
        assert abs((sketch.quantile(q) or 0) - exact) <= exact * 0.011, q
    assert sketch.quantile(0.0) == 0.0

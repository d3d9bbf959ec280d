"""Benchmarks: run with ``make bench`` or ``python -m benchmarks.<name>``; results go to results.md."""

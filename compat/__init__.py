"""Compatibility checks of our worker against the reference Apache Kafka Connect (dev-only, not installed)."""

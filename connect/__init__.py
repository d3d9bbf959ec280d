"""Kafka Connect-compatible worker runtime."""

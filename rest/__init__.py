"""Kafka Connect REST API."""

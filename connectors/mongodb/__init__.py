"""Debezium-compatible MongoDB source connector."""

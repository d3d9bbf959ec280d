"""Converters: Connect data <-> bytes."""

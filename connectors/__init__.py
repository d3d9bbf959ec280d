"""Connector plugins."""

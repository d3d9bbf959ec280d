"""A small reference connector: Kafka's ``FileStreamSourceConnector`` (one line of a file per record)."""

from connectors.file.source import FileStreamSourceConnector, FileStreamSourceTask

__all__ = ["FileStreamSourceConnector", "FileStreamSourceTask"]

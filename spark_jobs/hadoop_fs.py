"""Small files on any Hadoop file system (``file:``, ``s3a:``, ``hdfs:``, ``abfss:``, ``gs:`` ... whatever
connector jars the session has), through the session's own Hadoop ``FileSystem`` and configuration: the job's
bookkeeping lives beside its tables with no second client library and no second set of credentials.

A bare path (no scheme) is a local path, made absolute and turned into a ``file:`` URI.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from spark_jobs.jvm_classes import java_class

__all__ = ["HadoopFolder", "qualified"]

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^file:")


def qualified(location: str) -> str:
    """``location`` as a URI: kept when it has a scheme, else the absolute local path as ``file:``."""
    if _SCHEME.match(location):
        return location.rstrip("/")
    return Path(location).absolute().as_uri()


class HadoopFolder:
    """One folder of a Hadoop file system holding small text files."""

    def __init__(self, spark: SparkSession, uri: str) -> None:
        self._spark = spark
        self._path_class = java_class(spark, "org.apache.hadoop.fs.Path")
        self.uri = uri.rstrip("/")
        self._path = self._path_class(self.uri)
        self._fs = self._path.getFileSystem(spark._jsc.hadoopConfiguration())

    def _child(self, name: str) -> Any:
        return self._path_class(self._path, name)

    def names(self) -> list[str]:
        """Names of the files in the folder (none when it does not exist)."""
        if not self._fs.exists(self._path):
            return []
        return sorted(str(status.getPath().getName()) for status in self._fs.listStatus(self._path))

    def exists(self, name: str) -> bool:
        return bool(self._fs.exists(self._child(name)))

    def read(self, name: str) -> str:
        stream = self._fs.open(self._child(name))
        try:
            return str(java_class(self._spark, "org.apache.commons.io.IOUtils").toString(stream, "UTF-8"))
        finally:
            stream.close()

    def write(self, name: str, text: str) -> None:
        """Write ``name`` whole or not at all: a hidden temporary file renamed into place (an object store's
        PUT is atomic anyway)."""
        tmp, final = self._child(f".{name}.tmp"), self._child(name)
        out = self._fs.create(tmp, True)
        try:
            out.write(bytearray(text.encode("utf-8")))
        finally:
            out.close()
        if self._fs.exists(final):
            self._fs.delete(final, False)
        if not self._fs.rename(tmp, final):
            raise OSError(f"cannot rename {tmp} to {final}")

    def delete(self, name: str) -> None:
        self._fs.delete(self._child(name), False)

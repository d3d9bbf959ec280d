from pathlib import Path

import pytest

from connect.config.providers import ConfigTransformer

WORKER = {
    "config.providers": "file,env,dir",
    "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
    "config.providers.env.class": "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
    "config.providers.env.param.allowlist.pattern": "MONGO_.*",
    "config.providers.dir.class": "DirectoryConfigProvider",
}


def test_file_env_and_directory_placeholders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = tmp_path / "mongo.properties"
    secrets.write_text("uri=mongodb://u:p@db:27017/?replicaSet=rs0\n")
    (tmp_path / "password").write_text("s3cret")
    monkeypatch.setenv("MONGO_USER", "alice")
    monkeypatch.setenv("OTHER", "hidden")
    transformer = ConfigTransformer(WORKER)
    raw = {
        "mongodb.connection.string": f"${{file:{secrets}:uri}}",
        "mongodb.user": "${env:MONGO_USER}",
        "not.allowed": "${env:OTHER}",
        "mongodb.password": f"${{dir:{tmp_path}:password}}",
        "mixed": "pre-${env:MONGO_USER}-post",
        "unknown": "${vault:secret/x:key}",
        "plain": "value",
    }
    resolved = transformer.transform(raw)
    assert resolved == {
        "mongodb.connection.string": "mongodb://u:p@db:27017/?replicaSet=rs0",
        "mongodb.user": "alice",
        "not.allowed": "${env:OTHER}",
        "mongodb.password": "s3cret",
        "mixed": "pre-alice-post",
        "unknown": "${vault:secret/x:key}",
        "plain": "value",
    }
    task = {**resolved, "task.class": "T"}
    restored = ConfigTransformer.restore(raw, resolved, task)
    assert restored["mongodb.connection.string"] == raw["mongodb.connection.string"]
    assert restored["plain"] == "value" and restored["task.class"] == "T"


def test_without_providers_nothing_changes() -> None:
    props = {"a": "${file:/x:y}"}
    assert ConfigTransformer({}).transform(props) == props

"""connect.bootstrap without a worker: connector files it refuses, and a worker that never answers.
(Against a real worker: tests/integration/helm/test_bootstrap.py.)"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import stack as stack_mod
from connect.bootstrap import Bootstrap, BootstrapError, RestClient, connector_files, load_spec, main


def test_gives_up_on_an_unreachable_worker_within_the_timeout(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{stack_mod.free_port()}"
    bootstrap = Bootstrap(RestClient(url, timeout=2), timeout=3)
    with pytest.raises(BootstrapError, match=f"gave up waiting for a healthy worker at {url}"):
        bootstrap.run([])


@pytest.mark.parametrize(("content", "reason"), [
    ("{not json", "cannot read a JSON connector file"),
    ('["a"]', "must hold a JSON object"),
    ('{"config": {"connector.class": "x"}}', "has no 'name'"),
    ('{"name": "n", "config": {"topic.prefix": "p"}}', "connector n has no 'connector.class'"),
    ('{"name": "n", "config": {"name": "m", "connector.class": "x"}}', "config.name (m) does not match name (n)"),
    ('{"name": "n", "config": {"connector.class": "x", "nested": {"a": 1}}}', "config values must be scalars"),
])
def test_bad_connector_files_name_the_file_and_reason(tmp_path: Path, content: str, reason: str) -> None:
    path = tmp_path / "c.json"
    path.write_text(content)
    with pytest.raises(BootstrapError) as caught:
        load_spec(path)
    assert str(path) in str(caught.value) and reason in str(caught.value)


def test_duplicate_names_are_refused_before_any_call(tmp_path: Path) -> None:
    for file in ("a.json", "b.json"):
        (tmp_path / file).write_text('{"name": "same", "config": {"connector.class": "x"}}')
    (tmp_path / "notes.txt").write_text("not a connector")
    assert [p.name for p in connector_files([str(tmp_path)])] == ["a.json", "b.json"]
    url = f"http://127.0.0.1:{stack_mod.free_port()}"
    assert main(["--url", url, "--no-wait", "--timeout", "1", str(tmp_path)]) == 1


class _Recorder(http.server.BaseHTTPRequestHandler):
    """A stand-in REST endpoint that records the Authorization header and answers 200 on /health."""

    seen: list[str | None] = []

    def do_GET(self) -> None:
        self.seen.append(self.headers.get("Authorization"))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def recorder() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def test_basic_auth_password_from_a_file(recorder: str, tmp_path: Path) -> None:
    password = tmp_path / "password"
    password.write_text("s3cret\n")
    (tmp_path / "connectors").mkdir()
    _Recorder.seen.clear()
    assert main(["--url", recorder, "--user", "admin", "--password-file", str(password), "--timeout", "10",
                 str(tmp_path / "connectors")]) == 0
    assert _Recorder.seen == ["Basic YWRtaW46czNjcmV0"]  # admin:s3cret, the file's newline stripped

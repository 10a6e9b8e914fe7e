"""``--from-run mlflow:`` against a tracking server that lies in time: it answers the MLflow REST calls
the fetch makes (run, artifact listing, get-artifact) itself, and sends a file's bytes either at a
normal pace (the valid twin, fetched) or one byte at a time under the per-read timeout (refused at the
fetch's deadline, with one line, instead of stalling the run for as long as the server likes).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from agentos.errors import UsageError

RUN_ID = "0123456789abcdef0123456789abcdef"
CONTENT = b'{"id": "hostile", "mode": "train"}\n' * 8


class LyingServer(BaseHTTPRequestHandler):
    """Enough of MLflow's REST API for ``fetch``; ``server.pace`` is the seconds between two bytes sent."""

    def log_message(self, *args) -> None:
        pass

    def _json(self, value) -> None:
        body = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _huge(self, megabytes: int) -> None:
        """A run whose one tag is ``megabytes`` MiB: an answer of any size MLflow's client would hold."""
        head, tail = b'{"run": {"info": {}, "data": {"tags": [{"key": "junk", "value": "', b'"}]}}}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(head) + (megabytes << 20) + len(tail)))
        self.end_headers()
        try:
            self.wfile.write(head)
            for _ in range(megabytes):
                self.wfile.write(b"A" * (1 << 20))
                self.server.sent += 1
            self.wfile.write(tail)
        except OSError:
            pass

    def do_GET(self) -> None:
        self.server.auth.append(self.headers.get("Authorization"))
        if self.path.startswith("/get-artifact") and self.server.redirect:
            self.send_response(302)
            self.send_header("Location", self.server.redirect + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path.startswith("/api/2.0/mlflow/runs/get") and self.server.huge_run:
            return self._huge(self.server.huge_run)
        if self.path.startswith("/api/2.0/mlflow/runs/get"):
            files = json.dumps({"run.json": hashlib.sha256(CONTENT).hexdigest()})
            info = {"run_id": RUN_ID, "run_uuid": RUN_ID, "experiment_id": "0", "status": "FINISHED",
                    "lifecycle_stage": "active", "artifact_uri": f"mlflow-artifacts:/0/{RUN_ID}/artifacts"}
            return self._json({"run": {"info": info, "data": {"tags": [{"key": "agentos.files", "value": files}]}}})
        if self.path.startswith(("/api/2.0/mlflow-artifacts/artifacts", "/api/2.0/mlflow/artifacts/list")):
            return self._json({"files": [{"path": "run.json", "is_dir": False, "file_size": len(CONTENT)}]})
        if self.path.startswith(("/get-artifact", "/moved/get-artifact")):
            self.send_response(200)
            self.send_header("Content-Length", str(len(CONTENT)))
            self.end_headers()
            pace = self.server.pace
            try:
                for i in range(len(CONTENT)):
                    self.wfile.write(CONTENT[i:i + 1])
                    self.wfile.flush()
                    time.sleep(pace)
            except OSError:
                pass
            return
        self.send_error(404)


def _start():
    server = ThreadingHTTPServer(("127.0.0.1", 0), LyingServer)
    server.daemon_threads = True
    server.pace = 0.0
    server.huge_run, server.sent, server.redirect, server.auth = 0, 0, None, []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def lying_server(monkeypatch):
    server = _start()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", lying_server_url(server))
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "2")
    monkeypatch.setenv("AGENTOS_MLFLOW_FETCH_TIMEOUT", "3")
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def other_origin():
    server = _start()  # another port of 127.0.0.1: another origin
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("elsewhere", [False, True])
def test_the_token_goes_to_the_tracking_server_and_never_to_where_it_redirects(lying_server, other_origin, tmp_path,
                                                                               monkeypatch, elsewhere):
    """A redirect of get-artifact to another origin is followed without the token (the file is still
    checked by its sha256); the valid twin redirects within the tracking server's origin and keeps it."""
    from agentos_tracker_mlflow.source import fetch

    monkeypatch.setenv("MLFLOW_TRACKING_TOKEN", "s3cret-token")
    lying_server.redirect = lying_server_url(other_origin if elsewhere else lying_server) + "/moved"
    fetch(RUN_ID, str(tmp_path), max_bytes=1 << 20)
    assert (tmp_path / "run.json").read_bytes() == CONTENT
    assert set(lying_server.auth if elsewhere else lying_server.auth[:-1]) == {"Bearer s3cret-token"}
    landed = other_origin.auth if elsewhere else lying_server.auth[-1:]
    assert landed == ([None] if elsewhere else ["Bearer s3cret-token"])


def test_a_file_sent_at_a_normal_pace_is_fetched(lying_server, tmp_path):
    from agentos_tracker_mlflow.source import fetch

    lying_server.pace = 0.002  # about 0.6 s for the file: well inside the deadline
    fetch(RUN_ID, str(tmp_path), max_bytes=1 << 20)
    assert (tmp_path / "run.json").read_bytes() == CONTENT


def test_a_file_trickled_under_the_read_timeout_is_refused_at_the_deadline(lying_server, tmp_path):
    from agentos_tracker_mlflow.source import fetch

    lying_server.pace = 0.5  # each byte well inside the 2 s read timeout; the file would take 2.5 minutes
    started = time.monotonic()
    with pytest.raises(UsageError) as caught:
        fetch(RUN_ID, str(tmp_path), max_bytes=1 << 20)
    assert time.monotonic() - started < 8
    message = str(caught.value)
    assert "\n" not in message
    assert message == (f"run mlflow:{RUN_ID}: {lying_server_url(lying_server)} did not send it within 3 s "
                       "(AGENTOS_MLFLOW_FETCH_TIMEOUT); not using it")
    time.sleep(2.5)  # the fetching thread stops writing at the deadline: the partial file does not grow
    size = (tmp_path / "run.json").stat().st_size if (tmp_path / "run.json").exists() else 0
    time.sleep(1.5)
    assert size < len(CONTENT)
    assert ((tmp_path / "run.json").stat().st_size if (tmp_path / "run.json").exists() else 0) == size


def test_a_run_answer_larger_than_the_bound_is_refused_without_reading_it_all(lying_server, tmp_path):
    from agentos_tracker_mlflow.source import MAX_ANSWER_BYTES, fetch

    lying_server.huge_run = 256  # MiB; MLflow's client held about 4.7 times an answer's size in memory
    with pytest.raises(UsageError) as caught:
        fetch(RUN_ID, str(tmp_path), max_bytes=1 << 20)
    assert str(caught.value) == (f"mlflow:{RUN_ID}: no such run at {lying_server_url(lying_server)} "
                                 f"(its answer is larger than {MAX_ANSWER_BYTES:,} bytes)")
    time.sleep(0.5)
    assert lying_server.sent < 64  # the client stopped reading: the server could not send the rest
    assert list(tmp_path.iterdir()) == []


def test_a_fetch_timeout_that_is_not_a_number_is_one_line(lying_server, tmp_path, monkeypatch):
    from agentos_tracker_mlflow.source import fetch

    monkeypatch.setenv("AGENTOS_MLFLOW_FETCH_TIMEOUT", "soon")
    with pytest.raises(UsageError, match=r"^AGENTOS_MLFLOW_FETCH_TIMEOUT='soon' is not a number of seconds$"):
        fetch(RUN_ID, str(tmp_path), max_bytes=1 << 20)


def lying_server_url(server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"

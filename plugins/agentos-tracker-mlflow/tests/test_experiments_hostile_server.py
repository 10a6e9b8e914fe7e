"""An experiment whose tracking server trickles its answers (a byte every half second, under MLflow's
per-read timeout): its start and its end give up after the flush timeout with one warning line and the
experiment runs without MLflow, where they waited for as long as the server liked; the valid twin
against a real ``mlflow server`` gets its parent run.
"""

from __future__ import annotations

import threading
import time
import types
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


class Trickler(BaseHTTPRequestHandler):
    """Answers every call with a JSON body it sends one space at a time, and never finishes."""

    def log_message(self, *args) -> None:
        pass

    def _trickle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "100000")
        self.end_headers()
        try:
            while not self.server.closing:
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.5)
        except OSError:
            pass

    do_GET = do_POST = _trickle


@pytest.fixture
def trickler():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Trickler)
    server.daemon_threads, server.closing = True, False
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.closing = True
    server.shutdown()
    server.server_close()


@pytest.fixture
def hooks(monkeypatch):
    from agentos_tracker_mlflow import _experiments, _settings

    monkeypatch.setattr(_settings, "DEFAULT_FLUSH_TIMEOUT", 2.0)
    return _experiments.ExperimentHooks()


def _experiment(folder) -> types.SimpleNamespace:
    return types.SimpleNamespace(name="hostile_sweep", folder=str(folder), trials=[], pending=[], context={})


def test_a_real_server_gives_the_experiment_its_parent_run(hooks, mlflow_server, tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", mlflow_server)
    experiment = _experiment(tmp_path)
    hooks.agentos_experiment_start(experiment)
    assert experiment.context["mlflow"]["parent_run_id"]
    hooks.agentos_experiment_end(experiment, types.SimpleNamespace(trials=[]))
    from mlflow.tracking import MlflowClient

    run = MlflowClient(mlflow_server).get_run(experiment.context["mlflow"]["parent_run_id"])
    assert run.info.status == "FINISHED"


def test_a_trickling_server_does_not_hold_the_start_or_the_end(hooks, trickler, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", trickler)
    experiment = _experiment(tmp_path)
    started = time.monotonic()
    hooks.agentos_experiment_start(experiment)
    assert time.monotonic() - started < 5
    assert "mlflow" not in experiment.context
    assert capsys.readouterr().err.splitlines() == [
        f"agentos: warning: MLflow at {trickler} did not answer within 2 s; the experiment runs without MLflow"]

    from agentos_tracker_mlflow._sender import client_for

    hooks.parents[id(experiment)] = (client_for(trickler), "0123456789abcdef0123456789abcdef")  # fails later
    started = time.monotonic()
    hooks.agentos_experiment_end(experiment, types.SimpleNamespace(trials=[]))
    assert time.monotonic() - started < 5
    assert capsys.readouterr().err.splitlines() == [
        "agentos: warning: MLflow: the experiment's run was not ended (no answer within 2 s)"]

"""Experiments: one MLflow parent run per experiment folder, one nested run per trial.

The client (``agentos_experiment_start``) finds or makes the parent run (tagged with a hash of the
experiment folder, so that a resumed experiment reuses it) and puts the tracking URI, the MLflow
experiment and the parent run id into the experiment's context, which core sends with every trial
to its worker (a process pool's or a Dask worker's). There ``agentos_trial_start`` starts the trial's
run under the parent; a trial that runs again on resume (it had not finished) first has its earlier run
deleted, so that there is one run per trial. (A trial retried within one session because its worker died
may leave its first, unfinished run beside the new one.)

``agentos tune`` calls the same hooks for its study (``kind`` ``study``: the parent run) and for each
Optuna trial (``kind`` ``tune-trial``: a run nested in the study's, with the trial's settings as params,
its score as the metric ``tune_value`` and its state as the tag ``agentos.state``); the seeds of a trial
run with the trial's context, so their runs nest under the trial's run.
"""

from __future__ import annotations

import hashlib
import os
import threading

from agentos import hookimpl

from . import _settings, _tracker
from ._sender import UNSENT_FILE, Sender, client_for, experiment_id_for, warn

KEY_TAG = "agentos.experiment_key"


def _within(seconds: float, work):
    """``work()`` in a daemon thread: ``(True, its result)``, ``(False, its exception)``, or ``(None, None)``
    when it has not returned after ``seconds`` (a server that trickles its answers under MLflow's per-read
    timeout would otherwise hold the experiment's start or end for as long as it likes)."""
    outcome: list = []

    def run() -> None:
        try:
            outcome.append((True, work()))
        except Exception as exc:
            outcome.append((False, exc))

    worker = threading.Thread(target=run, name="agentos-mlflow-experiment", daemon=True)
    worker.start()
    worker.join(seconds)
    return outcome[0] if outcome else (None, None)


class ExperimentHooks:
    """Hook implementations for experiments (client) and trials (workers)."""

    def __init__(self):
        self.parents: dict[int, tuple] = {}  # id(experiment) -> (client, run id): a tune runs several at once
        self.lock = threading.Lock()

    @hookimpl
    def agentos_experiment_start(self, experiment):
        kind = str(getattr(experiment, "kind", "experiment"))
        if kind == "tune-trial":
            parent = getattr(experiment, "parent", None)
            where = parent.get("mlflow") if isinstance(parent, dict) else None
            if isinstance(where, dict) and where.get("uri"):
                self._start(experiment, str(where["uri"]), lambda: self._nested(experiment, where))
            return
        uri = os.environ.get("MLFLOW_TRACKING_URI", "").strip()
        if not uri:
            return

        def setup():
            client = client_for(uri)
            name = os.environ.get("MLFLOW_EXPERIMENT_NAME", "").strip() or experiment.name
            experiment_id = experiment_id_for(client, name)
            key = hashlib.sha256(experiment.folder.encode()).hexdigest()[:24]
            found = client.search_runs([experiment_id], filter_string=f"tags.`{KEY_TAG}` = '{key}'", max_results=1)
            logged: list[str] = []
            if found:  # resumed: the trials that run again may have runs from before (replaced, not doubled)
                run_id = found[0].info.run_id
                client.update_run(run_id, status="RUNNING")
                pending = set(experiment.pending)
                children = client.search_runs([experiment_id], filter_string=f"tags.`mlflow.parentRunId` = '{run_id}'",
                                              max_results=50_000)
                logged = sorted({r.data.tags.get("agentos.trial") for r in children} & pending)
            else:
                tags = {KEY_TAG: key, "agentos.kind": kind, "agentos.experiment_folder": experiment.folder}
                run_id = client.create_run(experiment_id, tags=tags, run_name=experiment.name).info.run_id
            return client, experiment_id, run_id, logged

        self._start(experiment, uri, setup)

    @staticmethod
    def _nested(experiment, where: dict):
        """A tune-trial's run, under its study's run (a requeued trial has a new number: a new run)."""
        from mlflow.entities import Param

        client = client_for(str(where["uri"]))
        tags = {"mlflow.parentRunId": str(where["parent_run_id"]), "agentos.kind": "tune-trial",
                KEY_TAG: hashlib.sha256(experiment.folder.encode()).hexdigest()[:24]}
        run_id = client.create_run(str(where["experiment_id"]), tags=tags, run_name=experiment.name).info.run_id
        params = [Param(str(k)[:250], str(v)[:500]) for k, v in (getattr(experiment, "params", None) or {}).items()]
        if params:
            client.log_batch(run_id, params=params[:100])
        return client, str(where["experiment_id"]), run_id, []

    def _start(self, experiment, uri: str, setup) -> None:
        seconds = _settings.DEFAULT_FLUSH_TIMEOUT
        done, value = _within(seconds, setup)
        if done is None:
            warn(f"MLflow at {uri} did not answer within {seconds:g} s; the experiment runs without MLflow")
            return
        if not done:
            exc = value
            warn(f"MLflow at {uri} failed ({type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''})"
                 "; the experiment runs without MLflow")
            return
        client, experiment_id, run_id, logged = value
        with self.lock:
            self.parents[id(experiment)] = (client, run_id)
        experiment.context["mlflow"] = {"uri": uri, "experiment_id": experiment_id, "parent_run_id": run_id,
                                        "logged_trials": logged}

    @hookimpl
    def agentos_experiment_end(self, experiment, result):
        with self.lock:
            found = self.parents.pop(id(experiment), None)
        if found is None:
            return
        client, run_id = found
        kind = str(getattr(experiment, "kind", "experiment"))

        def finish() -> None:
            trials = list(getattr(result, "trials", None) or [])
            failed = sum(1 for t in trials if t.get("status") not in ("finished", "pruned"))
            client.set_tag(run_id, "agentos.trials", str(len(trials)))
            if kind == "tune-trial":
                state, value = str(getattr(result, "state", None) or "interrupted"), getattr(result, "value", None)
                client.set_tag(run_id, "agentos.state", state)
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    client.log_metric(run_id, "tune_value", float(value))
                status = {"complete": "FINISHED", "pruned": "FINISHED", "interrupted": "KILLED"}.get(state, "FAILED")
            elif kind == "study":
                status = "FINISHED" if result is not None else "KILLED"
            else:
                status = "FAILED" if failed or result is None else "FINISHED"
            client.set_terminated(run_id, status)

        seconds = _settings.DEFAULT_FLUSH_TIMEOUT
        done, value = _within(seconds, finish)
        if done is None:
            warn(f"MLflow: the experiment's run was not ended (no answer within {seconds:g} s)")
        elif not done:
            warn(f"MLflow: the experiment's run was not ended ({type(value).__name__})")

    @hookimpl
    def agentos_trial_start(self, trial, context, folder):
        where = context.get("mlflow") if isinstance(context, dict) else None
        if not isinstance(where, dict) or not where.get("uri"):
            _tracker.current_trial = None
            return
        sender = Sender(str(where["uri"]), os.path.join(folder, UNSENT_FILE))
        rerun = trial.get("id") in (where.get("logged_trials") or ())
        params = {"agent": trial.get("agent"), "environment": trial.get("environment"), "seed": trial.get("seed")}
        params.update({str(k): v for k, v in (trial.get("settings") or {}).items()})
        label = f"{trial.get('agent')} {trial.get('environment')} seed={trial.get('seed')}"
        sender.put({"op": "start", "experiment_id": where.get("experiment_id"),
                    "parent_run_id": where.get("parent_run_id"),
                    "replaces_trial": trial.get("id") if rerun else None,
                    "name": label, "start_ms": _tracker._now_ms(),
                    "tags": {"agentos.trial": trial.get("id"), "agentos.kind": "trial"}})
        sender.put({"op": "batch", "params": params})
        _tracker.current_trial = {"sender": sender, "trial": trial}

    @hookimpl
    def agentos_trial_end(self, trial, outcome):
        current, _tracker.current_trial = _tracker.current_trial, None
        if current is None:
            return
        sender = current["sender"]
        status = outcome.get("status", "failed")
        sender.put({"op": "batch", "tags": {"agentos.status": status}})
        sender.put({"op": "end", "status": _tracker.STATUS.get(status, "FAILED"), "end_ms": _tracker._now_ms()})
        sender.close(_settings.DEFAULT_FLUSH_TIMEOUT)  # the trial's folder goes away after this

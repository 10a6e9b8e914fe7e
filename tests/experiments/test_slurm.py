"""Experiments on a real single-node Slurm (munged, slurmctld, slurmd started here, see slurm_cluster.py):
the workers are Slurm jobs, none is left in ``squeue``, and a cancelled job loses and repeats nothing."""

from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from agentos.experiments import run_experiment
from experiments.helpers import agentos
from slurm_cluster import SingleNodeSlurm

# interface lo: the scheduler and the workers meet on 127.0.0.1
GRID = ("[experiment]\nagents = [sarsa_table]\nenvironments = [corridor]\nseeds = {seeds}\n{budget}\n"
        "test-episodes = 2\n\n[cluster]\nmax-jobs = {jobs}\ninterface = lo\nmemory = 1GB\nwalltime = 00:10:00\n")


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    cluster = SingleNodeSlurm(str(tmp_path_factory.mktemp("slurm")))
    with cluster:
        os.environ["SLURM_CONF"] = cluster.conf  # for dask-jobqueue's sbatch and scancel, in this process
        try:
            yield cluster
        finally:
            os.environ.pop("SLURM_CONF", None)


def _records(folder) -> dict[str, dict]:
    return {os.path.basename(os.path.dirname(p)): json.load(open(p))
            for p in glob.glob(os.path.join(folder, "trials", "*", "trial.json"))}


def test_a_grid_runs_on_slurm_jobs_and_leaves_none(slurm, write_experiment, tmp_path):
    path = write_experiment(GRID.format(seeds=4, budget="episodes = 20", jobs=2))
    done = agentos("experiment", "run", str(path), "--cluster", "slurm", cwd=tmp_path, env=slurm.env)
    assert done.returncode == 0, done.stderr
    records = _records(tmp_path / "experiments" / "sweep")
    assert len(records) == 4 and {r["status"] for r in records.values()} == {"finished"}, records
    assert all(r["pid"] != os.getpid() for r in records.values())
    logs = glob.glob(str(tmp_path / "experiments" / "sweep" / ".jobs" / "logs" / "agentos-*.out"))
    assert len(logs) == 2  # min(4 trials, max-jobs 2) jobs were submitted
    assert slurm.jobs_left() == []  # every job was cancelled at the end


def test_a_cancelled_job_is_replaced_and_its_trial_runs_again(slurm, tmp_path):
    cancelled = []

    def cancel_mid_trial(done, total, running):
        if not cancelled and any("return" in row for row in running):  # a trial is training on the job
            cancelled.extend(slurm.jobs())
            slurm.run("scancel", *cancelled)

    result = run_experiment(["sarsa_table"], ["corridor"], seeds=2, steps=60_000, test_episodes=2,
                            folder=str(tmp_path / "exp"), cluster="slurm",
                            cluster_options={"max-jobs": 1, "interface": "lo", "memory": "1GB"},
                            on_progress=cancel_mid_trial)
    assert len(cancelled) == 1, cancelled
    assert [t["status"] for t in result.trials] == ["finished", "finished"], result.failed()
    # the interrupted trial started again on the new job (a trial queued on the cancelled job may too)
    assert max(t["attempts"] for t in result.trials) == 2, result.trials
    assert len(_records(tmp_path / "exp")) == 2
    assert slurm.jobs_left() == []


@pytest.mark.parametrize(("stop", "code"), [(signal.SIGTERM, 128 + signal.SIGTERM), (signal.SIGINT, 130)],
                         ids=["SIGTERM", "Ctrl-C"])
def test_a_stop_cancels_the_jobs_and_a_resume_finishes_the_rest(slurm, write_experiment, tmp_path, stop, code):
    path = write_experiment(GRID.format(seeds=3, budget="steps = 60000", jobs=1))
    folder = tmp_path / "experiments" / "sweep"
    client = subprocess.Popen([sys.executable, "-m", "agentos", "experiment", "run", str(path), "--cluster", "slurm"],
                              cwd=tmp_path, env={**os.environ, **slurm.env}, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not _records(folder) and time.monotonic() < deadline:
            time.sleep(0.2)
        first = _records(folder)
        assert len(first) == 1, first  # one trial finished, the next one runs on the job
        slurm.run("scancel", *slurm.jobs())  # the allocation ends in the middle of a trial
        client.send_signal(stop)  # and the client is stopped before its replacement job finishes
        _, err = client.communicate(timeout=60)
    finally:
        if client.poll() is None:
            client.kill()
    assert client.returncode == code and "run again to resume" in err, err
    assert slurm.jobs_left() == []
    stopped = _records(folder)
    assert all(r["status"] == "finished" for r in stopped.values()), stopped  # no half trial recorded
    resumed = agentos("experiment", "run", str(path), "--cluster", "slurm", cwd=tmp_path, env=slurm.env)
    assert resumed.returncode == 0, resumed.stderr
    after = _records(folder)
    assert len(after) == 3 and all(r["status"] == "finished" for r in after.values()), after
    for trial_id, record in stopped.items():  # what had finished was kept, not run again
        assert after[trial_id] == record
    assert slurm.jobs_left() == []


TUNE = ("[experiment]\nagents = sarsa_table\nenvironments = corridor\nseeds = 1\nepisodes = 20\ntest-episodes = 2\n\n"
        "[search]\ntrainer.alpha = [float, 0.05, 0.9]\n\n[tune]\ntrials = 2\nparallel = 1\nseed = 0\n\n"
        "[cluster]\nmax-jobs = 1\ninterface = lo\nmemory = 1GB\nwalltime = 00:10:00\n")


def test_a_tune_runs_its_trials_on_slurm_jobs_and_leaves_none(slurm, write_experiment, tmp_path):
    path = write_experiment(TUNE)
    done = agentos("tune", str(path), "--cluster", "slurm", cwd=tmp_path, env=slurm.env)
    assert done.returncode == 0, done.stderr
    assert "2 complete" in done.stdout, done.stdout
    records = glob.glob(str(tmp_path / "experiments" / "sweep" / "points" / "*" / "trials" / "*" / "trial.json"))
    assert len(records) == 2 and all(json.load(open(p))["pid"] != os.getpid() for p in records)
    logs = glob.glob(str(tmp_path / "experiments" / "sweep" / ".jobs" / "logs" / "agentos-*.out"))
    assert len(logs) == 1  # one job (max-jobs 1) served both trials
    assert slurm.jobs_left() == []


def test_the_slurm_benchmark_runs_at_its_smoke_size(slurm, tmp_path):
    bench = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "bench_slurm.py")
    done = subprocess.run([sys.executable, bench, "--smoke", "-o", str(tmp_path / "out.json")], cwd=tmp_path,
                          env={**os.environ, **slurm.env}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["trials"] == 4 and len(out["grid_seconds"]["slurm"]) == len(out["grid_seconds"]["pool"]) == 1
    assert 0 < out["job_start_s"] < 300 and out["slurm / pool"] > 0
    assert slurm.jobs_left() == []

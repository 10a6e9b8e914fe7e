"""Trials on real Dask clusters: a LocalCluster, and a scheduler plus two workers started here."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

from agentos.experiments import run_experiment


def test_local_cluster_runs_every_trial_and_workers_report_returns(tmp_path):
    seen = []
    result = run_experiment(["sarsa_table", "random"], ["corridor"], seeds=2, steps=150_000, test_episodes=2,
                            folder=str(tmp_path / "exp"), workers=2, scheduler="local",
                            on_progress=lambda done, total, running: seen.extend(running))
    assert len(result.trials) == 4 and all(t["status"] == "finished" for t in result.trials), result.failed()
    reported = [row for row in seen if "return" in row]  # Dask events from the workers, while they trained
    assert reported and {row["phase"] for row in reported} <= {"train", "test"}, seen
    assert all(row["label"].startswith(("sarsa_table corridor", "random corridor")) for row in reported)
    assert all(t["pid"] != os.getpid() for t in result.trials)
    assert all(os.path.isfile(os.path.join(t["run_dir"], "trial.json")) for t in result.trials)


def _dask(*args, cwd) -> subprocess.Popen:
    exe = shutil.which("dask", path=os.path.dirname(sys.executable)) or shutil.which("dask")
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    return subprocess.Popen([exe, *args], cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_scheduler_and_two_workers_send_records_back_to_the_client(tmp_path):
    file = tmp_path / "scheduler.json"
    work = [tmp_path / "w1", tmp_path / "w2"]
    for w in work:
        w.mkdir()
    procs = [_dask("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                   "--scheduler-file", str(file), cwd=tmp_path)]
    try:
        deadline = time.monotonic() + 60
        while not file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        import json

        address = json.loads(file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        procs += [_dask("worker", address, "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1",
                        "--local-directory", str(w), cwd=w) for w in work]
        from dask.distributed import Client

        with Client(address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=60)
        folder = tmp_path / "client" / "exp"
        result = run_experiment(["sarsa_table"], ["corridor"], seeds=4, episodes=20, test_episodes=2,
                                folder=str(folder), scheduler=address)
        assert all(t["status"] == "finished" for t in result.trials), result.failed()
        assert len({t["pid"] for t in result.trials}) == 2  # both workers ran trials
        for trial in result.trials:  # the records were sent back, not left in a worker's folder
            assert trial["run_dir"].startswith(str(folder))
            assert os.path.isfile(os.path.join(trial["run_dir"], "runs", trial["train"]["run"], "returns.csv"))
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=30)

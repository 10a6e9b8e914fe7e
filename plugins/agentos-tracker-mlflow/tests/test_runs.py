"""Real runs through the plugin, read back through MLflow's own client; a stopped and a silent server."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from importlib.metadata import version

EPISODES = 300


def test_train_is_an_mlflow_run_with_params_tags_metrics_and_artifacts(client, mlflow_server, tools, tmp_path):
    evaluation = "\n[train]\neval_every_episodes = 100\neval_episodes = 2\n"
    folder = tools.agent_folder(tmp_path / "corridor_params", evaluation)
    done = tools.agentos("train", str(EPISODES), "--seed", "3", "-q", cwd=folder, uri=mlflow_server)
    assert done.returncode == 0, done.stderr
    assert "View run" not in done.stdout  # MLflow's own line is kept off the command's output
    (run,) = tools.runs_of(client, "corridor_params")
    run_dir = os.path.join(folder, "runs", run.data.tags["agentos.run"])
    assert os.path.isdir(run_dir) and not os.path.exists(os.path.join(run_dir, "mlflow_unsent.jsonl"))
    assert run.info.status == "FINISHED"
    params = run.data.params
    assert params["environment"] == f"agentos-env-corridor=={version('agentos-env-corridor')}"
    assert params["policy"].startswith("agentos-policy-q-table==")
    assert params["trainer"].startswith("agentos-trainer-sarsa==")
    assert params["trainer.alpha"] == "0.5" and params["seed"] == "3" and params["episodes"] == str(EPISODES)
    assert params["train.eval_every_episodes"] == "100" and params["train.eval_episodes"] == "2"
    tags = run.data.tags
    assert tags["agentos.agent"] == "corridor_params" and tags["agentos.status"] == "finished"
    with open(os.path.join(run_dir, "lock.json"), "rb") as f:
        import hashlib

        assert tags["agentos.lock_sha256"] == hashlib.sha256(f.read()).hexdigest()
    history = client.get_metric_history(run.info.run_id, "episode_return")
    assert sorted(m.step for m in history) == list(range(EPISODES))
    with open(os.path.join(run_dir, "returns.csv"), encoding="utf-8") as f:
        rows = [line.split(",") for line in f.read().splitlines()[1:]]
    by_step = {m.step: m.value for m in history}
    assert [by_step[i] for i in range(EPISODES)] == [float(r[2]) for r in rows]  # the same returns as the record
    lengths = client.get_metric_history(run.info.run_id, "episode_length")
    assert sum(m.value for m in lengths) == sum(int(r[3]) for r in rows)
    by_timestep = client.get_metric_history(run.info.run_id, "episode_return_by_step")  # the curve by timesteps
    assert sorted((m.step, m.value) for m in by_timestep) == sorted((int(r[1]), float(r[2])) for r in rows)
    with open(os.path.join(run_dir, "evaluations.csv"), encoding="utf-8") as f:
        evaluations = [line.split(",") for line in f.read().splitlines()[1:]]
    assert [int(r[1]) for r in evaluations] == [100, 200, 300]
    evaluated = client.get_metric_history(run.info.run_id, "eval/mean_return")  # reported metrics (report_metrics)
    assert sorted((m.step, m.value) for m in evaluated) == [(int(r[0]), float(r[2])) for r in evaluations]
    last100 = client.get_metric_history(run.info.run_id, "last100_mean")
    assert sorted({m.step for m in last100}) == [99, 199, 299]
    assert run.data.metrics["steps_per_second"] > 0
    names = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"lock.json", "agent.ini", "returns.csv", "returns.png", "run.json", "checkpoint.safetensors",
            "evaluations.csv", "metrics.csv", "best.safetensors"} <= names
    manifest = json.loads(tags["agentos.files"])
    assert set(manifest) == names


def test_tracking_uri_from_agent_ini_and_off_without_one(client, mlflow_server, tools, tmp_path):
    folder = tools.agent_folder(tmp_path / "from_ini", f"\n[tracker.mlflow]\ntracking_uri = {mlflow_server}\n")
    done = tools.agentos("run", "--episodes", "3", "--fresh", cwd=folder, uri=None)
    assert done.returncode == 0, done.stderr
    (run,) = tools.runs_of(client, "from_ini")
    assert run.data.tags["agentos.mode"] == "run" and len(client.get_metric_history(run.info.run_id,
                                                                                    "episode_return")) == 3
    off = tools.agent_folder(tmp_path / "off")
    code = ("import sys; from agentos import api; api.train('agent.ini', episodes=20, seed=0); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'mlflow'))")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    shown = subprocess.run([sys.executable, "-c", code], cwd=off, env=env, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == "[]"  # installed but not configured: off, MLflow never imported
    assert tools.runs_of(client, "off") == []


def test_cli_and_import_acr_never_import_mlflow(tools, tmp_path):
    code = """
import sys
sys.argv = ["agentos", *sys.argv[1:]]
from agentos.cli import main
try:
    main()
except SystemExit:
    pass
import acr
print("MLFLOW" if any(m.split(".")[0] == "mlflow" for m in sys.modules) else "CLEAN", file=sys.stderr)
"""
    folder = tools.agent_folder(tmp_path / "startup")
    for args in (["--help"], ["list"]):
        env = {**os.environ, "MLFLOW_TRACKING_URI": "http://127.0.0.1:9"}
        done = subprocess.run([sys.executable, "-c", code, *args], cwd=folder, env=env, capture_output=True,
                              text=True, timeout=60)
        assert done.stderr.strip().splitlines()[-1] == "CLEAN", (args, done.stderr)


def _resend(run_dir: str, uri: str) -> str:
    env = {**os.environ, "MLFLOW_TRACKING_URI": uri}
    done = subprocess.run([sys.executable, "-m", "agentos_tracker_mlflow.resend", run_dir], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().rsplit(" ", 1)[-1]


def test_stopped_server_warns_once_run_completes_and_nothing_is_lost(client, mlflow_server, tools, tmp_path):
    folder = tools.agent_folder(tmp_path / "stopped_server")
    stopped = f"http://127.0.0.1:{tools.free_port()}"  # nothing listens there
    started = time.monotonic()
    done = tools.agentos("train", str(EPISODES), "--seed", "5", "-q", cwd=folder, uri=stopped)
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 60
    warnings = [line for line in done.stderr.splitlines() if "MLflow" in line]
    assert len(warnings) == 1 and warnings[0].startswith("agentos: warning: MLflow at " + stopped), done.stderr
    assert "Traceback" not in done.stderr
    (run_id,) = os.listdir(os.path.join(folder, "runs"))
    run_dir = os.path.join(folder, "runs", run_id)
    assert json.load(open(os.path.join(run_dir, "run.json")))["status"] == "finished"
    unsent = os.path.join(run_dir, "mlflow_unsent.jsonl")
    assert os.path.isfile(unsent)
    mlflow_id = _resend(run_dir, mlflow_server)  # the server is back: send what waited
    assert not os.path.exists(unsent) and os.path.exists(os.path.join(run_dir, "mlflow_unsent.sent.jsonl"))
    run = client.get_run(mlflow_id)
    assert run.info.status == "FINISHED" and run.data.tags["agentos.run"] == run_id
    assert run.data.params["trainer.alpha"] == "0.5" and run.data.params["seed"] == "5"
    history = client.get_metric_history(mlflow_id, "episode_return")
    assert sorted(m.step for m in history) == list(range(EPISODES))  # every episode arrived
    assert {"lock.json", "checkpoint.safetensors", "run.json"} <= {a.path for a in client.list_artifacts(mlflow_id)}


def test_silent_server_costs_a_bounded_wait_and_keeps_the_rest(tools, tmp_path):
    listener = socket.socket()  # accepts connections (the kernel's backlog) and never answers
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    try:
        uri = f"http://127.0.0.1:{listener.getsockname()[1]}"
        folder = tools.agent_folder(tmp_path / "silent", "\n[tracker.mlflow]\nflush_timeout = 3\n")
        started = time.monotonic()
        done = tools.agentos("train", "50", "--seed", "1", "-q", cwd=folder, uri=uri,
                             MLFLOW_HTTP_REQUEST_TIMEOUT="2", MLFLOW_HTTP_REQUEST_MAX_RETRIES="0")
        elapsed = time.monotonic() - started
    finally:
        listener.close()
    assert done.returncode == 0, done.stderr
    assert elapsed < 30, elapsed
    (run_id,) = os.listdir(os.path.join(folder, "runs"))
    lines = open(os.path.join(folder, "runs", run_id, "mlflow_unsent.jsonl"), encoding="utf-8").read().splitlines()
    ops = [json.loads(line)["op"] for line in lines]
    assert ops[0] == "run" and "start" in ops and ops[-1] == "end"  # all of it kept, in order
    assert sum(1 for line in done.stderr.splitlines() if "MLflow" in line) == 1, done.stderr


WALK = '''
import gymnasium as gym
from gymnasium import spaces


class Walk(gym.Env):
    """3 steps an episode; the fifth episode's first step fails when BREAK is set."""

    metadata = {"render_modes": [], "episode_metrics": {"end": "position", "far": "position >= 25"}}
    observation_space = spaces.Discrete(4)
    action_space = spaces.Discrete(2)
    BREAK = False

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        self.episodes = getattr(self, "episodes", 0) + 1
        return 0, {}

    def step(self, action):
        if self.BREAK and self.episodes == 5:
            raise RuntimeError("the walk broke")
        self.t += 1
        done = self.t >= 3
        return self.t, 1.0, done, False, {"position": self.t * 10}


class BrokenWalk(Walk):
    BREAK = True
'''

WALK_AGENT = """\
[environment]
default = {env}

[policy]
default = random

[environment.{env}]
source = walk.py:{cls}

[policy.random]
package = agentos-policy-random
"""


def test_environment_metrics_local_components_and_a_failed_run(client, mlflow_server, tools, tmp_path):
    for name, env, cls in (("walk_metrics", "walk", "Walk"), ("walk_failed", "broken", "BrokenWalk")):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "agent.ini").write_text(WALK_AGENT.format(env=env, cls=cls))
        (folder / "walk.py").write_text(WALK)
        done = tools.agentos("run", "--episodes", "6", "--seed", "0", "--fresh", cwd=str(folder), uri=mlflow_server)
        (run,) = tools.runs_of(client, name)
        if cls == "Walk":
            assert done.returncode == 0, done.stderr
            assert run.data.params["environment"] == "walk (local)"
            assert [m.value for m in client.get_metric_history(run.info.run_id, "end")] == [30.0] * 6
            assert sorted(m.step for m in client.get_metric_history(run.info.run_id, "far")) == list(range(6))
            assert run.info.status == "FINISHED"
        else:
            assert done.returncode != 0 and "the walk broke" in done.stderr and "Traceback" not in done.stderr
            assert run.info.status == "FAILED" and run.data.tags["agentos.status"] == "failed"
            assert len(client.get_metric_history(run.info.run_id, "episode_return")) == 4  # what ran is kept

"""Episode metrics (issue 19, point 10): an environment declares them in ``metadata["episode_metrics"]``;
``agentos run``/``train``, ``runs show``, returns.csv and the run's plot show them."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
from learning._helpers import GAME_2048_SARSA, make_agent, ntuple_td_ini, only_run


def agentos(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentos", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=240)


def test_a_declaration_is_parsed_into_values_and_rates():
    from agentos.trackers._metrics import EpisodeMetrics

    metrics = EpisodeMetrics({"best_tile": "max_tile", "reached_2048": "max_tile >= 2048", "small": "max_tile < 64"})
    for tile in (1024, 2048, 4096, 32):
        metrics.add({"max_tile": tile, "score": 1})
    metrics.add({"score": 1})  # a final info without the key leaves the episode out of every metric
    summary = metrics.summary()
    assert summary["best_tile"] == {"kind": "value", "episodes": 4, "mean": 1800.0, "min": 32.0, "max": 4096.0}
    assert summary["reached_2048"]["kind"] == "rate" and summary["reached_2048"]["mean"] == 0.5
    assert summary["small"]["mean"] == 0.25


@pytest.mark.parametrize(
    "declared",
    [
        {"x": "__import__('os').system('true')"},  # an expression is not a key or a comparison
        {"bad name!": "max_tile"},
        {"x": "max_tile >= 2048; y"},
        {"x": 42},
        ["max_tile"],
        {f"m{i}": "k" for i in range(17)},  # at most 16
    ],
)
def test_a_malformed_declaration_is_refused_with_one_line(declared):
    from agentos.trackers._metrics import parse_metrics

    with pytest.raises(ValueError) as caught:
        parse_metrics(declared)
    assert "\n" not in str(caught.value)
    parse_metrics({"x": "max_tile >= 2_048", "y": "score"})  # the valid twin


LOCAL_ENV = '''
import gymnasium as gym
from gymnasium import spaces


class Walk(gym.Env):
    """A walk of 3 steps; no agentos import: the metrics are a metadata key."""

    metadata = {"render_modes": [], "episode_metrics": METRICS}
    observation_space = spaces.Discrete(4)
    action_space = spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return 0, {}

    def step(self, action):
        self.t += 1
        done = self.t >= 3
        return self.t, 1.0, done, False, {"position": self.t * 10, "goal": done}
'''

LOCAL_AGENT = """\
[environment]
default = walk

[policy]
default = random

[environment.walk]
source = walk.py:Walk

[policy.random]
package = agentos-policy-random
"""


@pytest.mark.parametrize("metrics, shown", [
    ({"end": "position", "at_goal": "goal"}, "end mean 30, max 30; at_goal mean 1, max 1"),
    ({"end": "position", "far": "position >= 25", "near": "position < 25"},
     "end mean 30, max 30; far 100.0%; near 0.0%"),
    ({"end": "open('/etc/passwd')"}, None),  # hostile: refused with one warning line, the run still finishes
])
def test_a_local_environment_declares_metrics_without_importing_agentos(tmp_path, metrics, shown):
    agent = make_agent(tmp_path, LOCAL_AGENT)
    (agent / "walk.py").write_text(LOCAL_ENV.replace("METRICS", repr(metrics)))
    result = agentos("run", "--episodes", "4", "--seed", "0", cwd=agent)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    summary = json.loads((only_run(agent) / "run.json").read_text())["summary"]
    if shown is None:
        assert "metrics" not in summary and "metrics:" not in result.stdout
        assert result.stderr.count("episode metrics ignored") == 1
        return
    assert f"metrics: {shown}" in result.stdout
    assert summary["metrics"]["end"] == {"kind": "value", "episodes": 4, "mean": 30.0, "min": 30.0, "max": 30.0}


def test_2048_best_tile_and_rates_in_run_train_records_and_show(tmp_path):
    agent = make_agent(tmp_path, GAME_2048_SARSA)
    trained = agentos("train", "30", "--seed", "0", cwd=agent)
    assert trained.returncode == 0, trained.stderr
    assert "metrics: best_tile mean " in trained.stdout
    for extra in ([], ["--n-envs", "3"]):  # one environment, and the batched one (its final_info)
        result = agentos("run", "--episodes", "12", "--seed", "1", *extra, cwd=agent)
        assert result.returncode == 0, result.stderr
        line = next(x for x in result.stdout.splitlines() if x.startswith("metrics:"))
        assert "reached_2048 0.0%; reached_4096 0.0%; reached_8192 0.0%" in line  # rates, in percent
    for run in sorted((agent / "runs").iterdir()):
        summary = json.loads((run / "run.json").read_text())["summary"]
        with open(run / "returns.csv") as f:
            rows = list(csv.DictReader(f))
        tiles = [int(r["best_tile"]) for r in rows]
        assert len(tiles) == summary["episodes"] and all(t & (t - 1) == 0 and t >= 8 for t in tiles)
        best = summary["metrics"]["best_tile"]
        assert best["max"] == max(tiles) and best["mean"] == pytest.approx(sum(tiles) / len(tiles))
        assert summary["metrics"]["reached_2048"] == {"kind": "rate", "episodes": len(tiles), "mean": 0.0,
                                                       "min": 0.0, "max": 0.0}
        assert [r["reached_2048"] for r in rows] == ["0"] * len(rows)
    shown = agentos("runs", "show", "latest", cwd=agent)
    assert shown.returncode == 0, shown.stderr
    assert "  metrics:    best_tile mean" in shown.stdout and "reached_8192 0.0%" in shown.stdout


def test_the_2048_environments_declare_their_metrics():
    from agentos.trackers._metrics import EpisodeMetrics
    from agentos_env_2048 import Game2048Env
    from agentos_env_2048.vector import Game2048VectorEnv

    env = Game2048Env()
    metrics = EpisodeMetrics(env.metadata["episode_metrics"])
    metrics.add({"max_tile": 2048})
    assert metrics.summary()["reached_2048"]["mean"] == 1.0 and metrics.summary()["reached_4096"]["mean"] == 0.0
    assert Game2048VectorEnv.metadata["episode_metrics"] == env.metadata["episode_metrics"]


def test_the_plugin_authors_guide_documents_the_convention():
    readme = (Path(__file__).parents[2] / "docs" / "plugin-authors.md").read_text()
    assert '"episode_metrics"' in readme and "max_tile >= 2048" in readme


def test_td_training_records_the_best_tile_of_every_game(tmp_path):
    agent = make_agent(tmp_path, ntuple_td_ini())
    trained = agentos("train", "25", "--seed", "0", cwd=agent)
    assert trained.returncode == 0, trained.stderr
    summary = json.loads((only_run(agent) / "run.json").read_text())["summary"]
    best = summary["metrics"]["best_tile"]
    assert best["episodes"] == 25 and 64 <= best["max"] <= 2048
    with open(only_run(agent) / "returns.csv") as f:
        tiles = [int(r["best_tile"]) for r in csv.DictReader(f)]
    assert len(tiles) == 25 and max(tiles) == best["max"]

"""The experiment file and presets: grids, trial identity, and one-line errors for bad input."""

from __future__ import annotations

import subprocess
import sys

import pytest
from agentos.config import AgentConfig
from agentos.errors import AgentOSError
from agentos.experiments import load_preset, plan, read_experiment
from experiments.helpers import agentos


def test_a_file_becomes_a_grid_of_trials(write_experiment):
    path = write_experiment(
        "[experiment]\nagents = [sarsa_table, random]\nenvironments = [corridor]\nseeds = 2\nepisodes = 50\n"
        "test-episodes = 3\n\n[settings.sarsa_table]\ntrainer.alpha = [0.1, 0.5]\nepsilon = [0.05, 0.2]\n"
    )
    options = read_experiment(str(path))
    trials = plan(options["agents"], options["environments"], seeds=options["seeds"],
                  episodes=options["episodes"], test_episodes=options["test_episodes"],
                  settings=options["settings"], agent_settings=options["agent_settings"])
    sarsa = [t for t in trials if t.agent == "sarsa_table"]
    assert len(sarsa) == 2 * 2 * 2 and len(trials) == 8 + 2
    assert {(t.settings["trainer.alpha"], t.settings["epsilon"]) for t in sarsa} == {
        (a, e) for a in (0.1, 0.5) for e in (0.05, 0.2)}
    assert len({t.id for t in trials}) == len(trials)  # every point has its own identity
    random_trial = next(t for t in trials if t.agent == "random")
    assert not random_trial.trains and random_trial.episodes is None  # a baseline only tests
    config = AgentConfig.from_text(sarsa[0].agent_ini)
    assert config.component("trainer", "sarsa").kwargs()["alpha"] in (0.1, 0.5)
    # the same content gives the same id; another budget another one
    again = plan(["sarsa_table"], ["corridor"], seeds=[0], episodes=50, test_episodes=3,
                 settings={"trainer.alpha": 0.1, "epsilon": 0.05})
    assert again[0].id in {t.id for t in sarsa}
    other = plan(["sarsa_table"], ["corridor"], seeds=[0], episodes=51, test_episodes=3,
                 settings={"trainer.alpha": 0.1, "epsilon": 0.05})
    assert other[0].id not in {t.id for t in sarsa}


def test_presets_apply_per_environment_settings():
    preset = load_preset("sarsa-table")  # names compare like package names
    on_2048 = AgentConfig.from_text(plan([preset.name], ["2048"], seeds=1, episodes=1)[0].agent_ini)
    assert on_2048.component("policy", "q_table").kwargs()["key"] == "2048"
    assert on_2048.component("trainer", "sarsa").kwargs()["alpha"] == 0.05


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"settings": {"trainer.alpah": [0.1]}}, "unknown setting 'trainer.alpah' for preset 'sarsa_table'; "
                                                 "did you mean 'trainer.alpha'?"),
        ({"agents": ["sarsa_tabel"]}, "no preset named 'sarsa_tabel'; did you mean 'sarsa_table'?"),
        ({"episodes": None}, "give a budget"),
    ],
)
def test_bad_grids_are_one_line_errors(kwargs, message):
    args = {"agents": ["sarsa_table"], "environments": ["corridor"], "seeds": 1, "episodes": 5} | kwargs
    with pytest.raises(AgentOSError, match=message.replace("?", r"\?").replace("(", r"\(")):
        plan(args.pop("agents"), args.pop("environments"), **args)


def test_a_bad_experiment_file_is_one_line_on_the_cli(write_experiment, tmp_path):
    path = write_experiment("[experiment]\nagents = [random]\nenvironments = [corridor]\nepisodse = 5\n")
    result = agentos("experiment", "run", str(path), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().count("\n") == 0
    assert "unknown key 'episodse' in [experiment]; did you mean 'episodes'?" in result.stderr


def test_reading_presets_imports_no_torch_or_plugin_code():
    code = ("import sys; from agentos.experiments import load_preset, plan; load_preset('dqn_2048');"
            "plan(['dqn_2048', 'ppo_zoo'], ['corridor'], seeds=2, episodes=5);"
            "print(sorted(m for m in ('torch', 'dask', 'gymnasium', 'stable_baselines3', 'agentos_policy_dqn')"
            " if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("line", "twin", "message"),
    [
        ("seeds = -3", "seeds = 3", "seeds must be a count from 1"),
        ("seeds = 0", "seeds = 1", "seeds must be a count from 1"),
        ("seeds = [1.7, 2.2]", "seeds = [1, 2]", "not [1.7, 2.2]"),
        ("seeds = [1, 1]", "seeds = [0, 1]", "list of distinct integer seeds"),
        ("seeds = true", "seeds = 2", "not True"),
        ("episodes = 1.5", "episodes = 2", "episodes must be an integer of at least 1, not 1.5"),
        ("episodes = nan", "episodes = 1", "episodes must be an integer of at least 1, not nan"),
        ("episodes = inf", "episodes = 1", "episodes must be an integer of at least 1, not inf"),
        ('episodes = "abc"', "episodes = 3", "episodes must be an integer of at least 1, not 'abc'"),
        ("test-episodes = -1", "test-episodes = 0", "test-episodes must be an integer of at least 0"),
        ("workers = 0.5", "workers = 1", "workers must be an integer of at least 1"),
        ("name = ../../elsewhere", "name = sweep-2", "name must be a plain name"),
    ],
)
def test_experiment_values_are_checked_one_line_naming_file_and_key(write_experiment, tmp_path, line, twin,
                                                                   message):
    base = "[experiment]\nagents = [random]\nenvironments = [corridor]\nepisodes = 2\n"

    def text(extra: str) -> str:
        key = extra.split(" = ")[0]
        kept = [row for row in base.splitlines() if not row.startswith(key + " =")]
        return "\n".join(kept + [extra]) + "\n"

    options = read_experiment(str(write_experiment(text(twin), "twin")))  # the valid twin is accepted
    assert plan(options["agents"], options["environments"], seeds=options["seeds"],
                episodes=options.get("episodes"), test_episodes=options.get("test_episodes", 10))
    path = write_experiment(text(line))
    result = agentos("experiment", "run", str(path), cwd=tmp_path, timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip().count("\n") == 0, result.stderr
    assert f"{path}:" in result.stderr and message in result.stderr, result.stderr
    assert not (tmp_path / "experiments").exists()  # nothing ran, nothing was written


@pytest.mark.parametrize("seeds", [-3, [1.7, 2.2], 2.0, "3"])
def test_plan_refuses_seeds_that_are_not_integers(seeds):
    with pytest.raises(AgentOSError, match="seeds must be"):
        plan(["random"], ["corridor"], seeds=seeds, episodes=1)
    assert len(plan(["random"], ["corridor"], seeds=range(2), episodes=1)) == 2  # any iterable of ints


@pytest.mark.parametrize("key", ["agent.source", "environment.source", "source", "trainer.source"])
def test_experiment_settings_never_set_source(write_experiment, tmp_path, key):
    agent = tmp_path / "mine"
    agent.mkdir()
    (agent / "agent.ini").write_text("[environment]\ndefault = corridor\n\n[policy]\ndefault = random\n\n"
                                     "[trainer]\ndefault = sarsa\n\n[agent]\ndefault = mine\n\n"
                                     "[agent.mine]\nsource = agent.py:MyAgent\n")
    (agent / "agent.py").write_text("import os\n\nfrom agentos import Agent\n\n\nclass MyAgent(Agent):\n    pass\n")
    marker = tmp_path / "pwned"
    base = "[experiment]\nagents = [mine, sarsa_table]\nenvironments = [corridor]\nepisodes = 1\n\n[settings]\n"
    twin = read_experiment(str(write_experiment(base + "trainer.alpha = [0.1, 0.5]\n", "twin")))
    assert len(plan(twin["agents"], twin["environments"], seeds=1, episodes=1,
                    settings=twin["settings"])) == 4  # the valid twin: settings that are settings
    command = key.replace("source", "command")
    path = write_experiment(base + f'trainer.alpha = 0.1\n\n[settings.mine]\n{key} = "agent.py:os.system"\n'
                                   f'{command} = "touch {marker}"\n')
    result = agentos("experiment", "run", str(path), cwd=tmp_path, timeout=120)
    assert not marker.exists()
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stdout + result.stderr
    assert f"{path}:10:" in result.stderr and f"{key!r}" in result.stderr and "source" in result.stderr
    assert not (tmp_path / "experiments").exists()
    for settings, agent_settings in (({key: "agent.py:os.system"}, None), (None, {"mine": {key: "agent.py:x"}})):
        with pytest.raises(AgentOSError, match="may not set 'source'"):
            plan([str(agent)], ["corridor"], seeds=1, episodes=1, settings=settings, agent_settings=agent_settings)

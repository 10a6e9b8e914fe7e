"""The ntuple_2048_master preset loads as data, yields a valid agent.ini, and its settings build."""

from __future__ import annotations

from agentos.config import AgentConfig
from agentos.experiments import agent_ini_text, load_preset


def test_ntuple_2048_master_loads_as_data_and_applies_to_2048():
    preset = load_preset("ntuple_2048_master")
    import tomllib
    from pathlib import Path

    version = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]["version"]
    assert preset.version == version and preset.package == "agentos-preset-ntuple-2048-master"
    assert preset.environment == "2048"  # (2.0.1) a folder holding only the preset needs no [environment]
    config = AgentConfig.from_text(agent_ini_text(preset, "2048", {}))
    assert config.default("environment") == "2048"
    assert config.default("policy") == "ntuple" and config.default("trainer") == "td"
    from agentos_policy_ntuple.network import parse_tuples

    tuples = parse_tuples(preset.settings_for("2048")["policy"]["tuples"])  # 2.0: ziap/2048-tdl's 8x6 network
    assert len(tuples) == 8 and {len(cells) for cells in tuples} == {6} and len(set(tuples)) == 8


def test_its_settings_build_the_components_and_train_a_few_games():
    from agentos_policy_ntuple import NTuplePolicy
    from agentos_trainer_td import TDTrainer

    preset = load_preset("ntuple_2048_master")
    settings = preset.settings_for("2048")
    policy = NTuplePolicy(**{**settings["policy"], "tuples": "0 1 2 3; 4 5 6 7"})  # small: fast
    trainer = TDTrainer(seed=0, **settings["trainer"])
    assert trainer.td_lambda == 0.5 and trainer.restarts and trainer.coherent and trainer.alpha == 1.0
    assert trainer.threads == 2 and trainer.seconds == 3600 and policy.downgrade_tile == 32768
    scores: list[float] = []
    trainer.train(policy, None, episodes=5, callback=lambda s, m, info=None: scores.append(s))
    assert len(scores) == 5 and min(scores) > 0  # two threads claim their games: exactly the games asked for


def test_agentos_train_with_the_preset_then_run_with_search(tmp_path, monkeypatch):
    import textwrap

    from agentos import api
    from safetensors.numpy import load_file

    (tmp_path / "agent.ini").write_text(textwrap.dedent("""
        [agentos]
        runs = runs

        [preset]
        default = ntuple_2048_master

        [preset.ntuple_2048_master]
        policy.tuples = 0 1 2 3; 4 5 6 7
        policy.search_depth = 2
    """))
    monkeypatch.chdir(tmp_path)
    trained = api.train("agent.ini", episodes=300, seed=1)
    assert trained["status"] == "finished" and trained["episodes"] == 300
    checkpoint = load_file(trained["checkpoint"])
    assert checkpoint["tuples"].shape == (2, 8)
    import json
    import os

    from safetensors import safe_open

    record = json.loads((tmp_path / "runs" / trained["run"] / "run.json").read_text())
    state = os.path.join(tmp_path / "runs" / trained["run"], record["trainer_state"])
    with safe_open(state, "np") as saved:  # two threads: the run says it is not bit-reproducible
        assert saved.metadata()["reproducible"] == "false"
        assert saved.get_tensor("absolute").shape == (2 * 16**4,)  # TC's accumulators, for --from-run
    ran = api.run("agent.ini", episodes=3, seed=7)
    assert ran["trained_by"] == trained["run"] and ran["mean_return"] > 0

"""The zoo presets are rl-zoo's numbers: checked against rl_zoo3's own hyperparams/*.yml (the oracle).

rl_zoo3 is a test dependency installed without its dependencies (noxfile.py's ORACLES); its files are read
with yaml, never imported. Its ``policy_kwargs`` and ``normalize`` strings are evaluated here the way
rl_zoo3 itself evaluates them (``eval`` with ``dict`` and ``torch.nn`` only): the oracle's semantics, on a
pinned PyPI release's own file, never on anything a peer sent.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from agentos.config import AgentConfig
from agentos.experiments import agent_ini_text, load_preset

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tools"))
import import_zoo_presets as importer  # noqa: E402

ALGORITHMS = {"a2c": "A2C", "ars": "ARS", "crossq": "CrossQ", "ddpg": "DDPG", "dqn": "DQN", "ppo": "PPO",
              "ppo_lstm": "RecurrentPPO", "qrdqn": "QRDQN", "sac": "SAC", "td3": "TD3", "tqc": "TQC", "trpo": "TRPO"}


@pytest.fixture(scope="module")
def zoo() -> dict:
    """(algorithm file, task) -> rl_zoo3's hyperparameters, straight from its installed files."""
    spec = importlib.util.find_spec("rl_zoo3")
    folder = Path(next(iter(spec.submodule_search_locations))) / "hyperparams"
    return {(path.stem, task): hp for path in sorted(folder.glob("*.yml"))
            for task, hp in yaml.safe_load(path.read_text()).items() if task != "default"}


@pytest.fixture(scope="module")
def data() -> dict:
    import agentos_preset_zoo

    return {"presets": agentos_preset_zoo.presets(), "skipped": agentos_preset_zoo.SKIPPED,
            "source": agentos_preset_zoo.SOURCE}


def _oracle(text_or_value):
    import torch

    if isinstance(text_or_value, str):
        return eval(text_or_value, {"__builtins__": {}, "dict": dict, "nn": torch.nn})  # noqa: S307 - see above
    return text_or_value


def _as_sb3(kwargs: dict) -> dict:
    import torch
    from agentos_policy_sb3 import ACTIVATIONS

    return {k: getattr(torch.nn, ACTIVATIONS[v]) if k == "activation_fn" else v for k, v in kwargs.items()}


def test_every_preset_equals_rl_zoo3s_own_file(zoo, data):
    """All 100+ presets (the sample is all of them): every key of rl-zoo's entry, value and type."""
    assert data["source"]["version"] == "2.9.2" and len(data["presets"]) >= 100
    checked = 0
    for name, preset in data["presets"].items():
        algo, task = preset["zoo"]["algorithm"], preset["zoo"]["task"]
        hp = dict(zoo[(algo, task)])
        settings = dict(preset["components"]["trainer"][1])
        environment = {"id": task}
        if task == "atari":  # any game (the preset's id is one): SB3's AtariWrapper and frame stacking as settings
            ((wrapper, keywords),) = [(w, {}) if isinstance(w, str) else next(iter(w.items()))
                                      for w in hp.pop("env_wrapper")]
            assert wrapper == "stable_baselines3.common.atari_wrappers.AtariWrapper"
            environment = {"id": "PongNoFrameskip-v4", "atari_wrappers": True, "frame_stack": hp.pop("frame_stack"),
                           **keywords}
        assert preset["environments"] == {"gymnasium": {"environment": environment}}, name
        assert preset["environment"] == "gymnasium"
        assert preset["zoo"]["n_timesteps"] == int(hp.pop("n_timesteps"))
        assert settings.pop("algorithm") == ALGORITHMS[algo]
        assert settings.pop("network") == hp.pop("policy")
        n_envs = hp.pop("n_envs", 1)
        assert settings.pop("n_envs", 1) == (1 if algo == "ars" else n_envs)
        normalize = _oracle(hp.pop("normalize", False))
        got = settings.pop("normalize", False)
        assert (json.loads(got) if isinstance(got, str) else got) == normalize, name
        if "noise_type" in hp:
            kind = hp.pop("noise_type").replace("-", "_")
            assert settings.pop("action_noise") == f"{kind}_{hp.pop('noise_std')}"
        if "policy_kwargs" in hp:
            assert _as_sb3(json.loads(settings.pop("policy_kwargs"))) == _oracle(hp.pop("policy_kwargs")), name
        for key, value in hp.items():  # everything else: the algorithm's keywords, as they are in the file
            assert key in settings, (name, key)
            got = settings.pop(key)
            assert got == value and type(got) is type(value), (name, key, got, value)
        assert settings == {}, (name, settings)  # nothing added
        checked += 1
    assert checked == len(data["presets"])


def test_every_pair_is_a_preset_or_skipped_with_a_reason(zoo, data):
    presets = {(p["zoo"]["algorithm"], p["zoo"]["task"]) for p in data["presets"].values()}
    skipped = {(s["algorithm"], s["task"]): s["reason"] for s in data["skipped"]}
    assert set(zoo) == presets | set(skipped) and not presets & set(skipped)
    assert all(reason.strip() for reason in skipped.values())
    families = {p["zoo"]["task"]: p["zoo"]["family"] for p in data["presets"].values()}
    assert families["Pendulum-v1"] == "classic_control" and families["LunarLander-v3"] == "box2d"
    assert families["HalfCheetah-v4"] == "mujoco"
    assert families["atari"] == "atari" and "mujoco-py" in skipped[("ppo", "Reacher-v2")]
    assert {("dqn", "atari"), ("ppo", "atari"), ("qrdqn", "atari")} <= presets
    assert "RMSpropTFLike is code" in skipped[("a2c", "atari")]


def test_the_files_are_what_the_importer_makes_of_rl_zoo3():
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "import_zoo_presets.py"), "--check"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "match" in done.stdout


def test_every_preset_loads_and_its_settings_build_the_trainer(data):
    """Through the host and agent.ini, as `agentos install preset NAME` uses them: the trainer accepts
    every setting (each keyword is the algorithm's; schedules, noise and policy_kwargs parse)."""
    from agentos_trainer_sb3 import SB3Trainer

    assert len(data["presets"]) >= 100
    for name in data["presets"]:
        preset = load_preset(name)
        assert preset.package == "agentos-preset-zoo"
        config = AgentConfig.from_text(agent_ini_text(preset, "gymnasium", {}))
        assert config.default("trainer") == "sb3" and config.default("environment") == "gymnasium"
        settings = config.component("trainer", "sb3").kwargs()
        settings.pop("package", None)
        trainer = SB3Trainer(**settings)
        assert trainer.algorithm == preset.components["trainer"][1]["algorithm"]


def test_sac_on_pendulum_is_rl_zoos(data):
    preset = load_preset("zoo_sac_pendulum_v1")
    assert preset.components["trainer"] == ("sb3", {"algorithm": "SAC", "learning_rate": 0.001, "network": "MlpPolicy"})
    assert "20000 --steps" in preset.summary


@pytest.mark.parametrize("text, expected", [
    ("dict(net_arch=[64, 64], activation_fn=nn.ReLU)", {"net_arch": [64, 64], "activation_fn": "relu"}),
    ("dict(log_std_init=-3.29, ortho_init=False, net_arch=dict(pi=[256], vf=[256]), )",
     {"log_std_init": -3.29, "ortho_init": False, "net_arch": {"pi": [256], "vf": [256]}}),
])
def test_the_parser_reads_rl_zoos_literals(text, expected):
    assert importer.parse_call(text) == expected


@pytest.mark.parametrize("text", [
    "dict(optimizer_class=RMSpropTFLike, optimizer_kwargs=dict(eps=1e-5))",  # a class: code
    "dict(a=__import__('os').system('true'))",
    "dict(**{'a': 1})",
    "dict(activation_fn=nn.Module)",
    "dict(a=(lambda: 1)())",
    "[1, 2]",
    "dict(a=1",
])
def test_the_parser_refuses_code(text):
    with pytest.raises(importer.Refused):
        importer.parse_call(text)


def test_a_pair_with_an_env_wrapper_or_a_bad_schedule_is_refused_with_its_reason():
    good = {"n_timesteps": 1000, "policy": "MlpPolicy", "learning_rate": "lin_7.3e-4"}
    assert importer.translate("sac", "Pendulum-v1", good)[0]["learning_rate"] == "lin_7.3e-4"
    with pytest.raises(importer.Refused, match="env wrapper"):
        importer.translate("ppo", "CartPole-v1", {**good, "env_wrapper": ["x.Y"]})
    with pytest.raises(importer.Refused, match="schedule"):
        importer.translate("ppo", "CartPole-v1", {**good, "learning_rate": "exp_0.1"})
    with pytest.raises(importer.Refused, match="policy_kwargs"):
        importer.translate("ppo", "CartPole-v1", {**good, "policy_kwargs": "dict(net_arch=[64], evil=True)"})

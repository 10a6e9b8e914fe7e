"""A Gymnasium task id is an install name: ``agentos install environment LunarLander-v3 --default`` is the
``gymnasium`` environment with its family's extra and ``id = LunarLander-v3`` (real pip, the real index)."""

from __future__ import annotations

from pathlib import Path

import pytest
from agentos.registry._gymnasium_ids import FAMILIES, family

from .test_install import one_line_error

ZOO = Path(__file__).resolve().parents[2] / "plugins" / "agentos-preset-zoo"

#: where each family's environments live in Gymnasium's (and ale-py's) registry
ENTRY_POINTS = {"classic control": "gymnasium.envs.classic_control", "toy text": "gymnasium.envs.toy_text",
                "Box2D": "gymnasium.envs.box2d", "MuJoCo": "gymnasium.envs.mujoco"}


def test_the_table_matches_gymnasiums_own_registry():
    import ale_py
    import gymnasium

    gymnasium.register_envs(ale_py)
    registered = {}
    for spec in gymnasium.registry.values():
        if isinstance(spec.entry_point, str):
            registered.setdefault(spec.name if spec.namespace is None else spec.id, spec.entry_point)
    for name, (_extra, names) in FAMILIES.items():
        for env in names:
            assert registered[env].startswith(ENTRY_POINTS[name]), (env, registered[env])
    for task, expected in [("LunarLander-v3", ("Box2D", "box2d")), ("HalfCheetah-v5", ("MuJoCo", "mujoco")),
                           ("CartPole-v1", ("classic control", None)), ("ALE/Pong-v5", ("Atari", "atari")),
                           ("PongNoFrameskip-v4", ("Atari", "atari")), ("Taxi-v4", ("toy text", None))]:
        assert family(task) == expected
        spec = gymnasium.spec(task)
        assert spec.entry_point.startswith(ENTRY_POINTS.get(expected[0], "ale_py")), task
    for name in ["Pong-v4x", "LunarLander", "CartPole-v1; rm -rf /", "../x-v1", "ALE/pong-v5", "Foo-v1", ""]:
        assert family(name) is None, name


@pytest.fixture
def agent(tmp_path, core_venv):
    venv = core_venv()
    assert venv.agentos("init", tmp_path / "my_agent").returncode == 0
    return venv, tmp_path / "my_agent"


def test_a_task_id_installs_the_gymnasium_environment_with_its_familys_extra(agent, registry_index):
    venv, folder = agent
    index = ["--index-url", registry_index]
    proc = venv.agentos("install", "environment", "LunarLander-v3", "--default", *index, cwd=folder, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "installed environment gymnasium for LunarLander-v3 (default)" in proc.stdout
    ini = (folder / "agent.ini").read_text()
    assert "default = gymnasium" in ini and "id = LunarLander-v3" in ini
    step = ("import acr\nenv = acr.environment['gymnasium']\nobs, _ = env.reset(seed=0)\n"
            "for _ in range(5): obs, *_ = env.step(env.action_space.sample())\n"
            "print(env.spec.id, obs.shape, env.unwrapped.render_mode)")
    proc = venv.run("python", "-c", step, cwd=folder)
    assert proc.returncode == 0 and "LunarLander-v3 (8,)" in proc.stdout, proc.stderr
    proc = venv.agentos("install", "environment", "CartPole-v1", "--default", *index, cwd=folder)
    assert proc.returncode == 0, proc.stderr
    ini, reqs = (folder / "agent.ini").read_text(), (folder / "requirements.txt").read_text()
    assert "id = CartPole-v1" in ini and "LunarLander" not in ini
    (line,) = [ln for ln in reqs.splitlines() if ln.startswith("agentos-env-gymnasium")]
    assert line.startswith("agentos-env-gymnasium[box2d] @ "), line  # CartPole keeps LunarLander's extra
    proc = venv.agentos("install", "environment", "Foo-v1", *index, cwd=folder)
    assert "the Gymnasium ids it installs by name" in one_line_error(proc)
    assert "id = CartPole-v1" in (folder / "agent.ini").read_text()


@pytest.mark.parametrize(("name", "extras"), [("ALE/Pong-v5", ["atari"]), ("HalfCheetah-v5", ["mujoco"]),
                                              ("CartPole-v1", []), ("PongNoFrameskip-v4", ["atari"])])
def test_every_family_resolves_to_the_gymnasium_environment_and_its_extra(registry_index, name, extras):
    from agentos.registry._client import IndexClient
    from agentos.registry._resolve import find_component

    project, component, _, got, task = find_component(IndexClient(registry_index.as_uri()), "environment", name, [])
    assert (project, component, got, task) == ("agentos-env-gymnasium", "gymnasium", extras, name)
    assert find_component(IndexClient(registry_index.as_uri()), "environment", "corridor", [])[4] is None


def test_a_zoo_preset_of_a_task_family_gets_the_zoos_extra_and_keeps_the_agents(wheelhouse, tmp_path):
    """``agentos install preset zoo_ppo_lunarlander_v3`` installs agentos-preset-zoo[box2d] (the real wheel's
    declared extras), keeping an extra the agent's requirements line already names; a classic-control preset
    and another kind add none."""
    from agentos.config import AgentConfig
    from agentos.registry._artifacts import read_artifact
    from agentos.registry._install import _family_extras
    from conftest import wheel_for

    art = read_artifact(str(wheel_for(wheelhouse, "agentos-preset-zoo")))
    (tmp_path / "agent.ini").write_text("[agentos]\nname = a\n")
    config = AgentConfig.load(str(tmp_path / "agent.ini"))
    assert _family_extras("preset", "zoo_ppo_lunarlander_v3", None, [], art, config) == ["box2d"]
    assert _family_extras("preset", "zoo_ppo_cartpole_v1", None, [], art, config) == []
    assert _family_extras("policy", "zoo_ppo_lunarlander_v3", None, [], art, config) == []
    (tmp_path / "requirements.txt").write_text("agentos-preset-zoo[mujoco] @ file:///x.whl#sha256=00\n")
    assert _family_extras("preset", "zoo_dqn_atari", None, [], art, config) == ["atari", "mujoco"]


def test_each_zoo_preset_pulls_its_task_familys_extra():
    """``agentos install preset zoo_ppo_lunarlander_v3`` adds the zoo's ``box2d`` extra (read from the
    preset's name, before anything is installed): every preset's name gives its family's extra, declared here."""
    import json
    import tomllib

    from agentos.registry._gymnasium_ids import preset_extra

    pyproject = tomllib.loads((ZOO / "pyproject.toml").read_text())
    declared = pyproject["project"]["optional-dependencies"]
    extras = {"classic_control": None, "box2d": "box2d", "mujoco": "mujoco", "atari": "atari"}
    data = json.loads((ZOO / "src" / "agentos_preset_zoo" / "zoo.json").read_text())
    for name, preset in data["presets"].items():
        expected = extras[preset["zoo"]["family"]]
        assert preset_extra(name) == expected == family(preset["environments"]["gymnasium"]["environment"]["id"])[1]
        if expected:
            assert declared[expected] == [f"agentos-env-gymnasium[{expected}]>=1.3"]
    assert preset_extra("zoo_dqn_pongnoframeskip_v4") == "atari" and preset_extra("ppo_zoo") is None
    assert preset_extra("zoo_sac_invertedpendulum_v5") == "mujoco" and preset_extra("zoo_sac_pendulum_v1") is None

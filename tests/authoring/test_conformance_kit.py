"""The conformance kit itself: its classes pass good components and catch broken ones."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from agentos import Agent, Policy, Trainer
from agentos.testing import (
    AgentConformance,
    EnvironmentConformance,
    PolicyConformance,
    ReferenceEnv,
    ReferencePolicy,
    TrainerConformance,
)
from gymnasium import spaces


class TestReferenceEnvBox(EnvironmentConformance):
    def make_environment(self):
        return ReferenceEnv()


class TestReferenceEnvDiscrete(EnvironmentConformance):
    def make_environment(self):
        return ReferenceEnv(observation="discrete")


class TestReferencePolicy(PolicyConformance):
    saves = False

    def make_policy(self, observation_space, action_space):
        return ReferencePolicy(observation_space, action_space)


class TablePolicy(Policy):
    """A tabular policy that saves: enough to exercise save/load and training checks."""

    def __init__(self, observation_space=None, action_space=None):
        super().__init__(observation_space, action_space)
        self.preferences = np.zeros((observation_space.n, action_space.n))

    def decide(self, observation):
        return int(np.argmax(self.preferences[observation]))

    def save(self, path):
        with open(path, "wb") as f:
            np.save(f, self.preferences, allow_pickle=False)

    def load(self, path):
        with open(path, "rb") as f:
            self.preferences = np.load(f, allow_pickle=False)


class TestTablePolicy(PolicyConformance):
    environment_settings = {"observation": "discrete"}

    def make_policy(self, observation_space, action_space):
        return TablePolicy(observation_space, action_space)


class CountingTrainer(Trainer):
    """Prefers the actions that were taken in episodes with a positive return."""

    def train(self, policy, environment, *, episodes=None, steps=None, seed=None, callback=None):
        observation, _ = environment.reset(seed=seed)
        done_episodes = total = length = 0
        episode_return = 0.0
        while True:
            action = environment.action_space.sample()
            policy.preferences[observation, action] += 1
            observation, reward, terminated, truncated, _ = environment.step(action)
            total, length, episode_return = total + 1, length + 1, episode_return + reward
            if terminated or truncated:
                done_episodes += 1
                stop = callback(episode_return, length) is False if callback else False
                if stop or (episodes and done_episodes >= episodes) or (steps and total >= steps):
                    return
                observation, _ = environment.reset()
                length, episode_return = 0, 0.0
            elif steps and total >= steps:
                return


class TestCountingTrainer(TrainerConformance):
    environment_settings = {"observation": "discrete"}

    def make_trainer(self, observation_space, action_space):
        return CountingTrainer()

    def make_policy(self, observation_space, action_space):
        return TablePolicy(observation_space, action_space)


class TestReferenceAgent(AgentConformance):
    def make_agent(self):
        env = self.make_environment()
        return Agent(env, ReferencePolicy(env.observation_space, env.action_space))


def test_installed_components_by_name(agentos_component):
    """The ``agentos_component`` fixture of the pytest plugin builds installed components."""
    env = agentos_component("environment", "corridor", length=4)
    policy = agentos_component("policy", "random", action_space=env.action_space)
    assert env.length == 4 and env.action_space.contains(policy.decide(0))


KIT_USER = textwrap.dedent(
    """
    import numpy as np
    from gymnasium import spaces
    import gymnasium as gym
    from agentos import Policy
    from agentos.testing import EnvironmentConformance, PolicyConformance

    class Unseeded(gym.Env):
        observation_space = spaces.Box(0, 1, (1,), np.float32)
        action_space = spaces.Discrete(2)
        def reset(self, *, seed=None, options=None):
            return np.random.random(1).astype(np.float32), {}
        def step(self, action):
            return np.random.random(1).astype(np.float32), 0.0, False, False, {}

    class OutOfSpace(Policy):
        def decide(self, observation):
            return 7

    class TestUnseeded(EnvironmentConformance):
        def make_environment(self):
            return Unseeded()

    class TestOutOfSpace(PolicyConformance):
        def make_policy(self, observation_space, action_space):
            return OutOfSpace(observation_space, action_space)

    class TestMissingName(EnvironmentConformance):
        pass
    """
)


def run_pytest_here(tmp_path, source: str, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_user.py").write_text(source)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfs", *args, str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )


def test_kit_catches_broken_components(tmp_path):
    result = run_pytest_here(tmp_path, KIT_USER)
    out = result.stdout
    assert result.returncode == 1, out
    assert "FAILED test_user.py::TestUnseeded::test_seeding_is_reproducible" in out
    assert "FAILED test_user.py::TestOutOfSpace::test_actions_are_in_the_action_space" in out
    assert "set name = '<entry point>' or override make_environment()" in out
    # a policy that cannot save must say so (saves = False); otherwise the round trip fails
    assert "FAILED test_user.py::TestOutOfSpace::test_save_load_round_trip" in out


def test_plugin_is_lazy_and_harmless(tmp_path):
    """In a project that does not use the kit, the plugin loads but imports nothing heavy."""
    source = textwrap.dedent(
        """
        import sys

        def test_nothing_heavy(pytestconfig):
            assert pytestconfig.pluginmanager.has_plugin("agentos")
            heavy = {"gymnasium", "numpy", "torch", "agentos.testing._conformance", "agentos.host"}
            assert not heavy & set(sys.modules), heavy & set(sys.modules)
        """
    )
    result = run_pytest_here(tmp_path, source, "--markers")
    assert "agentos_conformance" in result.stdout
    result = run_pytest_here(tmp_path, source)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("observation", ["box", "discrete"])
def test_reference_env_spaces(observation):
    env = ReferenceEnv(observation=observation)
    first, _ = env.reset(seed=3)
    assert env.observation_space.contains(first)
    assert isinstance(env.observation_space, spaces.Box if observation == "box" else spaces.Discrete)

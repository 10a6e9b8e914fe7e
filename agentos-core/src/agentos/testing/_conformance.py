"""Conformance tests, one base class per kind; a component's tests subclass them.

Each class finds the component under test in one of two ways: by ``name`` (an installed entry
point, built with ``settings`` exactly as ``agentos run`` would build it from ``agent.ini``), or
by overriding ``make_environment`` / ``make_policy`` / ``make_trainer`` / ``make_agent``. Class
attributes (``seed``, ``steps``, ``episodes``...) size the checks; tests that do not apply to a
component (a policy without ``save``) are skipped with the reason.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any, ClassVar

import pytest

__all__ = [
    "AgentConformance",
    "EnvironmentConformance",
    "PolicyConformance",
    "TrainerConformance",
    "build_component",
]


def build_component(kind: str, name: str, /, **settings: Any) -> Any:
    """Build the installed component ``kind``/``name``; injectable objects go to constructors that name them."""
    from ..core._context import build
    from ..errors import UnknownComponentError
    from ..host import ComponentHost, canonical_kind

    kind = canonical_kind(kind)
    try:
        factory = ComponentHost().load(kind, name)
    except UnknownComponentError as exc:
        pytest.fail(f"{exc}: install the package under test first (pip install -e .)", pytrace=False)
    injectable = {"observation_space", "action_space", "environment", "policy", "trainer"}
    injected = {k: (lambda v=settings.pop(k): v) for k in list(settings) if k in injectable}
    return build(factory, settings, injected, label=f"{kind}.{name}")


def same(a: Any, b: Any) -> bool:
    """Deep equality for observations, actions and rewards (numpy arrays, dicts, tuples, NaN)."""
    import numpy as np

    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)
    if isinstance(a, numbers.Real) and isinstance(b, numbers.Real):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


def rollout(environment, choose, steps: int, seed: int) -> list[tuple]:
    """``steps`` steps with ``choose(observation)``, resetting at episode ends; the transitions."""
    observation, _ = environment.reset(seed=seed)
    transitions = [("reset", observation)]
    for _ in range(steps):
        action = choose(observation)
        observation, reward, terminated, truncated, _ = environment.step(action)
        transitions.append((action, observation, reward, terminated, truncated))
        if terminated or truncated:
            observation, _ = environment.reset()
            transitions.append(("reset", observation))
    return transitions


def _close(obj: Any) -> None:
    close = getattr(obj, "close", None)
    if callable(close):
        close()


class _Conformance:
    pytestmark = pytest.mark.agentos_conformance  # select with: pytest -m agentos_conformance
    kind: ClassVar[str] = ""
    #: Entry-point name of the installed component under test (or override ``make_*``).
    name: ClassVar[str | None] = None
    #: Constructor settings, as in the component's ``agent.ini`` section.
    settings: ClassVar[dict[str, Any]] = {}
    seed: ClassVar[int] = 0
    #: Steps of each rollout.
    steps: ClassVar[int] = 200

    def _named(self, what: str) -> str:
        if not self.name:
            pytest.fail(f"{type(self).__name__}: set name = '<entry point>' or override {what}()", pytrace=False)
        return self.name


class EnvironmentConformance(_Conformance):
    """Environments: Gymnasium's checker, reproducible seeding, spaces respected, safe ``close()``."""

    kind = "environment"

    def make_environment(self):
        """A new instance of the environment under test."""
        return build_component("environment", self._named("make_environment"), **self.settings)

    def test_passes_gymnasium_env_checker(self) -> None:
        from gymnasium.utils.env_checker import check_env

        environment = self.make_environment()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the checker's advice is not a failure
                check_env(getattr(environment, "unwrapped", environment), skip_render_check=True)
        finally:
            _close(environment)

    def test_seeding_is_reproducible(self) -> None:
        first, second = self.make_environment(), self.make_environment()
        try:
            first.action_space.seed(self.seed)
            second.action_space.seed(self.seed)
            a = rollout(first, lambda _: first.action_space.sample(), self.steps, self.seed)
            b = rollout(second, lambda _: second.action_space.sample(), self.steps, self.seed)
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                assert same(x, y), f"same seed, different transition {i}: {x!r} != {y!r}"
            again, _ = first.reset(seed=self.seed)
            assert same(again, a[0][1]), "reset(seed=s) twice gave different first observations"
        finally:
            _close(first)
            _close(second)

    def test_respects_its_spaces(self) -> None:
        environment = self.make_environment()
        try:
            environment.action_space.seed(self.seed)
            transitions = rollout(environment, lambda _: environment.action_space.sample(), self.steps, self.seed)
            space = environment.observation_space
            for transition in transitions:
                if transition[0] == "reset":
                    assert space.contains(transition[1]), f"reset observation {transition[1]!r} not in {space}"
                    continue
                action, observation, reward, terminated, truncated = transition
                assert space.contains(observation), f"observation {observation!r} after {action!r} not in {space}"
                assert isinstance(reward, numbers.Real), f"reward {reward!r} is not a number"
                assert isinstance(terminated, bool | _np_bool()), f"terminated {terminated!r} is not a bool"
                assert isinstance(truncated, bool | _np_bool()), f"truncated {truncated!r} is not a bool"
        finally:
            _close(environment)

    def test_close_is_safe_twice(self) -> None:
        environment = self.make_environment()
        environment.reset(seed=self.seed)
        environment.close()
        environment.close()


def _np_bool():
    import numpy as np

    return np.bool_


class _NeedsEnvironment(_Conformance):
    #: Entry-point name of the environment to test against (default: the kit's ReferenceEnv).
    environment: ClassVar[str | None] = None
    environment_settings: ClassVar[dict[str, Any]] = {}

    def make_environment(self):
        """The environment the component is tested against."""
        if self.environment:
            return build_component("environment", self.environment, **self.environment_settings)
        from ._reference import ReferenceEnv

        return ReferenceEnv(**self.environment_settings)

    @pytest.fixture
    def env(self):
        environment = self.make_environment()
        yield environment
        _close(environment)


class PolicyConformance(_NeedsEnvironment):
    """Policies: actions inside the action space, seeding, and a save/load round trip."""

    kind = "policy"
    #: False for a policy with no learned state: its ``save`` must then raise NotImplementedError.
    saves: ClassVar[bool] = True

    def make_policy(self, observation_space, action_space):
        """A new instance of the policy under test, for these spaces."""
        return build_component(
            "policy",
            self._named("make_policy"),
            observation_space=observation_space,
            action_space=action_space,
            **self.settings,
        )

    def _observations(self, env, policy) -> list:
        env.action_space.seed(self.seed)
        return [t[1] for t in rollout(env, lambda _: env.action_space.sample(), self.steps, self.seed)]

    def _decisions(self, policy, observations) -> list:
        policy.seed(self.seed)
        policy.reset()
        return [policy.decide(o) for o in observations]

    def test_actions_are_in_the_action_space(self, env) -> None:
        policy = self.make_policy(env.observation_space, env.action_space)
        policy.seed(self.seed)
        policy.reset()
        for transition in rollout(env, policy.decide, self.steps, self.seed):
            if transition[0] != "reset":
                assert env.action_space.contains(transition[0]), (
                    f"action {transition[0]!r} is not in {env.action_space}"
                )

    def test_seeded_decisions_are_reproducible(self, env) -> None:
        policy = self.make_policy(env.observation_space, env.action_space)
        observations = self._observations(env, policy)
        first = self._decisions(policy, observations)
        assert same(first, self._decisions(policy, observations)), "seed(s) twice gave different actions"

    def test_save_load_round_trip(self, env, tmp_path) -> None:
        policy = self.make_policy(env.observation_space, env.action_space)
        observations = self._observations(env, policy)
        path = str(tmp_path / "policy.checkpoint")
        if not self.saves:
            with pytest.raises(NotImplementedError):
                policy.save(path)
            return
        policy.save(path)
        restored = self.make_policy(env.observation_space, env.action_space)
        restored.load(path)
        assert same(self._decisions(policy, observations), self._decisions(restored, observations)), (
            "a loaded policy decides differently from the one that was saved"
        )


class TrainerConformance(_NeedsEnvironment):
    """Trainers: a short run changes the policy, crosses episode boundaries and honours the callback."""

    kind = "trainer"
    #: Entry-point name of a policy this trainer can train (or override ``make_policy``).
    policy: ClassVar[str | None] = None
    policy_settings: ClassVar[dict[str, Any]] = {}
    #: Budget of the short runs.
    episodes: ClassVar[int] = 5
    steps: ClassVar[int] = 100

    def make_trainer(self, observation_space, action_space):
        return build_component(
            "trainer",
            self._named("make_trainer"),
            observation_space=observation_space,
            action_space=action_space,
            **self.settings,
        )

    def make_policy(self, observation_space, action_space):
        """A policy that the trainer can train."""
        if not self.policy:
            pytest.fail(f"{type(self).__name__}: set policy = '<entry point>' or override make_policy()", pytrace=False)
        return build_component(
            "policy",
            self.policy,
            observation_space=observation_space,
            action_space=action_space,
            **self.policy_settings,
        )

    def fingerprint(self, policy, tmp_path, observations) -> Any:
        """What must change when the policy learns: its saved bytes, else its (torch) parameters,
        else its decisions on fixed observations."""
        path = tmp_path / "fingerprint.checkpoint"
        try:
            policy.save(str(path))
            return path.read_bytes()
        except NotImplementedError:
            pass
        parameters = getattr(policy, "parameters", None)
        if callable(parameters):
            return [p.detach().cpu().numpy().copy() for p in parameters()]
        policy.seed(self.seed)
        return [policy.decide(o) for o in observations]

    def _setup(self, env):
        trainer = self.make_trainer(env.observation_space, env.action_space)
        policy = self.make_policy(env.observation_space, env.action_space)
        return trainer, policy

    def test_training_changes_the_policy(self, env, tmp_path) -> None:
        trainer, policy = self._setup(env)
        env.observation_space.seed(self.seed)
        observations = [env.observation_space.sample() for _ in range(32)]
        before = self.fingerprint(policy, tmp_path, observations)
        trainer.train(policy, env, episodes=self.episodes, seed=self.seed)
        assert not same(before, self.fingerprint(policy, tmp_path, observations)), (
            f"{self.episodes} episodes of training left the policy unchanged"
        )

    def test_training_crosses_episode_boundaries(self, env) -> None:
        trainer, policy = self._setup(env)
        episodes: list[tuple] = []
        trainer.train(policy, env, steps=self.steps, seed=self.seed, callback=lambda r, n: episodes.append((r, n)))
        assert episodes, f"{self.steps} steps of training reported no finished episode to the callback"
        for episode_return, length in episodes:
            assert isinstance(episode_return, numbers.Real) and length >= 1
        trainer.train(policy, env, episodes=2, seed=self.seed + 1)  # a second run on the same objects

    def test_callback_false_stops_training(self, env) -> None:
        trainer, policy = self._setup(env)
        calls: list[tuple] = []

        def stop(episode_return, length):
            calls.append((episode_return, length))
            return False

        trainer.train(policy, env, episodes=50, seed=self.seed, callback=stop)
        assert 1 <= len(calls) < 50, f"the callback returned False but training ran {len(calls)} episodes"


class AgentConformance(_NeedsEnvironment):
    """Agents: ``reset()`` then ``advance()`` runs each episode to completion; ``run_agent`` works."""

    kind = "agent"
    #: Entry-point name of the policy the agent gets (default: the kit's ReferencePolicy).
    policy: ClassVar[str | None] = None
    policy_settings: ClassVar[dict[str, Any]] = {}
    #: An episode longer than this is a failure.
    max_episode_steps: ClassVar[int] = 10_000

    def make_policy(self, observation_space, action_space):
        if self.policy:
            return build_component(
                "policy",
                self.policy,
                observation_space=observation_space,
                action_space=action_space,
                **self.policy_settings,
            )
        from ._reference import ReferencePolicy

        return ReferencePolicy(observation_space, action_space)

    def make_agent(self):
        """A new agent with its environment and policy."""
        environment = self.make_environment()
        policy = self.make_policy(environment.observation_space, environment.action_space)
        return build_component(
            "agent", self._named("make_agent"), environment=environment, policy=policy, **self.settings
        )

    @pytest.fixture
    def agent(self):
        agent = self.make_agent()
        yield agent
        _close(agent)

    def test_advance_runs_to_completion(self, agent) -> None:
        for episode in range(2):
            agent.reset(seed=self.seed + episode)
            for _ in range(self.max_episode_steps):
                if agent.advance():
                    break
            else:
                pytest.fail(f"episode {episode} did not end within {self.max_episode_steps} advance() calls")

    def test_run_agent(self, agent) -> None:
        from ..core._runner import run_agent

        summary = run_agent(agent, 2, seed=self.seed)
        assert summary["episodes"] == 2 and summary["status"] == "finished", summary

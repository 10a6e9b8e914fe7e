"""The policy and trainer of this agent: a stable-baselines3 model and its ``learn()``.

``SB3Policy`` holds the model (any algorithm of ``ALGORITHMS``, hyperparameters from agent.ini);
``SB3Trainer`` runs the model's own training loop on the agent's environment. Checkpoints hold
the network weights only (``torch.load(path, weights_only=True)``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import torch
from agentos import Policy, Trainer
from agentos.plugin_api import use_torch_threads
from gymnasium import spaces
from stable_baselines3 import A2C, DQN, PPO
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.monitor import Monitor

ALGORITHMS: dict[str, type[BaseAlgorithm]] = {"PPO": PPO, "A2C": A2C, "DQN": DQN}

EpisodeCallback = Callable[[float, int], bool | None]


class _SpacesOnly(gym.Env):
    """Stands in for the environment until the trainer brings the real one: it has only spaces."""

    def __init__(
        self, observation_space: spaces.Space[Any], action_space: spaces.Space[Any]
    ) -> None:
        self.observation_space = observation_space
        self.action_space = action_space

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        raise RuntimeError(
            "train the policy with its trainer (agentos train), not on this placeholder"
        )

    def step(self, action: Any) -> Any:
        raise RuntimeError(
            "train the policy with its trainer (agentos train), not on this placeholder"
        )


class SB3Policy(Policy):
    """A stable-baselines3 model that decides actions.

    Settings: ``algorithm`` (PPO, A2C or DQN), ``network`` (the SB3 policy, ``MlpPolicy``),
    ``device`` (``auto``: CUDA when available, else the CPU; ``cpu``, ``cuda``, ``cuda:N``),
    ``deterministic`` (the most likely action instead of a sample), ``seed``, and any other
    keyword of the algorithm (``learning_rate``, ``n_steps``, ``gamma``...).
    """

    def __init__(
        self,
        observation_space: spaces.Space[Any],
        action_space: spaces.Space[Any],
        algorithm: str = "{{ cookiecutter.algorithm }}",
        network: str = "MlpPolicy",
        device: str = "auto",
        deterministic: bool = True,
        seed: int | None = None,
        **hyperparameters: Any,
    ) -> None:
        super().__init__(observation_space, action_space)
        if algorithm.upper() not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}, got {algorithm!r}")
        self.algorithm = algorithm.upper()
        self.deterministic = deterministic
        use_torch_threads()  # one CPU thread unless [agentos] threads, --threads or OMP_NUM_THREADS
        self.model = ALGORITHMS[self.algorithm](
            network,
            _SpacesOnly(observation_space, action_space),
            device=device,
            seed=seed,
            verbose=0,
            **hyperparameters,
        )

    def decide(self, observation: Any) -> Any:
        action, _ = self.model.predict(observation, deterministic=self.deterministic)
        return int(action) if isinstance(self.action_space, spaces.Discrete) else action

    def seed(self, seed: int | None) -> None:
        if seed is not None:
            self.model.set_random_seed(seed)

    def save(self, path: str) -> None:
        """The network weights only, loadable with ``torch.load(path, weights_only=True)``."""
        torch.save(self.model.policy.state_dict(), path)

    def load(self, path: str) -> None:
        state = torch.load(path, map_location=self.model.device, weights_only=True)
        self.model.policy.load_state_dict(state)


class _Episodes(BaseCallback):
    """Reports finished episodes to AgentOS and stops the run when asked to."""

    def __init__(self, episodes: int | None, callback: EpisodeCallback | None) -> None:
        super().__init__()
        self.episodes = episodes
        self.callback = callback
        self.finished = 0

    def _on_step(self) -> bool:
        keep_going = True
        for info in self.locals.get("infos", []):
            if "episode" in info:
                self.finished += 1
                if self.callback is not None:
                    keep_going = (
                        self.callback(float(info["episode"]["r"]), int(info["episode"]["l"]))
                        is not False
                    )
                if self.episodes is not None and self.finished >= self.episodes:
                    keep_going = False
        return keep_going


class SB3Trainer(Trainer):
    """Trains an :class:`SB3Policy` with its algorithm's ``learn()`` on the agent's environment.

    ``steps`` is the number of environment steps (SB3 finishes its current rollout); ``episodes``
    stops after that many finished episodes. A policy is updated only after a full rollout
    (``n_steps``), so very short runs may not change it.
    """

    def train(
        self,
        policy: SB3Policy,
        environment: gym.Env,
        *,
        episodes: int | None = None,
        steps: int | None = None,
        seed: int | None = None,
        callback: EpisodeCallback | None = None,
    ) -> dict[str, int]:
        if not isinstance(getattr(policy, "model", None), BaseAlgorithm):
            raise TypeError(
                f"{type(self).__name__} trains stable-baselines3 policies, not {type(policy).__name__}"
            )
        if episodes is None and steps is None:
            raise ValueError("give episodes or steps")
        model = policy.model
        model.set_env(Monitor(environment))
        if seed is not None:
            model.set_random_seed(seed)
        counter = _Episodes(episodes, callback)
        model.learn(
            total_timesteps=steps if steps is not None else 2**62,
            callback=counter,
            reset_num_timesteps=False,
        )
        return {"episodes": counter.finished, "steps": model.num_timesteps}

"""The policy and trainer of this agent: a small torch network and REINFORCE.

``MLPPolicy`` is a multi-layer perceptron with a softmax over a ``Discrete`` action space;
``ReinforceTrainer`` improves it with the Monte-Carlo policy gradient. Change either freely:
the trainer needs only ``parameters()`` and ``log_probabilities(observations, actions)``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import torch
from agentos import Policy, Trainer
from agentos.plugin_api import use_torch_threads
from gymnasium import spaces
from torch import nn

EpisodeCallback = Callable[[float, int], bool | None]
_DEVICE = re.compile(r"^(auto|cpu|cuda(:\d+)?)$")


def resolve_device(device: str = "auto") -> torch.device:
    """``auto`` is CUDA when it is available and the CPU otherwise; the others are taken as given."""
    if not _DEVICE.match(device):
        raise ValueError(f"device must be auto, cpu, cuda or cuda:N, got {device!r}")
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


class MLPPolicy(Policy):
    """Settings: ``hidden_size``, ``greedy`` (argmax instead of sampling), ``device``, ``seed``."""

    def __init__(
        self,
        observation_space: spaces.Space[Any],
        action_space: spaces.Space[Any],
        hidden_size: int = 64,
        greedy: bool = False,
        device: str = "auto",
        seed: int | None = None,
    ) -> None:
        super().__init__(observation_space, action_space)
        if not isinstance(action_space, spaces.Discrete):
            raise ValueError(f"MLPPolicy needs a Discrete action space, got {action_space}")
        self.greedy = greedy
        self.device = resolve_device(device)
        use_torch_threads()  # one CPU thread unless [agentos] threads, --threads or OMP_NUM_THREADS
        self._first_action = int(action_space.start)
        with torch.random.fork_rng(devices=[]):
            if seed is not None:
                torch.manual_seed(seed)
            self.network = nn.Sequential(
                nn.Linear(spaces.flatdim(observation_space), hidden_size),
                nn.Tanh(),
                nn.Linear(hidden_size, int(action_space.n)),
            ).to(self.device)
        self._generator = torch.Generator()  # actions are sampled on the CPU, whatever the device
        self.seed(seed)

    def _tensor(self, observations: Sequence[Any]) -> torch.Tensor:
        flat = np.stack([spaces.flatten(self.observation_space, o) for o in observations])
        return torch.as_tensor(flat, dtype=torch.float32, device=self.device)

    def parameters(self) -> Iterator[nn.Parameter]:
        return self.network.parameters()

    def log_probabilities(
        self, observations: Sequence[Any], actions: Sequence[Any]
    ) -> torch.Tensor:
        """``log pi(action | observation)`` for each pair, differentiable."""
        indices = torch.as_tensor(
            [int(a) - self._first_action for a in actions], device=self.device
        )
        logits = self.network(self._tensor(observations))
        return torch.distributions.Categorical(logits=logits).log_prob(indices)

    @torch.no_grad()
    def decide(self, observation: Any) -> int:
        logits = self.network(self._tensor([observation]))[0]
        if self.greedy:
            return self._first_action + int(logits.argmax())
        probabilities = torch.softmax(logits, dim=-1).cpu()
        return self._first_action + int(
            torch.multinomial(probabilities, 1, generator=self._generator)
        )

    def seed(self, seed: int | None) -> None:
        if seed is None:
            self._generator.seed()
        else:
            self._generator.manual_seed(seed)

    def save(self, path: str) -> None:
        """Weights only, loadable with ``torch.load(path, weights_only=True)``."""
        torch.save({"network": self.network.state_dict()}, path)

    def load(self, path: str) -> None:
        state = torch.load(path, map_location=self.device, weights_only=True)
        self.network.load_state_dict(state["network"])


class ReinforceTrainer(Trainer):
    """REINFORCE with normalised returns. Settings: ``learning_rate``, ``gamma``."""

    def __init__(self, learning_rate: float = 0.01, gamma: float = 0.99) -> None:
        self.learning_rate = learning_rate
        self.gamma = gamma

    def train(
        self,
        policy: MLPPolicy,
        environment: Any,
        *,
        episodes: int | None = None,
        steps: int | None = None,
        seed: int | None = None,
        callback: EpisodeCallback | None = None,
    ) -> dict[str, int]:
        if episodes is None and steps is None:
            raise ValueError("give episodes or steps")
        optimizer = torch.optim.Adam(policy.parameters(), lr=self.learning_rate)
        if seed is not None:
            policy.seed(seed)
        finished = total_steps = 0
        observation, _ = environment.reset(seed=seed)
        while True:
            policy.reset()
            observations, actions, rewards = [], [], []
            done = out_of_steps = False
            while not (done or out_of_steps):
                action = policy.decide(observation)
                next_observation, reward, terminated, truncated, _ = environment.step(action)
                observations.append(observation)
                actions.append(action)
                rewards.append(float(reward))
                observation = next_observation
                total_steps += 1
                done = terminated or truncated
                out_of_steps = steps is not None and total_steps >= steps
            self._update(policy, optimizer, observations, actions, rewards)
            if not done:
                break
            finished += 1
            stop = callback is not None and callback(sum(rewards), len(rewards)) is False
            if stop or out_of_steps or (episodes is not None and finished >= episodes):
                break
            observation, _ = environment.reset()
        return {"episodes": finished, "steps": total_steps}

    def _update(
        self,
        policy: MLPPolicy,
        optimizer: torch.optim.Optimizer,
        observations: list[Any],
        actions: list[Any],
        rewards: list[float],
    ) -> None:
        returns, running = [], 0.0
        for reward in reversed(rewards):
            running = reward + self.gamma * running
            returns.append(running)
        returns.reverse()
        log_probabilities = policy.log_probabilities(observations, actions)
        weights = torch.as_tensor(returns, dtype=torch.float32, device=log_probabilities.device)
        if len(returns) > 1:
            weights = (weights - weights.mean()) / (weights.std() + 1e-8)
        loss = -(log_probabilities * weights).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

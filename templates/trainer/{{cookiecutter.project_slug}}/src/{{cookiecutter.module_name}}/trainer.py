"""{{ cookiecutter.class_name }}: REINFORCE (Monte-Carlo policy gradient)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

import torch
from agentos import Trainer


@runtime_checkable
class Trainable(Protocol):
    """What this trainer needs of a policy (the torch policy template provides it)."""

    def decide(self, observation: Any) -> Any: ...

    def parameters(self) -> Iterator[torch.nn.Parameter]: ...

    def log_probabilities(
        self, observations: Sequence[Any], actions: Sequence[Any]
    ) -> torch.Tensor: ...


EpisodeCallback = Callable[[float, int], bool | None]


class {{ cookiecutter.class_name }}(Trainer):
    """Updates the policy after each episode towards actions that led to high returns.

    Settings (``agent.ini``): ``learning_rate``, ``gamma`` (discount) and ``normalize_returns``
    (subtract the mean and divide by the deviation: a simple baseline). The computation runs on
    the policy's device, whatever it is.
    """

    def __init__(
        self, learning_rate: float = 0.01, gamma: float = 0.99, normalize_returns: bool = True
    ) -> None:
        if learning_rate <= 0:
            raise ValueError(f"learning_rate must be positive, got {learning_rate}")
        if not 0 <= gamma <= 1:
            raise ValueError(f"gamma must be in [0, 1], got {gamma}")
        self.learning_rate = learning_rate
        self.gamma = gamma
        self.normalize_returns = normalize_returns

    def train(
        self,
        policy: Any,
        environment: Any,
        *,
        episodes: int | None = None,
        steps: int | None = None,
        seed: int | None = None,
        callback: EpisodeCallback | None = None,
    ) -> dict[str, int]:
        """Train for ``episodes`` episodes or ``steps`` steps; ``callback`` may return False to stop."""
        if not isinstance(policy, Trainable):
            raise TypeError(
                f"{type(self).__name__} trains policies with parameters() and log_probabilities(); "
                f"{type(policy).__name__} has neither"
            )
        if episodes is None and steps is None:
            raise ValueError("give episodes or steps")
        optimizer = torch.optim.Adam(policy.parameters(), lr=self.learning_rate)
        if seed is not None:
            policy.seed(seed)
        observation, _ = environment.reset(seed=seed)
        policy.reset()
        observations: list[Any] = []
        actions: list[Any] = []
        rewards: list[float] = []
        finished = total_steps = 0
        while True:
            action = policy.decide(observation)
            next_observation, reward, terminated, truncated, _ = environment.step(action)
            observations.append(observation)
            actions.append(action)
            rewards.append(float(reward))
            observation = next_observation
            total_steps += 1
            episode_over = terminated or truncated
            out_of_steps = steps is not None and total_steps >= steps
            if not (episode_over or out_of_steps):
                continue
            self._update(policy, optimizer, observations, actions, rewards)
            if episode_over:
                finished += 1
                keep_going = callback(sum(rewards), len(rewards)) if callback else None
                if (
                    keep_going is False
                    or out_of_steps
                    or (episodes is not None and finished >= episodes)
                ):
                    break
                observation, _ = environment.reset()
                policy.reset()
                observations, actions, rewards = [], [], []
            else:
                break
        return {"episodes": finished, "steps": total_steps}

    def _update(
        self,
        policy: Trainable,
        optimizer: torch.optim.Optimizer,
        observations: list[Any],
        actions: list[Any],
        rewards: list[float],
    ) -> None:
        returns = []
        running = 0.0
        for reward in reversed(rewards):
            running = reward + self.gamma * running
            returns.append(running)
        returns.reverse()
        log_probabilities = policy.log_probabilities(observations, actions)
        weights = torch.as_tensor(returns, dtype=torch.float32, device=log_probabilities.device)
        if self.normalize_returns and len(returns) > 1:
            weights = (weights - weights.mean()) / (weights.std() + 1e-8)
        loss = -(log_probabilities * weights).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

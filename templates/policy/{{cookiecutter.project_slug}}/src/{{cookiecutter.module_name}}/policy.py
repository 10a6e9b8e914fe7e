"""{{ cookiecutter.class_name }}: a small neural network that picks discrete actions."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch
from agentos import Policy
from agentos.plugin_api import use_torch_threads
from gymnasium import spaces
from torch import nn

from ._device import resolve_device


class {{ cookiecutter.class_name }}(Policy):
    """A multi-layer perceptron over the flattened observation, with a softmax over actions.

    Any observation space that Gymnasium can flatten works (``Box``, ``Discrete`` as one-hot,
    ``Dict``...); the action space must be ``Discrete``. Settings (``agent.ini``):

    - ``hidden_size``: width of the hidden layer
    - ``greedy``: take the most likely action instead of sampling one
    - ``device``: ``auto`` (CUDA when available, else CPU), ``cpu``, ``cuda`` or ``cuda:N``
    - ``seed``: seeds the initial weights and the action sampling

    Trainers improve it through :meth:`parameters` and :meth:`log_probabilities`.
    """

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
            raise ValueError(
                f"{type(self).__name__} needs a Discrete action space, got {action_space}"
            )
        self.greedy = greedy
        self.device = resolve_device(device)
        use_torch_threads()  # one CPU thread unless [agentos] threads, --threads or OMP_NUM_THREADS
        self._first_action = int(action_space.start)
        inputs = spaces.flatdim(observation_space)
        with torch.random.fork_rng(devices=[]):
            if seed is not None:
                torch.manual_seed(seed)
            self.network = nn.Sequential(
                nn.Linear(inputs, hidden_size),
                nn.Tanh(),
                nn.Linear(hidden_size, int(action_space.n)),
            ).to(self.device)
        self._generator = torch.Generator()  # actions are sampled on the CPU, whatever the device
        self.seed(seed)

    def observations_to_tensor(self, observations: Sequence[Any]) -> torch.Tensor:
        """A ``(batch, features)`` float tensor on the policy's device."""
        flat = np.stack([spaces.flatten(self.observation_space, o) for o in observations])
        return torch.as_tensor(flat, dtype=torch.float32, device=self.device)

    def parameters(self) -> Iterator[nn.Parameter]:
        """The trainable weights."""
        return self.network.parameters()

    def log_probabilities(
        self, observations: Sequence[Any], actions: Sequence[Any]
    ) -> torch.Tensor:
        """``log pi(action | observation)`` for each pair, differentiable (for trainers)."""
        logits = self.network(self.observations_to_tensor(observations))
        indices = torch.as_tensor(
            [int(a) - self._first_action for a in actions], device=self.device
        )
        return torch.distributions.Categorical(logits=logits).log_prob(indices)

    @torch.no_grad()
    def decide(self, observation: Any) -> int:
        logits = self.network(self.observations_to_tensor([observation]))[0]
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

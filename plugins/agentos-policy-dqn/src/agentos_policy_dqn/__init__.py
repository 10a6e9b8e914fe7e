"""A deep Q-network policy: greedy on ``Q(observation, .)`` from a torch network.

Networks (the ``network`` setting):

* ``board`` -- for small integer grids such as 2048's 4x4 board of tile exponents (``Box`` of
  integers, 2-D, at most 32 values): each cell becomes a one-hot plane per value (18 planes for
  2048), then two 2x2 convolutions (``channels`` filters each, ReLU), then the ``hidden`` layers.
  Merges are local patterns between neighbouring cells, which 2x2 filters see directly.
* ``mlp`` -- the flattened observation (one-hot for ``Discrete``) through the ``hidden`` layers.
* ``auto`` (default) -- ``board`` when the observation space fits it, else ``mlp``.

Checkpoints hold the ``state_dict`` and the architecture as plain values:
``torch.load(path, weights_only=True)`` reads them. The policy does not learn while running.
"""

from __future__ import annotations

import random

import numpy as np
import torch
from agentos import Policy
from agentos.devices import check_device, resolve_device
from agentos.plugin_api import use_torch_threads
from torch import nn

__all__ = ["BoardQNetwork", "DQNPolicy", "MlpQNetwork", "make_network"]

FORMAT = "agentos-dqn/1"
NETWORKS = ("auto", "board", "mlp")


class BoardQNetwork(nn.Module):
    """One-hot planes of a small integer grid -> two 2x2 convolutions -> hidden layers -> Q-values."""

    def __init__(self, shape: tuple[int, int], n_values: int, n_actions: int, channels: int, hidden: list[int]):
        super().__init__()
        self.n_values = n_values
        h, w = shape
        self.convs = nn.Sequential(
            nn.Conv2d(n_values, channels, 2), nn.ReLU(), nn.Conv2d(channels, channels, 2), nn.ReLU(), nn.Flatten()
        )
        self.head = _mlp(channels * (h - 2) * (w - 2), hidden, n_actions)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        planes = nn.functional.one_hot(x.long(), self.n_values).permute(0, 3, 1, 2).float()
        return self.head(self.convs(planes))


class MlpQNetwork(nn.Module):
    def __init__(self, n_inputs: int, n_actions: int, hidden: list[int], one_hot: int = 0):
        super().__init__()
        self.one_hot = one_hot
        self.body = _mlp(n_inputs, hidden, n_actions)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.one_hot:
            x = nn.functional.one_hot(x.long().reshape(-1), self.one_hot)
        return self.body(x.float().reshape(x.shape[0], -1))


def _mlp(n_in: int, hidden: list[int], n_out: int) -> nn.Sequential:
    layers, width = [], n_in
    for size in hidden:
        layers += [nn.Linear(width, size), nn.ReLU()]
        width = size
    layers.append(nn.Linear(width, n_out))
    return nn.Sequential(*layers)


def board_fits(space) -> bool:
    return (
        type(space).__name__ == "Box"
        and len(space.shape) == 2
        and np.dtype(space.dtype).kind in "iu"
        and int(np.min(space.low)) >= 0
        and int(np.max(space.high)) < 32
        and min(space.shape) >= 3
    )


def make_network(observation_space, n_actions: int, network: str, channels: int, hidden: list[int]) -> nn.Module:
    if network == "auto":
        network = "board" if board_fits(observation_space) else "mlp"
    if network == "board":
        if not board_fits(observation_space):
            raise ValueError(f"network = board needs a 2-D Box of small non-negative integers, not {observation_space}")
        return BoardQNetwork(
            observation_space.shape, int(np.max(observation_space.high)) + 1, n_actions, channels, hidden
        )
    kind = type(observation_space).__name__
    if kind == "Discrete":
        return MlpQNetwork(int(observation_space.n), n_actions, hidden, one_hot=int(observation_space.n))
    if kind == "Box":
        return MlpQNetwork(int(np.prod(observation_space.shape)), n_actions, hidden)
    raise ValueError(f"dqn cannot read observations of {observation_space!r}")


class DQNPolicy(Policy):
    """Greedy on a Q-network; ``avoid_repeats`` skips actions that left the observation unchanged.

    Settings: ``network`` (auto|board|mlp), ``channels`` (64), ``hidden`` ([256]), ``epsilon`` (0.0:
    exploration while running), ``avoid_repeats`` (true), ``device`` (auto|cpu|cuda|cuda:N), ``seed``.
    """

    checkpoint_suffix = ".pt"
    learns_while_running = False

    def __init__(
        self,
        observation_space=None,
        action_space=None,
        network: str = "auto",
        channels: int = 64,
        hidden: list | None = None,
        epsilon: float = 0.0,
        avoid_repeats: bool = True,
        device: str = "auto",
        seed: int | None = None,
    ):
        super().__init__(observation_space, action_space)
        if action_space is None or type(action_space).__name__ != "Discrete":
            raise ValueError(f"dqn needs a Discrete action space, not {action_space!r}")
        if network not in NETWORKS:
            raise ValueError(f"network must be one of {', '.join(NETWORKS)}, not {network!r}")
        hidden = [256] if hidden is None else list(hidden)
        if not all(isinstance(n, int) and n > 0 for n in hidden) or int(channels) < 1:
            raise ValueError("hidden must be a list of positive layer sizes and channels positive")
        self.settings = {"network": network, "channels": int(channels), "hidden": hidden}
        self.n_actions, self.action_start = int(action_space.n), int(action_space.start)
        self.epsilon, self.avoid_repeats = float(epsilon), bool(avoid_repeats)
        self.device = resolve_device(check_device(device))
        use_torch_threads()  # one CPU thread unless [agentos] threads, --threads or $OMP_NUM_THREADS say otherwise
        self.rng = random.Random(seed)
        if seed is not None:
            torch.manual_seed(seed)
        self.net = make_network(observation_space, self.n_actions, network, int(channels), hidden).to(self.device)
        self.net.eval()
        self._last_id, self._tried = None, []

    def to_tensor(self, observations) -> torch.Tensor:
        """A batch of observations as the network's input tensor (on the policy's device)."""
        return torch.as_tensor(np.asarray(observations), device=self.device)

    def q_values(self, observation) -> torch.Tensor:
        with torch.no_grad():
            return self.net(self.to_tensor(observation)[None])[0]

    def act(self, observation, epsilon: float = 0.0) -> int:
        """Epsilon-greedy action index (0-based), honouring ``avoid_repeats``. Used by trainers."""
        excluded = ()
        if self.avoid_repeats:
            ident = observation.tobytes() if isinstance(observation, np.ndarray) else observation
            if ident == self._last_id and len(self._tried) < self.n_actions:
                excluded = self._tried
            elif ident != self._last_id:
                self._last_id, self._tried = ident, []
        if epsilon > 0.0 and self.rng.random() < epsilon:
            allowed = [a for a in range(self.n_actions) if a not in excluded]
            action = allowed[self.rng.randrange(len(allowed))]
        else:
            q = self.q_values(observation)
            if excluded:
                q = q.clone()
                q[list(excluded)] = -float("inf")
            action = int(q.argmax())
        if self.avoid_repeats:
            self._tried.append(action)
        return action

    def decide(self, observation):
        return self.action_start + self.act(observation, self.epsilon)

    def reset(self) -> None:
        self._last_id, self._tried = None, []

    def seed(self, seed: int | None) -> None:
        self.rng.seed(seed)

    def save(self, path: str) -> None:
        state = {k: v.detach().cpu() for k, v in self.net.state_dict().items()}
        torch.save(
            {"format": FORMAT, "settings": self.settings, "n_actions": self.n_actions, "state_dict": state}, path
        )

    def save_safetensors(self, path: str) -> None:
        """The weights as safetensors (for trained-policy packages: no pickle), the architecture as metadata."""
        import json

        from safetensors.torch import save_file

        state = {k: v.detach().cpu().contiguous() for k, v in self.net.state_dict().items()}
        settings = json.dumps(self.settings, sort_keys=True)
        meta = {"format": FORMAT, "settings": settings, "n_actions": str(self.n_actions)}
        save_file(state, path, metadata=meta)

    def load_safetensors(self, path: str) -> None:
        """Read weights written by :meth:`save_safetensors`; architecture, names, dtypes and shapes must match."""
        import json

        from safetensors import safe_open

        with safe_open(path, framework="pt") as f:
            meta = f.metadata() or {}
            if meta.get("format") != FORMAT:
                raise ValueError(f"{path} is not a dqn policy checkpoint")
            settings = json.loads(meta.get("settings", "null"))
            if settings != self.settings or meta.get("n_actions") != str(self.n_actions):
                raise ValueError(f"{path} holds a network with {meta.get('settings')} and {meta.get('n_actions')} "
                                 f"actions; this policy has {self.settings} and {self.n_actions} actions")
            state = {name: f.get_tensor(name) for name in f.keys()}
        expected = self.net.state_dict()
        if set(state) != set(expected):
            raise ValueError(f"{path} holds tensors {sorted(state)[:4]}..., not this network's")
        for name, tensor in state.items():
            if tensor.dtype != expected[name].dtype or tensor.shape != expected[name].shape:
                raise ValueError(f"{path}: tensor {name} is {tensor.dtype} {tuple(tensor.shape)}, expected "
                                 f"{expected[name].dtype} {tuple(expected[name].shape)}")
            if not torch.isfinite(tensor).all():
                raise ValueError(f"{path}: tensor {name} holds non-finite values")
        self.net.load_state_dict(state)
        self.net.eval()

    def load(self, path: str) -> None:
        import pickle

        try:
            data = torch.load(path, map_location="cpu", weights_only=True)
        except pickle.UnpicklingError:  # torch's text would suggest unpickling it: never do that
            raise ValueError(f"{path} is not a dqn policy checkpoint: it holds objects other than tensors "
                             "and plain values, so it was refused unread") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"{path} is not a dqn policy checkpoint")
        if data["settings"] != self.settings or data["n_actions"] != self.n_actions:
            raise ValueError(
                f"{path} holds a network with {data['settings']} and {data['n_actions']} actions; "
                f"this policy has {self.settings} and {self.n_actions} actions"
            )
        self.net.load_state_dict(data["state_dict"])
        self.net.eval()

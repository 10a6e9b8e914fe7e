"""A stable-baselines3 policy network as an AgentOS policy.

The network is the one the algorithm's ``MlpPolicy`` builds (an actor-critic for PPO and A2C, a
Q-network for DQN); the ``sb3`` trainer trains it in place. Checkpoints hold the network's
``state_dict`` and a few strings (``torch.load(path, weights_only=True)`` reads them): no pickle.
Trained-policy packages ship the same ``state_dict`` as safetensors, the settings that rebuild the
network (algorithm, net_arch, activation) as its metadata (:meth:`SB3Policy.save_safetensors`).
"""

from __future__ import annotations

from agentos import Policy
from agentos.devices import check_device
from agentos.plugin_api import use_torch_threads

__all__ = ["ALGORITHMS", "SB3Policy"]

ALGORITHMS = ("PPO", "A2C", "DQN")
ACTIVATIONS = ("tanh", "relu", "elu", "leaky_relu")
FORMAT = "agentos-sb3/1"


def algorithm_class(name: str):
    import stable_baselines3

    return getattr(stable_baselines3, name)


class SB3Policy(Policy):
    """Acts with a stable-baselines3 policy network.

    Settings: ``algorithm`` (``auto``: whatever the trainer or the checkpoint says; or PPO, A2C,
    DQN), ``net_arch`` (hidden layer sizes, default: the algorithm's), ``activation`` (tanh, relu...),
    ``deterministic`` (true: the most likely action), ``device`` (auto|cpu|cuda|cuda:N). It does not
    learn while running.
    """

    checkpoint_suffix = ".pt"
    learns_while_running = False

    def __init__(
        self,
        observation_space=None,
        action_space=None,
        algorithm: str = "auto",
        net_arch: list | None = None,
        activation: str | None = None,
        deterministic: bool = True,
        device: str = "auto",
        seed: int | None = None,
    ):
        super().__init__(observation_space, action_space)
        algorithm = str(algorithm).upper()
        if algorithm != "AUTO" and algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be auto or one of {', '.join(ALGORITHMS)}, not {algorithm!r}")
        if activation is not None and activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}, not {activation!r}")
        if net_arch is not None and not all(isinstance(n, int) and n > 0 for n in net_arch):
            raise ValueError(f"net_arch must be a list of positive layer sizes, not {net_arch!r}")
        self.algorithm_setting = None if algorithm == "AUTO" else algorithm
        self.algorithm = self.algorithm_setting  # the network's algorithm once there is one
        self.net_arch = list(net_arch) if net_arch is not None else None
        self.activation = activation
        self.deterministic = bool(deterministic)
        self.device_setting = check_device(device)
        use_torch_threads()  # one CPU thread unless [agentos] threads, --threads or $OMP_NUM_THREADS say otherwise
        self.net = None  # an SB3 BasePolicy, built on first use, by the trainer or by load()
        self._discrete = type(action_space).__name__ == "Discrete"
        self._seed = seed

    @property
    def device(self):
        from agentos.devices import resolve_device

        return resolve_device(self.device_setting)

    def policy_kwargs(self) -> dict:
        import torch

        kwargs = {}
        if self.net_arch is not None:
            kwargs["net_arch"] = list(self.net_arch)
        if self.activation is not None:
            kwargs["activation_fn"] = {
                "tanh": torch.nn.Tanh,
                "relu": torch.nn.ReLU,
                "elu": torch.nn.ELU,
                "leaky_relu": torch.nn.LeakyReLU,
            }[self.activation]
        return kwargs

    def adopt_algorithm(self, algorithm: str) -> None:
        """Called by the trainer: the network's algorithm (an error if it conflicts with the setting)."""
        algorithm = algorithm.upper()
        if self.algorithm_setting is not None and self.algorithm_setting != algorithm:
            raise ValueError(f"the sb3 policy is set to {self.algorithm_setting} but the trainer runs {algorithm}")
        if self.net is not None and self.algorithm != algorithm:
            self.net = None
        self.algorithm = algorithm

    def build_net(self):
        """A new, untrained network for this policy's spaces and settings."""
        import torch

        if self.algorithm is None:
            self.algorithm = "PPO"
        if self._seed is not None:
            torch.manual_seed(self._seed)
        policy_class = algorithm_class(self.algorithm).policy_aliases["MlpPolicy"]
        net = policy_class(self.observation_space, self.action_space, lambda _: 0.0, **self.policy_kwargs())
        return net.to(self.device)

    def decide(self, observation):
        if self.net is None:
            self.net = self.build_net()
        action, _ = self.net.predict(observation, deterministic=self.deterministic)
        return int(action) if self._discrete else action

    def seed(self, seed: int | None) -> None:
        self._seed = seed
        if seed is not None:
            import torch

            torch.manual_seed(seed)

    def save(self, path: str) -> None:
        import torch

        if self.net is None:
            self.net = self.build_net()
        state = {k: v.detach().cpu() for k, v in self.net.state_dict().items()}
        torch.save(
            {
                "format": FORMAT,
                "algorithm": self.algorithm,
                "net_arch": self.net_arch,
                "activation": self.activation,
                "state_dict": state,
            },
            path,
        )

    def load(self, path: str) -> None:
        import pickle

        import torch

        try:
            data = torch.load(path, map_location="cpu", weights_only=True)
        except pickle.UnpicklingError:  # torch's text would suggest unpickling it: never do that
            raise ValueError(f"{path} is not a sb3 policy checkpoint: it holds objects other than tensors "
                             "and plain values, so it was refused unread") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"{path} is not an sb3 policy checkpoint")
        if self.algorithm_setting is not None and data["algorithm"] != self.algorithm_setting:
            raise ValueError(
                f"{path} holds a {data['algorithm']} network; this policy is set to {self.algorithm_setting}"
            )
        self.algorithm = data["algorithm"]
        self.net_arch, self.activation = data.get("net_arch"), data.get("activation")
        net = self.build_net()
        net.load_state_dict(data["state_dict"])
        net.set_training_mode(False)
        self.net = net

    def _architecture(self) -> dict:
        return {"format": FORMAT, "algorithm": self.algorithm, "net_arch": self.net_arch, "activation": self.activation}

    def save_safetensors(self, path: str) -> None:
        """The network's ``state_dict`` as safetensors, the settings that rebuild it as string metadata."""
        import json

        from safetensors.torch import save_file

        if self.net is None:
            self.net = self.build_net()
        state = {k: v.detach().cpu().contiguous() for k, v in self.net.state_dict().items()}
        save_file(state, path, metadata={k: json.dumps(v) for k, v in self._architecture().items()})

    def load_safetensors(self, path: str) -> None:
        """Read what :meth:`save_safetensors` wrote: the metadata's architecture must fit this policy's
        settings, and every tensor's name, dtype and shape the network it rebuilds (finite values only)."""
        import json

        import torch
        from safetensors import safe_open

        with safe_open(path, framework="pt") as f:
            meta = f.metadata() or {}
            try:
                settings = {k: json.loads(meta[k]) for k in ("format", "algorithm", "net_arch", "activation")}
            except (KeyError, ValueError):
                raise ValueError(f"{path} is not an sb3 policy checkpoint (its metadata lacks the settings)") from None
            state = {name: f.get_tensor(name) for name in f.keys()}
        algorithm, net_arch, activation = settings["algorithm"], settings["net_arch"], settings["activation"]
        if settings["format"] != FORMAT or algorithm not in ALGORITHMS:
            raise ValueError(f"{path} is not an sb3 policy checkpoint")
        if activation is not None and activation not in ACTIVATIONS:
            raise ValueError(f"{path}: activation {str(activation)[:20]!r} is not one of {', '.join(ACTIVATIONS)}")
        if net_arch is not None and not (isinstance(net_arch, list) and len(net_arch) <= 16
                                         and all(isinstance(n, int) and 0 < n <= 65536 for n in net_arch)):
            raise ValueError(f"{path}: net_arch {str(net_arch)[:40]} is not a short list of layer sizes")
        if self.algorithm_setting is not None and algorithm != self.algorithm_setting:
            raise ValueError(f"{path} holds a {algorithm} network; this policy is set to {self.algorithm_setting}")
        for key, value in (("net_arch", net_arch), ("activation", activation)):
            if getattr(self, key) is not None and getattr(self, key) != value:
                raise ValueError(f"{path} holds a network with {key} {value}; this policy has {getattr(self, key)}")
        self.algorithm, self.net_arch, self.activation = algorithm, net_arch, activation
        net = self.build_net()
        expected = net.state_dict()
        if set(state) != set(expected):
            raise ValueError(f"{path} holds tensors {sorted(state)[:3]}..., not this network's")
        for name, tensor in state.items():
            if tensor.dtype != expected[name].dtype or tensor.shape != expected[name].shape:
                raise ValueError(f"{path}: tensor {name} is {tensor.dtype} {tuple(tensor.shape)}, expected "
                                 f"{expected[name].dtype} {tuple(expected[name].shape)}")
            if tensor.is_floating_point() and not torch.isfinite(tensor).all():
                raise ValueError(f"{path}: tensor {name} holds non-finite values")
        net.load_state_dict(state)
        net.set_training_mode(False)
        self.net = net

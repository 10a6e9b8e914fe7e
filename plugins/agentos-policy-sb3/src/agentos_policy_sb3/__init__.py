"""A stable-baselines3 policy network as an AgentOS policy.

The network is the one the algorithm builds (its MlpPolicy, CnnPolicy or MultiInputPolicy, chosen from
the observation space unless ``network`` says; an actor-critic for PPO, a Q-network for DQN...); the
``sb3`` trainer trains it in place. Checkpoints hold the network's ``state_dict`` and plain settings
(``torch.load(path, weights_only=True)`` reads them): no pickle. Trained-policy packages ship the same
``state_dict`` as safetensors, the settings that rebuild the network (algorithm, network,
policy_kwargs) as its metadata (:meth:`SB3Policy.save_safetensors`). When the trainer normalized observations
(``VecNormalize``), the statistics travel with the network (:mod:`._normalization`) and are applied when it acts.
"""

from __future__ import annotations

from agentos import Policy
from agentos.devices import check_device
from agentos.plugin_api import use_torch_threads

from ._networks import (
    ACTIVATIONS,
    ALGORITHMS,
    algorithm_class,
    build,
    canonical_algorithm,
    check_action_space,
    check_policy_kwargs,
    choose_network,
)
from ._normalization import PREFIX, Normalization, normalize_options

__all__ = ["ACTIVATIONS", "ALGORITHMS", "Normalization", "SB3Policy", "algorithm_class", "canonical_algorithm",
           "check_policy_kwargs", "normalize_options"]

FORMAT = "agentos-sb3/1"


class SB3Policy(Policy):
    """Acts with a stable-baselines3 (or sb3-contrib) policy network.

    Settings: ``algorithm`` (``auto``: whatever the trainer or the checkpoint says; or one of
    :data:`ALGORITHMS`), ``network`` (``auto``: MultiInputPolicy for Dict observations, CnnPolicy for
    images, else MlpPolicy; or one of the algorithm's), ``policy_kwargs`` (a JSON object of allowlisted
    plain data), ``net_arch`` and ``activation`` (shortcuts for two of them), ``deterministic`` (true:
    the most likely action), ``device`` (auto|cpu|cuda|cuda:N). It does not learn while running.
    RecurrentPPO's LSTM state is carried across the steps of an episode; MaskablePPO takes its mask
    from the observation's ``action_mask`` when there is one.
    """

    checkpoint_suffix = ".pt"
    learns_while_running = False

    def __init__(
        self,
        observation_space=None,
        action_space=None,
        algorithm: str = "auto",
        network: str = "auto",
        policy_kwargs=None,
        net_arch: list | None = None,
        activation: str | None = None,
        deterministic: bool = True,
        device: str = "auto",
        seed: int | None = None,
    ):
        super().__init__(observation_space, action_space)
        self.algorithm_setting = None if str(algorithm).upper() == "AUTO" else canonical_algorithm(algorithm)
        if self.algorithm_setting is not None:
            check_action_space(self.algorithm_setting, action_space)
        if activation is not None and activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}, not {activation!r}")
        if net_arch is not None and not all(isinstance(n, int) and n > 0 for n in net_arch):
            raise ValueError(f"net_arch must be a list of positive layer sizes, not {net_arch!r}")
        kwargs = check_policy_kwargs(policy_kwargs)
        for key, value in (("net_arch", net_arch), ("activation_fn", activation)):
            if value is not None:
                if key in kwargs and kwargs[key] != value:
                    raise ValueError(f"{key} is set twice, differently (policy_kwargs and its own setting)")
                kwargs[key] = list(value) if key == "net_arch" else value
        self.kwargs_setting = dict(kwargs)
        self.kwargs = kwargs  # the network's plain policy_kwargs once there is one
        self.network_setting = None if str(network).lower() == "auto" else str(network)
        self.algorithm = self.algorithm_setting  # the network's algorithm once there is one
        self.network = None
        if self.algorithm_setting is not None:
            self.network = choose_network(self.algorithm_setting, observation_space, self.network_setting)
            check_policy_kwargs(kwargs, self.algorithm_setting, self.network)
        self.deterministic = bool(deterministic)
        self.device_setting = check_device(device)
        use_torch_threads()  # one CPU thread unless [agentos] threads, --threads or $OMP_NUM_THREADS say otherwise
        self.net = None  # an SB3 BasePolicy, built on first use, by the trainer or by load()
        self.normalization: Normalization | None = None  # VecNormalize's statistics, when the trainer used it
        self._discrete = type(action_space).__name__ == "Discrete"
        self._seed = seed
        self.reset()

    @property
    def net_arch(self):
        return self.kwargs.get("net_arch")

    @property
    def activation(self):
        return self.kwargs.get("activation_fn")

    @property
    def device(self):
        from agentos.devices import resolve_device

        return resolve_device(self.device_setting)

    def policy_kwargs(self) -> dict:
        """The network's kwargs as SB3 takes them (activation names become torch.nn classes)."""
        from ._networks import torch_kwargs

        return torch_kwargs(self.algorithm or "PPO", self.kwargs)

    def adopt_algorithm(self, algorithm: str, network: str | None = None, policy_kwargs=None) -> None:
        """Called by the trainer: the network's algorithm, and the trainer's ``network`` and
        ``policy_kwargs`` settings (an error where they conflict with this policy's)."""
        algorithm = canonical_algorithm(algorithm)
        if self.algorithm_setting is not None and self.algorithm_setting != algorithm:
            raise ValueError(f"the sb3 policy is set to {self.algorithm_setting} but the trainer runs {algorithm}")
        check_action_space(algorithm, self.action_space)
        if network is not None and self.network_setting is not None and network != self.network_setting:
            raise ValueError(f"the sb3 policy's network is {self.network_setting} but the trainer's is {network}")
        kwargs = dict(self.kwargs_setting)
        for key, value in check_policy_kwargs(policy_kwargs).items():
            if key in kwargs and kwargs[key] != value:
                raise ValueError(f"policy_kwargs {key} is {kwargs[key]} in the policy's settings, "
                                 f"{value} in the trainer's")
            kwargs[key] = value
        if "use_sde" in self.kwargs and algorithm == self.algorithm:  # given by the algorithm (adopt_extras)
            kwargs.setdefault("use_sde", self.kwargs["use_sde"])
        chosen = choose_network(algorithm, self.observation_space, self.network_setting or network)
        check_policy_kwargs(kwargs, algorithm, chosen)
        if self.net is not None and (self.algorithm, self.network, self.kwargs) != (algorithm, chosen, kwargs):
            self.net = None
        self.algorithm, self.network, self.kwargs = algorithm, chosen, kwargs

    def adopt_normalization(self, normalization: Normalization | None) -> None:
        """Called by the trainer: the ``VecNormalize`` statistics it trained with (None: none)."""
        self.normalization = normalization

    def adopt_extras(self, extras: dict) -> None:
        """Called by the trainer: kwargs the algorithm gave its network itself (``use_sde``)."""
        self.kwargs.update(check_policy_kwargs(extras))

    def build_net(self):
        """A new, untrained network for this policy's spaces and settings."""
        import torch

        if self.algorithm is None:
            self.algorithm = "PPO"
        if self.network is None:
            self.network = choose_network(self.algorithm, self.observation_space, self.network_setting)
        if self._seed is not None:
            torch.manual_seed(self._seed)
        net = build(self.algorithm, self.network, self.observation_space, self.action_space, self.kwargs)
        return net.to(self.device)

    def reset(self) -> None:
        """A new episode: RecurrentPPO's LSTM state starts afresh."""
        self._state, self._episode_start = None, True

    def decide(self, observation):
        import numpy as np

        if self.net is None:
            self.net = self.build_net()
        if self.normalization is not None:
            observation = self.normalization.observation(observation)
        extra = {}
        if self.algorithm == "RecurrentPPO":
            extra = {"state": self._state, "episode_start": np.array([self._episode_start])}
        elif self.algorithm == "MaskablePPO" and isinstance(observation, dict) and "action_mask" in observation:
            extra = {"action_masks": np.asarray(observation["action_mask"], dtype=bool)}
        action, state = self.net.predict(observation, deterministic=self.deterministic, **extra)
        if self.algorithm == "RecurrentPPO":
            self._state, self._episode_start = state, False
        return int(action) if self._discrete else action

    def decide_batch(self, observations):
        if self.algorithm == "RecurrentPPO":
            raise ValueError("a RecurrentPPO policy plays one environment at a time (its LSTM state is per episode)")
        return [self.decide(observation) for observation in observations]

    def seed(self, seed: int | None) -> None:
        self._seed = seed
        if seed is not None:
            import torch

            torch.manual_seed(seed)

    def _architecture(self) -> dict:
        return {"format": FORMAT, "algorithm": self.algorithm, "network": self.network, "policy_kwargs": self.kwargs,
                "net_arch": self.net_arch, "activation": self.activation}

    def _state_dict(self) -> dict:
        if self.net is None:
            self.net = self.build_net()
        return {k: v.detach().cpu().contiguous() for k, v in _unique(self.net.state_dict()).items()}

    def save(self, path: str) -> None:
        import torch

        extra = {} if self.normalization is None else {"normalization": self.normalization.to_saved()}
        torch.save({**self._architecture(), "state_dict": self._state_dict(), **extra}, path)

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
        normalization = data.get("normalization")
        if normalization is not None:
            normalization = Normalization.from_saved(normalization, self._observation_shape(), path)
        self._adopt_saved(path, data, data["state_dict"], normalization)

    def _observation_shape(self):
        return getattr(self.observation_space, "shape", None)

    def save_safetensors(self, path: str) -> None:
        """The network's ``state_dict`` as safetensors, the settings that rebuild it as string metadata."""
        import json

        from safetensors.torch import save_file

        state = self._state_dict()
        metadata = {k: json.dumps(v) for k, v in self._architecture().items()}
        if self.normalization is not None:
            tensors, metadata["normalization"] = self.normalization.to_safetensors()
            state.update(tensors)
            metadata["agentos.exact"] = json.dumps(sorted(tensors))  # agentos publish --quantize keeps them exact
        save_file(state, path, metadata=metadata)

    def load_safetensors(self, path: str) -> None:
        """Read what :meth:`save_safetensors` wrote: the metadata's architecture must fit this policy's
        settings, and every tensor's name, dtype and shape the network it rebuilds (finite values only)."""
        import json

        from safetensors import safe_open

        with safe_open(path, framework="pt") as f:
            meta = f.metadata() or {}
            try:
                settings = {k: json.loads(meta[k]) for k in ("format", "algorithm", "net_arch", "activation")}
                settings.update({k: json.loads(meta[k]) for k in ("network", "policy_kwargs") if k in meta})
            except (KeyError, ValueError):
                raise ValueError(f"{path} is not an sb3 policy checkpoint (its metadata lacks the settings)") from None
            state = {name: f.get_tensor(name) for name in f.keys()}
        saved = {name: state.pop(name) for name in list(state) if name.startswith(PREFIX)}
        normalization = None
        if saved or "normalization" in meta:
            normalization = Normalization.from_safetensors(saved, meta.get("normalization", ""),
                                                           self._observation_shape(), path)
        self._adopt_saved(path, settings, state, normalization)

    def _adopt_saved(self, path: str, settings: dict, state: dict, normalization: Normalization | None = None) -> None:
        """Check a checkpoint's settings (data from a file: allowlisted) and tensors, then act with them."""
        import torch

        algorithm, net_arch, activation = settings["algorithm"], settings.get("net_arch"), settings.get("activation")
        if settings["format"] != FORMAT or algorithm not in ALGORITHMS:
            raise ValueError(f"{path} is not an sb3 policy checkpoint")
        if "policy_kwargs" in settings:  # net_arch and activation repeat two of them, checked with them
            net_arch = activation = None
        if activation is not None and activation not in ACTIVATIONS:
            raise ValueError(f"{path}: activation {str(activation)[:20]!r} is not one of {', '.join(ACTIVATIONS)}")
        if net_arch is not None and not (isinstance(net_arch, list) and len(net_arch) <= 16
                                         and all(isinstance(n, int) and 0 < n <= 65536 for n in net_arch)):
            raise ValueError(f"{path}: net_arch {str(net_arch)[:40]} is not a short list of layer sizes")
        if self.algorithm_setting is not None and algorithm != self.algorithm_setting:
            raise ValueError(f"{path} holds a {algorithm} network; this policy is set to {self.algorithm_setting}")
        network = settings.get("network") or "MlpPolicy"  # checkpoints before 1.3 hold MlpPolicy networks
        try:
            check_action_space(algorithm, self.action_space)
            network = choose_network(algorithm, self.observation_space, str(network))
            kwargs = settings.get("policy_kwargs")
            if kwargs is None:  # before 1.3: net_arch and activation only
                kwargs = {k: v for k, v in (("net_arch", net_arch), ("activation_fn", activation)) if v is not None}
            kwargs = check_policy_kwargs(kwargs, algorithm, network)
        except ValueError as error:
            raise ValueError(f"{path}: {error}") from None
        if self.network_setting is not None and choose_network(algorithm, None, self.network_setting) != network:
            raise ValueError(f"{path} holds a {network} network; this policy's network is {self.network_setting}")
        for key, value in self.kwargs_setting.items():
            if kwargs.get(key) != value:
                shown = "activation" if key == "activation_fn" else key
                raise ValueError(f"{path} holds a network with {shown} {kwargs.get(key)}; this policy has {value}")
        self.algorithm, self.network, self.kwargs = algorithm, network, kwargs
        net = self.build_net()
        expected = _unique(net.state_dict())
        if set(state) != set(expected):
            raise ValueError(f"{path} holds tensors {sorted(state)[:3]}..., not this network's")
        for name, tensor in state.items():
            if tensor.dtype != expected[name].dtype or tensor.shape != expected[name].shape:
                raise ValueError(f"{path}: tensor {name} is {tensor.dtype} {tuple(tensor.shape)}, expected "
                                 f"{expected[name].dtype} {tuple(expected[name].shape)}")
            if tensor.is_floating_point() and not torch.isfinite(tensor).all():
                raise ValueError(f"{path}: tensor {name} holds non-finite values")
        net.load_state_dict(state, strict=False)  # the names left out are aliases of tensors in state
        net.set_training_mode(False)
        self.net = net
        self.normalization = normalization
        self.reset()


def _unique(state: dict) -> dict:
    """``state`` without the names of tensors it holds already (CnnPolicy's shared features extractor):
    safetensors keeps each tensor once."""
    seen, out = set(), {}
    for name, tensor in state.items():
        key = (tensor.data_ptr(), tensor.dtype, tuple(tensor.shape), tensor.stride())
        if tensor.numel() and key in seen:
            continue
        seen.add(key)
        out[name] = tensor
    return out

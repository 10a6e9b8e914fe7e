"""Which algorithms, which network for which observation space, and ``policy_kwargs`` as checked plain data.

``policy_kwargs`` come from agent.ini and from checkpoints, so they are data: a JSON object whose keys
are in :data:`KWARGS` and whose values are numbers, booleans, lists of layer sizes or a NAME from
:data:`ACTIVATIONS` (mapped to a ``torch.nn`` class here). Nothing is imported by a name they hold.
"""

from __future__ import annotations

import inspect
import json
import math

__all__ = ["ACTIVATIONS", "ALGORITHMS", "KWARGS", "algorithm_class", "check_policy_kwargs", "choose_network",
           "torch_kwargs"]

#: algorithm -> (module, action spaces it supports)
ALGORITHMS = {
    "PPO": ("stable_baselines3", ("Box", "Discrete", "MultiDiscrete", "MultiBinary")),
    "A2C": ("stable_baselines3", ("Box", "Discrete", "MultiDiscrete", "MultiBinary")),
    "DQN": ("stable_baselines3", ("Discrete",)),
    "SAC": ("stable_baselines3", ("Box",)),
    "TD3": ("stable_baselines3", ("Box",)),
    "DDPG": ("stable_baselines3", ("Box",)),
    "QRDQN": ("sb3_contrib", ("Discrete",)),
    "TQC": ("sb3_contrib", ("Box",)),
    "TRPO": ("sb3_contrib", ("Box", "Discrete", "MultiDiscrete", "MultiBinary")),
    "RecurrentPPO": ("sb3_contrib", ("Box", "Discrete", "MultiDiscrete", "MultiBinary")),
    "MaskablePPO": ("sb3_contrib", ("Discrete", "MultiDiscrete", "MultiBinary")),
    "ARS": ("sb3_contrib", ("Box", "Discrete")),
    "CrossQ": ("sb3_contrib", ("Box",)),
}
_BY_UPPER = {name.upper(): name for name in ALGORITHMS} | {"QR-DQN": "QRDQN"}
#: what the algorithm's constructor puts into the network's kwargs when it builds it itself
_ALGORITHM_DEFAULTS = {"DDPG": {"n_critics": 1}}

ACTIVATIONS = {"tanh": "Tanh", "relu": "ReLU", "elu": "ELU", "leaky_relu": "LeakyReLU", "gelu": "GELU",
               "silu": "SiLU", "selu": "SELU", "sigmoid": "Sigmoid"}
_LAYERS = "a list of at most 16 layer sizes (1..65536)"
#: key -> what its value must be
KWARGS = {
    "net_arch": f"{_LAYERS}, or an object of such lists under pi, vf, qf",
    "activation_fn": f"one of {', '.join(ACTIVATIONS)}",
    "ortho_init": "true or false", "normalize_images": "true or false", "share_features_extractor": "true or false",
    "squash_output": "true or false", "use_sde": "true or false", "full_std": "true or false",
    "use_expln": "true or false", "shared_lstm": "true or false", "enable_critic_lstm": "true or false",
    "with_bias": "true or false", "batch_norm": "true or false",
    "log_std_init": "a finite number", "batch_norm_momentum": "a finite number",
    "n_quantiles": "a whole number 1..1000", "n_critics": "a whole number 1..10",
    "lstm_hidden_size": "a whole number 1..65536", "n_lstm_layers": "a whole number 1..16",
    "features_extractor_kwargs": 'an object {"features_dim": 1..65536}',
}
_INTS = {"n_quantiles": 1000, "n_critics": 10, "lstm_hidden_size": 65536, "n_lstm_layers": 16}


def canonical_algorithm(name) -> str:
    """``sac`` -> ``SAC``, ``recurrentppo`` -> ``RecurrentPPO``; ValueError for an unknown name."""
    found = _BY_UPPER.get(str(name).upper())
    if found is None:
        raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}, not {str(name)[:40]!r} "
                         "(HER is not offered: it needs goal-conditioned environments)")
    return found


def algorithm_class(name: str):
    import importlib

    module, _ = ALGORITHMS[name]
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError:
        raise ValueError(f"algorithm {name} needs sb3-contrib: pip install sb3-contrib") from None


def check_action_space(algorithm: str, action_space) -> None:
    kind = type(action_space).__name__
    if action_space is not None and kind not in ALGORITHMS[algorithm][1]:
        raise ValueError(f"{algorithm} acts in {', '.join(ALGORITHMS[algorithm][1])} action spaces, "
                         f"not this environment's {kind}")


def choose_network(algorithm: str, observation_space, network: str | None) -> str:
    """The SB3 policy alias: ``network`` when set (checked against the algorithm's), else from the space:
    MultiInputPolicy for Dict observations, CnnPolicy for images (uint8 HxWxC), else MlpPolicy."""
    aliases = algorithm_class(algorithm).policy_aliases
    recurrent = algorithm == "RecurrentPPO"
    if network is None:
        from stable_baselines3.common.preprocessing import is_image_space

        kind = type(observation_space).__name__
        image = kind == "Box" and is_image_space(observation_space)
        base = "MultiInput" if kind == "Dict" else "Cnn" if image else "Mlp"
        network = base + ("LstmPolicy" if recurrent else "Policy")
        if network not in aliases:
            raise ValueError(f"{algorithm} has no {network} for this observation space (it has {', '.join(aliases)})")
    elif network not in aliases:
        if recurrent and network.endswith("Policy") and network[:-6] + "LstmPolicy" in aliases:
            return network[:-6] + "LstmPolicy"
        raise ValueError(f"network must be one of {', '.join(aliases)} for {algorithm}, not {str(network)[:40]!r}")
    return network


def _layers(value) -> bool:
    return (isinstance(value, list) and len(value) <= 16
            and all(type(n) is int and 0 < n <= 65536 for n in value))


def _valid(key: str, value) -> bool:
    if key == "net_arch":
        return _layers(value) or (isinstance(value, dict) and 0 < len(value) <= 3
                                  and all(k in ("pi", "vf", "qf") and _layers(v) for k, v in value.items()))
    if key == "activation_fn":
        return isinstance(value, str) and value in ACTIVATIONS
    if key in _INTS:
        return type(value) is int and 1 <= value <= _INTS[key]
    if key in ("log_std_init", "batch_norm_momentum"):
        return type(value) in (int, float) and math.isfinite(value)
    if key == "features_extractor_kwargs":
        return (isinstance(value, dict) and set(value) == {"features_dim"} and type(value["features_dim"]) is int
                and 0 < value["features_dim"] <= 65536)
    return type(value) is bool


def check_policy_kwargs(value, algorithm: str | None = None, network: str | None = None) -> dict:
    """``value`` (a dict, or its JSON text) checked against the allowlist; with ``algorithm`` and
    ``network``, also against what that network's constructor accepts. Returns a new dict."""
    if isinstance(value, str):
        try:
            value = json.loads(value, parse_constant=lambda c: math.nan)
        except ValueError:
            raise ValueError(f"policy_kwargs must be a JSON object, not {value[:40]!r}") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"policy_kwargs must be a JSON object, not {str(value)[:40]!r}")
    accepted = None
    if algorithm is not None and network is not None:
        policy_class = algorithm_class(algorithm).policy_aliases[network]
        accepted = set(inspect.signature(policy_class.__init__).parameters)
    for key, item in value.items():
        if key not in KWARGS:
            raise ValueError(f"policy_kwargs has no key {str(key)[:40]!r} (accepted: {', '.join(KWARGS)})")
        if not _valid(key, item):
            raise ValueError(f"policy_kwargs {key} must be {KWARGS[key]}, not {str(item)[:40]!r}")
        if accepted is not None and key not in accepted:
            raise ValueError(f"policy_kwargs {key!r} does not fit {algorithm}'s {network} "
                             f"(it takes {', '.join(sorted(accepted & set(KWARGS)))})")
    return json.loads(json.dumps(value))


def torch_kwargs(algorithm: str, kwargs: dict) -> dict:
    """The checked plain kwargs as SB3 takes them: the activation NAME becomes its ``torch.nn`` class."""
    import torch

    out = {**_ALGORITHM_DEFAULTS.get(algorithm, {}), **kwargs}
    if "activation_fn" in out:
        out["activation_fn"] = getattr(torch.nn, ACTIVATIONS[out["activation_fn"]])
    return out


def build(algorithm: str, network: str, observation_space, action_space, kwargs: dict):
    """A new network of ``algorithm``'s ``network`` class for these spaces."""
    policy_class = algorithm_class(algorithm).policy_aliases[network]
    parameters = inspect.signature(policy_class.__init__).parameters
    args = (as_trained(observation_space), action_space) + ((lambda _: 0.0,) if "lr_schedule" in parameters else ())
    return policy_class(*args, **torch_kwargs(algorithm, kwargs))


def as_trained(space):
    """The observation space as SB3 trains on it: channel-last images transposed (as ``VecTransposeImage``
    does); the network's ``predict`` transposes observations likewise."""
    from gymnasium import spaces
    from stable_baselines3.common.preprocessing import is_image_space, is_image_space_channels_first
    from stable_baselines3.common.vec_env import VecTransposeImage

    def channel_last(s):
        return isinstance(s, spaces.Box) and is_image_space(s) and not is_image_space_channels_first(s)

    if isinstance(space, spaces.Dict) and any(channel_last(s) for s in space.spaces.values()):
        return spaces.Dict({k: VecTransposeImage.transpose_space(s, k) if channel_last(s) else s
                            for k, s in space.spaces.items()})
    return VecTransposeImage.transpose_space(space) if channel_last(space) else space

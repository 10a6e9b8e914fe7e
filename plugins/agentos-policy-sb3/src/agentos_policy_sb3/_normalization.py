"""SB3's ``VecNormalize`` statistics as plain data: saved with the policy, applied when it acts.

The ``sb3`` trainer trains with ``VecNormalize`` when its ``normalize`` setting says so and hands the
statistics to the policy (:meth:`Normalization.from_vec_normalize`); the policy normalizes each observation
as ``VecNormalize`` does, and its checkpoints hold the running means, variances and counts as tensors and
the options as plain values (never a pickled ``VecNormalize``), checked when read.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

__all__ = ["Normalization", "normalize_options"]

_OPTIONS = {"norm_obs": bool, "norm_reward": bool, "clip_obs": float, "clip_reward": float, "epsilon": float,
            "gamma": float}
_ARRAYS = ("obs_mean", "obs_var", "ret_mean", "ret_var")
_COUNTS = ("obs_count", "ret_count")
PREFIX = "vecnormalize."  # names of its tensors in a safetensors file beside the network's


def normalize_options(value) -> dict | None:
    """The ``normalize`` setting: false/none (off), true (observations and rewards), or a JSON object of
    ``norm_obs``, ``norm_reward`` (booleans), ``clip_obs``, ``clip_reward`` (positive numbers)."""
    if value is None or value is False:
        return None
    if value is True:
        return {}
    if isinstance(value, str):
        if value.strip().lower() in ("true", "false"):
            return normalize_options(value.strip().lower() == "true")
        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError(f"normalize must be true, false or a JSON object, not {value[:40]!r}") from None
    if not isinstance(value, dict):
        raise ValueError(f"normalize must be true, false or a JSON object, not {str(value)[:40]!r}")
    for key, item in value.items():
        if key in ("norm_obs", "norm_reward"):
            ok = type(item) is bool
        elif key in ("clip_obs", "clip_reward"):
            ok = type(item) in (int, float) and math.isfinite(item) and item > 0
        else:
            raise ValueError(f"normalize has no option {str(key)[:40]!r} "
                             "(norm_obs, norm_reward, clip_obs, clip_reward)")
        if not ok:
            wanted = "true or false" if key.startswith("norm") else "a positive number"
            raise ValueError(f"normalize {key} must be {wanted}")
    return dict(value)


@dataclass
class Normalization:
    """VecNormalize's options and running statistics (numpy arrays for the means and variances)."""

    options: dict
    arrays: dict
    counts: dict

    @classmethod
    def from_vec_normalize(cls, vec) -> Normalization:
        import numpy as np

        if isinstance(vec.obs_rms, dict):
            raise ValueError("normalize needs a Box observation space (Dict observations are not supported)")
        options = {k: _OPTIONS[k](getattr(vec, k)) for k in _OPTIONS}
        arrays = {"obs_mean": vec.obs_rms.mean, "obs_var": vec.obs_rms.var,
                  "ret_mean": vec.ret_rms.mean, "ret_var": vec.ret_rms.var}
        arrays = {k: np.array(v, dtype=np.float64).reshape(np.shape(v)) for k, v in arrays.items()}
        return cls(options, arrays, {"obs_count": float(vec.obs_rms.count), "ret_count": float(vec.ret_rms.count)})

    def restore_into(self, vec) -> None:
        """Continue from these statistics (a second train, or training on from a checkpoint)."""
        if vec.obs_rms.mean.shape != self.arrays["obs_mean"].shape:
            raise ValueError(f"the saved normalization is for observations of shape {self.arrays['obs_mean'].shape}, "
                             f"not {vec.obs_rms.mean.shape}")
        vec.obs_rms.mean, vec.obs_rms.var = self.arrays["obs_mean"].copy(), self.arrays["obs_var"].copy()
        vec.ret_rms.mean, vec.ret_rms.var = self.arrays["ret_mean"].copy(), self.arrays["ret_var"].copy()
        vec.obs_rms.count, vec.ret_rms.count = self.counts["obs_count"], self.counts["ret_count"]

    def observation(self, observation):
        """``observation`` as the network saw it in training (VecNormalize's ``normalize_obs``)."""
        import numpy as np

        if not self.options["norm_obs"]:
            return observation
        mean, var = self.arrays["obs_mean"], self.arrays["obs_var"]
        clip = self.options["clip_obs"]
        scaled = (np.asarray(observation, dtype=np.float64) - mean) / np.sqrt(var + self.options["epsilon"])
        return np.clip(scaled, -clip, clip).astype(np.float32)

    def to_saved(self) -> dict:
        """Plain values and float64 tensors (``torch.load(weights_only=True)`` and safetensors read them)."""
        import torch

        return {**self.options, **self.counts, **{k: torch.from_numpy(v.copy()) for k, v in self.arrays.items()}}

    @classmethod
    def from_saved(cls, data, observation_shape, where: str) -> Normalization:
        """Check what a checkpoint holds (data from a file) and rebuild: every option of the right type, finite
        non-negative counts and variances, means and variances of the observation's shape."""
        import numpy as np

        if not isinstance(data, dict) or set(data) != set(_OPTIONS) | set(_ARRAYS) | set(_COUNTS):
            raise ValueError(f"{where}: its normalization statistics are malformed")
        options = {}
        for key, kind in _OPTIONS.items():
            value = data[key]
            if (kind is bool and type(value) is not bool) or (kind is float and not (
                    type(value) in (int, float) and math.isfinite(value) and value >= 0)):
                raise ValueError(f"{where}: normalization option {key} is {str(value)[:20]!r}")
            options[key] = kind(value)
        counts = {}
        for key in _COUNTS:
            if type(data[key]) not in (int, float) or not math.isfinite(data[key]) or data[key] < 0:
                raise ValueError(f"{where}: normalization {key} is {str(data[key])[:20]!r}")
            counts[key] = float(data[key])
        arrays = {}
        for key in _ARRAYS:
            tensor = data[key]
            value = tensor.detach().cpu().numpy() if hasattr(tensor, "detach") else None
            if key.startswith("obs"):
                expected = tuple(observation_shape) if observation_shape is not None else arrays.get(
                    "obs_mean", value if value is not None else np.zeros(())).shape
            else:
                expected = ()
            if value is None or value.dtype != np.float64 or value.shape != expected or not np.isfinite(value).all() \
                    or (key.endswith("var") and (value < 0).any()):
                raise ValueError(f"{where}: normalization {key} is not a finite float64 array of shape {expected}")
            arrays[key] = value.copy()
        return cls(options, arrays, counts)

    def to_safetensors(self) -> tuple[dict, str]:
        """(tensors named ``vecnormalize.*``, the options and counts as JSON metadata)."""
        saved = self.to_saved()
        tensors = {PREFIX + k: saved.pop(k) for k in _ARRAYS}
        return tensors, json.dumps(saved, sort_keys=True)

    @classmethod
    def from_safetensors(cls, tensors: dict, metadata: str, observation_shape, where: str) -> Normalization:
        try:
            plain = json.loads(metadata)
        except ValueError:
            raise ValueError(f"{where}: its normalization metadata is not JSON") from None
        if not isinstance(plain, dict):
            raise ValueError(f"{where}: its normalization statistics are malformed")
        return cls.from_saved({**plain, **{k[len(PREFIX):]: v for k, v in tensors.items()}}, observation_shape, where)

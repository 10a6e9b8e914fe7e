"""Action masks for MaskablePPO: from the environment's ``action_masks()``, else its observation's or
info's ``action_mask`` (the convention of PettingZoo's classic games)."""

from __future__ import annotations

__all__ = ["masked"]


def masked(env):
    """``env`` with an ``action_masks()`` method, as sb3-contrib's MaskablePPO asks of it."""
    import gymnasium
    import numpy as np

    try:
        env.get_wrapper_attr("action_masks")
        return env  # the environment has its own
    except AttributeError:
        pass

    class ActionMasks(gymnasium.Wrapper):
        def __init__(self, inner):
            super().__init__(inner)
            self._mask = None

        def _remember(self, observation, info):
            mask = observation.get("action_mask") if isinstance(observation, dict) else None
            mask = info.get("action_mask", mask) if isinstance(info, dict) else mask
            if mask is None:
                raise ValueError("MaskablePPO needs action masks: this environment has no action_masks() method "
                                 "and no action_mask in its observation or info")
            self._mask = np.asarray(mask, dtype=bool)

        def reset(self, **kwargs):
            observation, info = self.env.reset(**kwargs)
            self._remember(observation, info)
            return observation, info

        def step(self, action):
            observation, reward, terminated, truncated, info = self.env.step(action)
            self._remember(observation, info)
            return observation, reward, terminated, truncated, info

        def action_masks(self):
            return self._mask

    return ActionMasks(env)

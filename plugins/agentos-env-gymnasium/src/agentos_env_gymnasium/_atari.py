"""The standard Atari wrappers as settings (SB3 / rl-zoo's ``AtariWrapper``, frame stacking apart).

Built from Gymnasium's own wrappers: ``AtariPreprocessing`` (no-op starts, frame skipping with max-pooling,
resizing, grayscale, episode end on a life lost), a sign clip of the reward, and ``FrameStackObservation``.
``atari_wrappers = true`` applies them with SB3's defaults; any single setting applies them too, with the
defaults for the rest; ``frame_stack`` stacks that many frames (none unless given, as in SB3).
"""

from __future__ import annotations

#: Setting -> (SB3 AtariWrapper's default, type, smallest, largest); ``atari_wrappers`` switches them on.
ATARI_SETTINGS = {
    "atari_wrappers": (True, bool, None, None),
    "noop_max": (30, int, 0, 1000),
    "frame_skip": (4, int, 1, 64),
    "screen_size": (84, int, 8, 1024),
    "terminal_on_life_loss": (True, bool, None, None),
    "grayscale": (True, bool, None, None),
    "clip_reward": (True, bool, None, None),
    "frame_stack": (1, int, 1, 64),
}


def checked(settings: dict) -> dict:
    """Every Atari setting with its default filled in, each checked (a ValueError names the bad one)."""
    out = {}
    for key, (default, kind, low, high) in ATARI_SETTINGS.items():
        value = settings.get(key, default)
        if type(value) is not kind:  # bool is not an int here, nor an int a bool
            raise ValueError(f"Atari setting {key} must be {kind.__name__}, not {value!r}")
        if low is not None and not low <= value <= high:
            raise ValueError(f"Atari setting {key} must be between {low} and {high}, not {value!r}")
        out[key] = value
    return out


def wrap_atari(env, settings: dict):
    """``env`` (made with ``frameskip=1``) inside the standard wrappers that ``settings`` ask for."""
    from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation, TransformReward

    s = checked(settings)
    try:
        env = AtariPreprocessing(env, noop_max=s["noop_max"], frame_skip=s["frame_skip"],
                                 screen_size=s["screen_size"], terminal_on_life_loss=s["terminal_on_life_loss"],
                                 grayscale_obs=s["grayscale"])
    except Exception as exc:  # gymnasium's DependencyNotInstalled for opencv
        raise ValueError(f"the Atari wrappers need agentos-env-gymnasium's atari extra: {exc}") from None
    if s["clip_reward"]:
        env = TransformReward(env, sign)
    if s["frame_stack"] > 1:
        env = FrameStackObservation(env, s["frame_stack"])
    return env


def sign(reward) -> float:
    """SB3's reward clipping: -1, 0 or 1 (a module function: a copy made from ``env.spec`` pickles)."""
    return float((reward > 0) - (reward < 0))

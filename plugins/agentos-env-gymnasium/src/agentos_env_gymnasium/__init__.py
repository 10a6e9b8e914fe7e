"""Any registered Gymnasium environment, by id, as an AgentOS environment.

``id`` names it (``CartPole-v1`` by default; ``module:Env-v0`` imports ``module`` first, as
``gymnasium.make`` does) and is the environment's *task* (``make.task_setting``): results records,
model cards and leaderboards name it, and a trained policy plays the id it was trained on;
``max_episode_steps`` overrides its time limit; Atari ids (``ALE/Pong-v5``) take the standard Atari
wrappers as settings (:mod:`._atari`); every other setting in agent.ini goes to ``gymnasium.make`` as a
keyword argument (for instance ``render_mode``, or an environment's own options such as
``sutton_barto_reward`` for CartPole).

The task families beyond classic control and toy text need this package's extras: ``box2d``,
``mujoco`` and ``atari`` (``agentos install environment LunarLander-v3`` picks the right one).
"""

from __future__ import annotations

import os

from ._atari import ATARI_SETTINGS, checked, wrap_atari

__all__ = ["ATARI_SETTINGS", "make"]

#: The extra of this package that a family's environments need, by the start of their entry point.
_EXTRAS = {"gymnasium.envs.box2d": "box2d", "gymnasium.envs.mujoco": "mujoco", "ale_py": "atari"}


def make(id: str = "CartPole-v1", max_episode_steps: int | None = None, **kwargs):  # noqa: A002 - gymnasium's name
    """``gymnasium.make(id, max_episode_steps=..., **kwargs)`` with a clear error for unknown ids
    and for a family whose extra is not installed; Atari wrappers when asked (:func:`wrap_atari`)."""
    import gymnasium

    atari = {key: kwargs.pop(key) for key in list(kwargs) if key in ATARI_SETTINGS}
    spec = _spec(gymnasium, id)
    extra = _extra(spec)
    if atari and extra != "atari":
        raise ValueError(f"the Atari settings ({', '.join(sorted(atari))}) apply to ALE ids only, not {id!r}")
    if max_episode_steps is not None:
        kwargs["max_episode_steps"] = int(max_episode_steps)
    if extra == "mujoco" and kwargs.get("render_mode") and not os.environ.get("DISPLAY"):
        os.environ.setdefault("MUJOCO_GL", "egl")  # headless: render offscreen (a replay on a server)
    if kwargs.get("render_mode") == "rgb_array" and not os.environ.get("DISPLAY"):
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # pygame draws frames without a window (nor a warning)
    wrapped = bool(atari) and checked(atari)["atari_wrappers"]  # every setting checked before anything is made
    if wrapped:
        if kwargs.get("frameskip", 1) != 1:
            raise ValueError("frameskip must be 1 under the Atari wrappers: set frame_skip instead")
        kwargs["frameskip"] = 1  # the wrappers skip frames themselves (frame_skip)
    try:
        env = gymnasium.make(spec, **kwargs)
    except gymnasium.error.DependencyNotInstalled as exc:
        raise ValueError(_missing(id, extra, exc)) from None
    return wrap_atari(env, atari) if wrapped else env


def _spec(gymnasium, id: str):  # noqa: A002
    try:
        return gymnasium.spec(id)
    except gymnasium.error.Error as exc:
        if not id.startswith("ALE/") and "NoFrameskip" not in id and "-ram" not in id:
            raise ValueError(f"unknown Gymnasium environment {id!r}: {exc}") from None
        error = exc
    try:  # Atari ids are registered by ale_py, once imported
        import ale_py
    except ImportError:
        raise ValueError(_missing(id, "atari", "ale-py is not installed")) from None
    gymnasium.register_envs(ale_py)
    try:
        return gymnasium.spec(id)
    except gymnasium.error.Error:
        raise ValueError(f"unknown Gymnasium environment {id!r}: {error}") from None


def _extra(spec) -> str | None:
    entry = spec.entry_point if isinstance(spec.entry_point, str) else ""
    return next((extra for start, extra in _EXTRAS.items() if entry.startswith(start)), None)


def _missing(id: str, extra: str | None, exc) -> str:  # noqa: A002
    if extra is None:
        return f"{id} needs a package that is not installed: {exc}"
    return (f"{id} needs agentos-env-gymnasium's {extra} extra: agentos install environment {id} "
            f"(or gymnasium[{extra}]); {str(exc).splitlines()[0]}")


make.task_setting = "id"  # the setting that names the task (docs/results.md, "Tasks")

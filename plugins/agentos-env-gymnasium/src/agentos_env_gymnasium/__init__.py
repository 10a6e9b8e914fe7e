"""Any registered Gymnasium environment, by id, as an AgentOS environment.

``id`` names it (``CartPole-v1`` by default; ``module:Env-v0`` imports ``module`` first, as
``gymnasium.make`` does) and is the environment's *task* (``make.task_setting``): results records,
model cards and leaderboards name it, and a trained policy plays the id it was trained on;
``max_episode_steps`` overrides its time limit; every other setting in agent.ini goes to
``gymnasium.make`` as a keyword argument (for instance ``render_mode``, or an environment's own
options such as ``sutton_barto_reward`` for CartPole).
"""

from __future__ import annotations

__all__ = ["make"]


def make(id: str = "CartPole-v1", max_episode_steps: int | None = None, **kwargs):  # noqa: A002 - gymnasium's name
    """``gymnasium.make(id, max_episode_steps=..., **kwargs)`` with a clear error for unknown ids."""
    import gymnasium

    try:
        spec = gymnasium.spec(id)
    except gymnasium.error.Error as exc:
        raise ValueError(f"unknown Gymnasium environment {id!r}: {exc}") from None
    if max_episode_steps is not None:
        kwargs["max_episode_steps"] = int(max_episode_steps)
    return gymnasium.make(spec, **kwargs)


make.task_setting = "id"  # the setting that names the task (docs/results.md, "Tasks")

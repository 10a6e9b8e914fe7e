"""The 2048 sliding-tile game as a Gymnasium environment.

Importing the package registers ``agentos/Game2048-v0`` with Gymnasium, so
``gymnasium.make("agentos_env_2048:agentos/Game2048-v0")`` works, and
``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")`` gives the batched
:class:`~agentos_env_2048.vector.Game2048VectorEnv` (numba-compiled; imported only then). The board
encoding and the compiled kernels that learners build on are the public module
:mod:`agentos_env_2048.kernels`.
"""

from gymnasium.envs.registration import register, registry

from agentos_env_2048.env import ACTION_NAMES, DOWN, LEFT, RIGHT, UP, Game2048Env

__all__ = ["ACTION_NAMES", "DOWN", "ENV_ID", "LEFT", "RIGHT", "UP", "Game2048Env"]


ENV_ID = "agentos/Game2048-v0"

if ENV_ID not in registry:
    register(
        id=ENV_ID,
        entry_point="agentos_env_2048.env:Game2048Env",
        vector_entry_point="agentos_env_2048.vector:Game2048VectorEnv",
    )


def __getattr__(name: str):
    if name == "__version__":  # the installed distribution's (a constant here went stale)
        from importlib.metadata import version

        return version("agentos-env-2048")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

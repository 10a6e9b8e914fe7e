"""The public TD learners of ``agentos-trainer-td``: the compiled loops its trainer runs, for benchmarks
and third-party drivers.

This module is a public API of ``agentos-trainer-td`` (added in 1.5.3; its names change only with a
minor version). Importing it imports numpy and numba; boards are those of :mod:`agentos_env_2048.kernels`,
networks those of :mod:`agentos_policy_ntuple.network`.

Learners (compiled by numba without the GIL, so threads run them in parallel)
    :func:`train_games` plays and learns whole games with online TD(0) on rng slot 0 of ``states`` until
    ``games`` were played or ``budget`` moves made → ``(moves, games played)``, moves -1 once the weights
    diverged; :func:`train_episodes` is the episode learner with every option (TD(λ), restarts, TC,
    promotion) over weight rows.
Weight rows
    :func:`pack` makes the rows ``train_episodes`` takes from the policy's weights and TC's sums (the
    weights themselves as one column without TC); :func:`unpack` writes them back; :func:`learner_layout`
    is the layout argument ``train_episodes`` takes for a policy.
Threads
    :func:`thread_rng` gives a thread its own rng array; :func:`free_running` runs a chunk function on
    several threads and yields each chunk's result as it ends (how the trainer trains with ``threads``).
"""

from __future__ import annotations

from agentos_trainer_td._episodes import train_episodes
from agentos_trainer_td._parallel import free_running, thread_rng
from agentos_trainer_td._rows import learner_layout, pack, unpack
from agentos_trainer_td._td import train_games

__all__ = ["free_running", "learner_layout", "pack", "thread_rng", "train_episodes", "train_games", "unpack"]

"""Lock-free TD on several cores: each thread plays its own games, one shared weight array.

Each of ``threads`` numba threads (``prange``) plays games (a move budget each, so that threads
finish a call together) on its own rng slot -- online TD(0) with
:func:`agentos_trainer_td._td.play_and_learn`, or the episode learner (TD(λ), restarts, stages,
TC) with :func:`agentos_trainer_td._episodes.play_episode` -- and writes its updates straight into
the shared float32 weights, with no lock (Hogwild!, Recht et al. 2011; Jaśkowski 2018 and
ziap/2048-tdl train 2048 so).

How updates race, and why that is safe: an update is a read-modify-write of 32 of the network's
67 M weights (4x6-tuples).  When two threads touch the same weight at once, one of the two steps
can be lost, or a thread can value a board with a weight another thread is changing; an aligned
32-bit store is atomic on the CPUs numba targets, so a weight is always one of the values some
thread wrote (never torn), and the loss is one small TD step out of millions.  Collisions are rare
(the positions of different games overlap little after their first moves), so learning follows the
single-thread dynamics closely -- but which step wins depends on thread timing, so parallel runs
are not bit-reproducible from their seed.  TC's two accumulators per weight race the same way:
a lost increment of ``E`` or ``A`` shifts one weight's rate ``|E|/A`` a little; a race can make
``|E|`` exceed ``A`` (which one thread alone never does), so the learner clamps the rate to 1 and
no race can make a step larger than alpha's.
"""

from __future__ import annotations

import os

import numpy as np

from agentos_trainer_td import _packed
from agentos_trainer_td._episodes import PATH, play_episode
from agentos_trainer_td._td import play_and_learn


def _compile(function):
    if os.environ.get("AGENTOS_2048_PURE"):
        return function
    import numba

    try:
        return numba.njit(parallel=True, nogil=True, cache=True)(function)
    except RuntimeError:  # no writable cache locator for this install
        return numba.njit(parallel=True, nogil=True)(function)


def use_threads(threads: int) -> int:
    """Run parallel kernels on ``threads`` threads (at most numba's pool size); returns that number.

    Chooses numba's ``workqueue`` threading layer unless ``NUMBA_THREADING_LAYER`` is set: its threads
    sleep between calls, where OpenMP's spin and burn the CPU the other thread needs (1.8 M vs 1.0 M
    moves per CPU-second on a busy 2-core machine).  The layer is fixed by the first parallel launch
    of the process (``set_num_threads`` is one), so this must come before any.
    """
    import numba

    if not os.environ.get("NUMBA_THREADING_LAYER"):
        numba.config.THREADING_LAYER = "workqueue"
    threads = min(int(threads), numba.config.NUMBA_NUM_THREADS)
    numba.set_num_threads(threads)
    return threads


# _own_rng: each thread draws from a private copy of its rng state.  The states of all threads sit
# side by side in one array, 8 bytes apart, and every move writes one: threads writing into the
# same cache line made two threads no faster than one (the line moved between cores each move).


def _prange(n):  # replaced by numba.prange inside the compiled kernel
    return range(n)


def _kernel():
    """The compiled kernel (built on first use: importing this module compiles nothing)."""
    global _TRAIN, _EPISODES, _PACKED
    if _TRAIN is None:
        try:
            import numba

            prange = numba.prange
        except ImportError:  # pragma: no cover - numba is a dependency
            prange = _prange

        def train_parallel(states, moves_per_thread, alpha, net, tables, scores, max_exponents, lengths, games):
            threads = states.shape[0]
            capacity = scores.shape[0] // threads
            features = 8 * net[3].shape[0]
            step = alpha / features
            made = np.zeros(threads, dtype=np.int64)
            unused = np.zeros(1, dtype=np.float32)
            for thread in prange(threads):
                indices = np.empty(features, dtype=np.int64)
                rng = np.empty(8, dtype=np.uint64)  # a cache line of its own: see _own_rng
                rng[0] = states[thread]
                played = 0
                while made[thread] < moves_per_thread and played < capacity:
                    moves, score, top = play_and_learn(rng, 0, step, False, net, unused, unused, tables, indices)
                    if moves < 0:
                        made[thread] = -1
                        break
                    slot = thread * capacity + played
                    scores[slot], max_exponents[slot], lengths[slot] = score, top, moves
                    made[thread] += moves
                    played += 1
                games[thread] = played
                states[thread] = rng[0]
            return made

        def train_episodes_parallel(states, moves_per_thread, alpha, lam, restarts, coherent, net, size, bounds,
                                    signed, absolute, tables, scores, max_exponents, lengths, games):
            threads = states.shape[0]
            capacity = scores.shape[0] // threads
            features = 8 * net[3].shape[0]
            step = alpha / features
            made = np.zeros(threads, dtype=np.int64)
            for thread in prange(threads):
                indices = np.empty(features, dtype=np.int64)
                rng = np.empty(8, dtype=np.uint64)
                rng[0] = states[thread]
                path = np.empty(PATH, dtype=np.uint64)
                points = np.empty(PATH, dtype=np.float64)
                played = 0
                while made[thread] < moves_per_thread and played < capacity:
                    moves, score, top, length, path, points = play_episode(
                        rng, 0, step, lam, restarts, coherent, net, size, bounds, signed, absolute,
                        tables, path, points, indices)
                    if moves < 0:
                        made[thread] = -1
                        break
                    slot = thread * capacity + played
                    scores[slot], max_exponents[slot], lengths[slot] = score, top, length
                    made[thread] += moves
                    played += 1
                games[thread] = played
                states[thread] = rng[0]
            return made

        def train_packed_parallel(states, moves_per_thread, alpha, lam, restarts, coherent, packed, size, bounds,
                                  tables, scores, max_exponents, lengths, games):
            threads = states.shape[0]
            capacity = scores.shape[0] // threads
            step = alpha / 32
            made = np.zeros(threads, dtype=np.int64)
            for thread in prange(threads):
                indices = np.empty(32, dtype=np.uint64)
                rng = np.empty(8, dtype=np.uint64)
                rng[0] = states[thread]
                path = np.empty(PATH, dtype=np.uint64)
                points = np.empty(PATH, dtype=np.float64)
                played = 0
                while made[thread] < moves_per_thread and played < capacity:
                    moves, score, top, length, path, points = _packed.play_episode(
                        rng, 0, step, lam, restarts, coherent, packed, size, bounds, tables, path, points, indices)
                    if moves < 0:
                        made[thread] = -1
                        break
                    slot = thread * capacity + played
                    scores[slot], max_exponents[slot], lengths[slot] = score, top, length
                    made[thread] += moves
                    played += 1
                games[thread] = played
                states[thread] = rng[0]
            return made

        _TRAIN = _compile(train_parallel)
        _EPISODES = _compile(train_episodes_parallel)
        _PACKED = _compile(train_packed_parallel)
    return _TRAIN, _EPISODES, _PACKED


_TRAIN = _EPISODES = _PACKED = None


def train_parallel(states, moves_per_thread, alpha, net, tables, scores, max_exponents, lengths, games) -> np.ndarray:
    """Each thread (one per rng slot of ``states``) plays whole games until it made ``moves_per_thread``
    moves or filled its ``len(scores) // threads`` result slots; per thread the moves made (-1: the
    weights diverged).  Thread ``t``'s game ``g`` is reported at ``t * capacity + g``, its count in
    ``games[t]``."""
    return _kernel()[0](states, moves_per_thread, alpha, net, tables, scores, max_exponents, lengths, games)


def train_episodes_parallel(states, moves_per_thread, alpha, lam, restarts, coherent, net, size, bounds, signed,
                            absolute, tables, scores, max_exponents, lengths, games) -> np.ndarray:
    """:func:`train_parallel` with the episode learner of :mod:`agentos_trainer_td._episodes` (TD(λ),
    restarts, stages, TC with shared accumulators ``signed``/``absolute``); moves count restarts."""
    return _kernel()[1](states, moves_per_thread, alpha, lam, restarts, coherent, net, size, bounds, signed,
                        absolute, tables, scores, max_exponents, lengths, games)


def train_packed_parallel(states, moves_per_thread, alpha, lam, restarts, coherent, packed, size, bounds, tables,
                          scores, max_exponents, lengths, games) -> np.ndarray:
    """:func:`train_episodes_parallel` on the packed rows of :mod:`agentos_trainer_td._packed`."""
    return _kernel()[2](states, moves_per_thread, alpha, lam, restarts, coherent, packed, size, bounds, tables,
                        scores, max_exponents, lengths, games)

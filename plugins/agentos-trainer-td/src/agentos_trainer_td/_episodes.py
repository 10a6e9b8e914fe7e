"""Episode-end TD(λ) over afterstates with restarts and multi-stage networks (numba).

The learner of ziap/2048-tdl, written for our boards: a game is played greedily with the weights
as they are, its afterstates ``s_0 .. s_{T-1}`` and the points ``r_t`` of the move that made each
``s_t`` are kept, and then the game is learned backwards:

    G_{T-1} = 0                       (after the last afterstate the game is over)
    V(s_t) += step * (G_t - V(s_t))   (each of the 8 * tuples weights read: alpha / (8 * tuples))
    G_{t-1} = r_t + λ G_t + (1 - λ) V(s_t)   with V(s_t) the value just updated

λ = 0 is backward TD(0); λ = 1 learns the Monte-Carlo return.  With TC every weight's step is
scaled by ``|E| / A`` (Jaśkowski 2018's temporal coherence, the backward variant of ziap).
Restarts (ziap): after a game longer than 10 moves, a new segment starts from its middle
afterstate plus a spawned tile, again and again while segments stay longer than 10 moves; only
the first segment of a game is reported.  With ``bounds`` each afterstate is valued and updated
in the weight set of its own stage (:mod:`agentos_policy_ntuple.network`), found by index
arithmetic (``stage_base``).

The weights are rows (:mod:`agentos_trainer_td._rows`): ``rows[i, 0]`` is weight ``i`` and, with TC,
``rows[i, 1]``/``rows[i, 2]`` its sums E and A, so that a weight and its sums share a cache line.
Values are summed in the order :func:`~agentos_policy_ntuple.network.value_at` sums them, so play
and learning are bit for bit those of the policy's own kernels.  :func:`train_episodes` is compiled
without the GIL: several Python threads can each play their own games on the same rows
(:mod:`agentos_trainer_td._parallel`).
"""

from __future__ import annotations

import numpy as np
from agentos_env_2048.kernels import max_exponent, move, new_board, njit, spawn
from agentos_policy_ntuple.network import stage_base

from agentos_trainer_td._jit import njit_nogil
from agentos_trainer_td._rows import (
    default_layout,
    default_rows_value,
    find_rows,
    found_value,
    promoted_row,
    promoted_total,
    row_indices,
    rows_total,
)
from agentos_trainer_td._td import coherent_step

_RESTART_ABOVE = 10
PATH = 1 << 15  # afterstates kept per segment before the buffers grow


@njit(inline=True)
def learn(path, points, n, lam, step, coherent, rows, layout, size, bounds, indices, promote):
    """Learn one segment's afterstates ``path[:n]`` backwards (see the module); False when a TD error is
    not a finite number.  Each afterstate's indices serve its value, its update and its new value.
    With ``promote`` a never-learned weight of a later stage is first given the one it stood for."""
    exact = 0.0
    for t in range(n - 1, -1, -1):
        board = path[t]
        base = stage_base(board, bounds, size)
        row_indices(board, layout, base, indices)
        promoted = promote and base > 0
        total = promoted_total(rows, indices, size, base) if promoted else rows_total(rows, indices)
        error = exact - total
        if not np.isfinite(error):
            return False
        if coherent:
            for k in range(indices.shape[0]):
                i = indices[k]
                if promoted and rows[i, 2] == 0.0:
                    rows[i, 0] = rows[promoted_row(rows, i, size, base), 0]
                rows[i, 0], rows[i, 1], rows[i, 2] = coherent_step(
                    float(rows[i, 0]), float(rows[i, 1]), float(rows[i, 2]), step, error)
        else:
            delta = step * error
            for k in range(indices.shape[0]):
                i = indices[k]
                rows[i, 0] = float(rows[i, 0]) + delta
        exact = points[t] + lam * exact + (1.0 - lam) * rows_total(rows, indices)
    return True


@njit(inline=True)
def _greedy_direct(board, rows, size, bounds, tables):
    """:func:`_greedy` for the default tuples without promotion, the same choices bit for bit: each afterstate
    is valued as its indices are computed, which ran the preset's learner about 15% faster than finding every
    afterstate's rows first (one thread, this machine)."""
    best, best_value, best_after, best_points = -1, -np.inf, board, np.uint64(0)
    for action in range(4):
        after, points = move(board, action, tables)
        if after == board:
            continue
        if bounds.shape[0] == 0:  # one stage: no base to find (finding it cost 10% of the learner's time)
            v = points + default_rows_value(rows, after, 0)
        else:
            v = points + default_rows_value(rows, after, stage_base(after, bounds, size))
        if v > best_value:
            best, best_value, best_after, best_points = action, v, after, points
    return best, best_after, best_points


@njit(inline=True)
def _greedy(board, rows, layout, size, bounds, tables, found, promote):
    """The greedy move from ``board``: (action or -1, afterstate, points).  The default tuples without
    promotion are valued as their indices are computed (:func:`_greedy_direct`).  Otherwise every afterstate's
    rows are found first, into ``found`` ((4, features + 3): the rows, then afterstate, points and stage
    base), and read after, together."""
    if default_layout(layout) and not promote:
        return _greedy_direct(board, rows, size, bounds, tables)
    features = found.shape[1] - 3
    for action in range(4):
        after, points = move(board, action, tables)
        found[action, features], found[action, features + 1] = after, points
        if after != board:
            base = stage_base(after, bounds, size)
            found[action, features + 2] = base
            find_rows(after, layout, base, found, action)
    best, best_value, best_after, best_points = -1, -np.inf, board, np.uint64(0)
    for action in range(4):
        after, points, base = found[action, features], found[action, features + 1], found[action, features + 2]
        if after == board:
            continue
        if promote and base > 0:
            v = points + promoted_total(rows, found[action, :features], size, base)
        else:
            v = points + found_value(rows, found, action, layout)
        if v > best_value:
            best, best_value, best_after, best_points = action, v, after, points
    return best, best_after, best_points


@njit(inline=True)
def play_episode(states, slot, step, lam, restarts, coherent, rows, layout, size, bounds, tables, path, points,
                 indices, promote):
    """One game on rng ``slot``, learned segment by segment: (moves made with restarts, first segment's
    score, its largest exponent, its length, path, points); moves is -1 as soon as a TD error is not
    finite.  ``path``/``points`` are the caller's buffers, returned grown if a segment outran them."""
    found = np.empty((4, indices.shape[0] + 3), dtype=np.uint64)
    board = new_board(states, slot)
    moves = 0
    first_score, first_top, first_length = 0, 0, 0
    first = True
    while True:
        n = 0
        score = 0
        while True:
            best, after, gained = _greedy(board, rows, layout, size, bounds, tables, found, promote)
            if best < 0:
                break
            if n == path.shape[0]:
                path = np.concatenate((path, np.empty(n, dtype=np.uint64)))
                points = np.concatenate((points, np.empty(n, dtype=np.float64)))
            path[n], points[n] = after, float(gained)
            n += 1
            score += gained
            board = spawn(after, states, slot)
        moves += n
        if first:
            first_score, first_top, first_length = score, max_exponent(board), n
            first = False
        if not learn(path, points, n, lam, step, coherent, rows, layout, size, bounds, indices, promote):
            return -1, first_score, first_top, first_length, path, points
        if not restarts or n <= _RESTART_ABOVE:
            break
        board = spawn(path[n // 2], states, slot)
    return moves, first_score, first_top, first_length, path, points


@njit_nogil
def train_episodes(states, games, budget, alpha, lam, restarts, coherent, rows, layout, features, size, bounds,
                   tables, scores, max_exponents, lengths, promote=False):
    """Play and learn games on rng slot 0 until ``games`` were played or ``budget`` moves made (a game
    is never cut); (moves made with restarts, games played), moves -1 as soon as a TD error is not
    finite.  ``scores``/``max_exponents``/``lengths`` get each game's first segment.  ``layout`` is
    :func:`~agentos_trainer_td._rows.learner_layout`'s, ``features`` the ``8 * tuples`` weights a board reads;
    ``promote``: multi-stage weight promotion (:func:`~agentos_trainer_td._rows.promoted_row`; TC rows only)."""
    indices = np.empty(features, dtype=np.uint64)
    step = alpha / indices.shape[0]
    path = np.empty(PATH, dtype=np.uint64)
    points = np.empty(PATH, dtype=np.float64)
    moves = 0
    played = 0
    while played < games and moves < budget:
        made, score, top, length, path, points = play_episode(
            states, 0, step, lam, restarts, coherent, rows, layout, size, bounds, tables, path, points, indices,
            promote)
        if made < 0:
            return -1, played
        scores[played], max_exponents[played], lengths[played] = score, top, length
        moves += made
        played += 1
    return moves, played

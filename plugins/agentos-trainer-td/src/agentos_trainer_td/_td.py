"""TD(0) over afterstates (Szubert & Jaśkowski 2014), whole games per call, as a numba kernel.

Each move picks ``argmax_a points(a) + V(afterstate(a))`` and then moves the value of the previous
afterstate towards ``points + V(new afterstate)``; a finished game pulls its last afterstate to 0.
``alpha`` is the step for the whole value (each of the ``8 * tuples`` weights read moves by
``alpha / features`` of the error).  With temporal coherence (TC, Jaśkowski 2018) every weight's
step is further scaled by ``|E| / A``, the ratio of its accumulated signed and absolute errors.
"""

from __future__ import annotations

import numpy as np
from agentos_env_2048.kernels import max_exponent, move, new_board, njit, spawn
from agentos_policy_ntuple.network import add, value, weight_indices_row

from agentos_trainer_td._jit import njit_nogil
from agentos_trainer_td._rows import grouped_total, sequential_total


@njit(inline=True)
def coherent_step(weight, signed, absolute, step, error):
    """TC's update of one weight (floats): it moves by ``step * |E|/A * error``, then its signed and
    absolute error sums E and A take ``error``; returns the new (weight, E, A).  The rate is at most 1:
    one thread keeps |E| <= A, but racing threads or a trainer state from elsewhere may not."""
    rate = min(abs(signed) / absolute, 1.0) if absolute > 0.0 else 1.0
    return weight + step * rate * error, signed + error, absolute + abs(error)


@njit(inline=True)
def _found_total(rows, found, a, default, features):
    """The value of the afterstate whose weight indices are ``found[a, :features]``, summed as
    :func:`~agentos_policy_ntuple.network.value` sums it (``rows``: the weights as one column)."""
    return grouped_total(rows, found, a) if default else sequential_total(rows, found, a, features)


@njit(inline=True)
def _learn(found, buf, row, features, error, step, coherent, weights, signed, absolute):
    """Move every weight at ``found[buf, row, :features]`` by ``step * error`` (TC: :func:`coherent_step`),
    one after another, as :func:`~agentos_policy_ntuple.network.add` does."""
    for k in range(features):
        i = found[buf, row, k]
        if coherent:  # the steps are float64; numba's float() keeps the sums' float32 (|E| / A divides in float32)
            weights[i], signed[i], absolute[i] = coherent_step(
                float(weights[i]), float(signed[i]), float(absolute[i]), step, error)
        else:
            weights[i] = float(weights[i]) + step * error


@njit(inline=True)
def _play_and_learn_direct(states, slot, step, net, tables):
    """:func:`play_and_learn` for the default tuples without TC, the same values bit for bit: each afterstate is
    valued as its indices are computed (:func:`~agentos_policy_ntuple.network.value`), and the update computes
    the chosen one's indices again (:func:`~agentos_policy_ntuple.network.add`), as TDL2048+ does. Writing every
    afterstate's indices down to read them after cost 15-20% more time a move (4.0-4.2 M moves/s against
    3.5 M, one thread, this machine)."""
    board = new_board(states, slot)
    moves = 0
    score = 0
    previous_value = 0.0
    previous_after = board
    started = False
    while True:
        best, best_value, best_after, best_points = -1, -np.inf, board, np.uint64(0)
        for action in range(4):
            after, points = move(board, action, tables)
            if after == board:
                continue
            v = points + value(after, net)
            if v > best_value:
                best, best_value, best_after, best_points = action, v, after, points
        if best < 0:
            break
        if started:
            error = best_value - previous_value
            if not np.isfinite(error):
                return -1, score, 0
            add(previous_after, step * error, net)
        previous_value, previous_after, started = best_value - best_points, best_after, True
        score += best_points
        board = spawn(best_after, states, slot)
        moves += 1
    if started:
        error = -value(previous_after, net)
        if not np.isfinite(error):
            return -1, score, 0
        add(previous_after, step * error, net)
    return moves, score, max_exponent(board)


@njit(inline=True)
def play_and_learn(states, slot, step, coherent, net, signed, absolute, tables, both):
    """One game on rng slot ``slot``, learned online: (moves, score, largest exponent); moves -1 as soon as
    a TD error is not a finite number.  The default tuples without TC take :func:`_play_and_learn_direct`;
    otherwise each turn finds the four afterstates' weights first and reads
    them after, together (their reads from memory overlap).  ``both`` holds two turns' findings
    (``[2, 4, features + 2]``: the indices, then afterstate and points), used in turn: the chosen
    afterstate's indices serve its update a turn later where they were found, never copied."""
    default, weights = net[0], net[1]
    if default and not coherent:
        return _play_and_learn_direct(states, slot, step, net, tables)
    rows = weights.reshape((weights.shape[0], 1))  # read as the episode learner reads its rows
    features = both.shape[2] - 2
    board = new_board(states, slot)
    moves = 0
    score = 0
    previous_value = 0.0
    started = False
    buf, chosen = 0, 0  # this turn's findings; the row of the afterstate chosen a turn before (in 1 - buf)
    while True:
        found = both[buf]
        for action in range(4):
            after, points = move(board, action, tables)
            found[action, features], found[action, features + 1] = after, points
            if after != board:
                weight_indices_row(after, net, found, action)
        best, best_value, best_after, best_points = -1, -np.inf, board, np.uint64(0)
        for action in range(4):
            after, points = found[action, features], found[action, features + 1]
            if after == board:
                continue
            v = points + _found_total(rows, found, action, default, features)
            if v > best_value:
                best, best_value, best_after, best_points = action, v, after, points
        if best < 0:
            break
        if started:
            error = best_value - previous_value
            if not np.isfinite(error):
                return -1, score, 0
            _learn(both, 1 - buf, chosen, features, error, step, coherent, weights, signed, absolute)
        buf, chosen = 1 - buf, best
        previous_value, started = best_value - best_points, True
        score += best_points
        board = spawn(best_after, states, slot)
        moves += 1
    if started:
        error = -_found_total(rows, both[1 - buf], chosen, default, features)
        if not np.isfinite(error):
            return -1, score, 0
        _learn(both, 1 - buf, chosen, features, error, step, coherent, weights, signed, absolute)
    return moves, score, max_exponent(board)


@njit_nogil
def train_games(
    states, games, budget, alpha, coherent, net, signed, absolute, tables, scores, max_exponents, lengths
):
    """Play and learn games on rng slot 0 until ``games`` were played or ``budget`` moves made (a game is
    never cut); (moves made, games played), moves -1 as soon as a TD error is not a finite number (the
    weights diverged: nothing more is learned).  Compiled without the GIL, for threads.

    ``scores[g]``, ``max_exponents[g]`` and ``lengths[g]`` receive each game's result.  ``signed``/``absolute``
    are the TC accumulators (used only when ``coherent``).
    """
    features = 8 * net[3].shape[0]
    both = np.empty((2, 4, features + 2), dtype=np.uint64)
    step = alpha / features
    moves = 0
    played = 0
    while played < games and moves < budget:
        made, score, top = play_and_learn(states, 0, step, coherent, net, signed, absolute, tables, both)
        if made < 0:
            return -1, played
        scores[played] = score
        max_exponents[played] = top
        lengths[played] = made
        moves += made
        played += 1
    return moves, played

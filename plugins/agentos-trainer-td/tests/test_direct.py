"""The direct paths (the default tuples valued as their indices are computed) choose and learn as the policy's
own kernels do: the preset's learner and online TD(0) take them."""

from __future__ import annotations

import numpy as np
import pytest
from agentos_env_2048 import kernels
from agentos_policy_ntuple import NTuplePolicy
from agentos_policy_ntuple.network import bounds_array, stage_base, value_at
from agentos_trainer_td._episodes import _greedy
from agentos_trainer_td._rows import learner_layout, pack

TABLES = kernels.move_tables()


def random_boards(count: int) -> list[np.uint64]:
    states, boards = kernels.seed_states(4, 1), []
    board = kernels.new_board(states, 0)
    rng = np.random.default_rng(4)
    while len(boards) < count:
        after, _ = kernels.move(board, int(rng.integers(0, 4)), TABLES)
        if after != board:
            boards.append(np.uint64(board))
            board = kernels.spawn(after, states, 0)
        if not kernels.has_legal_move(board):
            board = kernels.new_board(states, 0)
    return boards


@pytest.mark.parametrize(("stage_tiles", "coherent"), [("", False), ("", True), ("64", False)])
def test_the_learners_greedy_move_is_the_one_the_policy_values_best(stage_tiles, coherent):
    """Rows of one column (the weights themselves) and of four (TC's), one stage and two."""
    policy = NTuplePolicy(stage_tiles=stage_tiles) if stage_tiles else NTuplePolicy()
    n, size = policy.weights.size, policy.layout.size
    policy.weights[:] = np.random.default_rng(1).normal(0, 1000, n).astype(np.float32)
    sums = np.ones(n, np.float32) if coherent else np.zeros(0, np.float32)
    rows = pack(policy.weights, sums, sums)
    bounds, layout = bounds_array(policy.stage_bounds), learner_layout(policy)
    assert layout == 0  # the default tuples: the direct path
    found = np.empty((4, 35), np.uint64)
    staged = 0
    for board in random_boards(400):
        best, best_value, expected = -1, -np.inf, (-1, board, 0)
        for action in range(4):
            after, points = kernels.move(board, action, TABLES)
            if after == board:
                continue
            base = stage_base(after, bounds, size)
            staged += base > 0
            v = points + value_at(after, policy.network, base)
            if v > best_value:
                best, best_value, expected = action, v, (action, after, points)
        assert best >= 0
        got = _greedy(board, rows, layout, size, bounds, TABLES, found, False)
        assert (int(got[0]), int(got[1]), int(got[2])) == tuple(int(x) for x in expected)
    assert (staged > 0) == bool(stage_tiles)  # the staged case met boards of its second stage


def test_online_td0_learns_as_the_policys_value_and_add_spell_it_out():
    """Three games of the compiled TD(0) on the default tuples against the rule written out in Python over the
    policy's public ``value`` and ``add`` (greedy on points + V, the previous afterstate moved towards them,
    the last one pulled to 0): the same scores and the same weights, bit for bit."""
    from agentos_policy_ntuple.network import add, value
    from agentos_trainer_td.kernels import train_games

    alpha, games = 0.1, 3
    compiled, written = NTuplePolicy(), NTuplePolicy()
    step = alpha / (8 * 4)
    unused = np.zeros(1, np.float32)
    out = [np.zeros(games, np.int64) for _ in range(3)]
    moves, played = train_games(kernels.seed_states(9, 1), games, 2**62, alpha, False, compiled.network, unused,
                                unused, TABLES, *out)
    states, scores = kernels.seed_states(9, 1), []
    for _ in range(games):
        board, score, previous, previous_value = np.uint64(kernels.new_board(states, 0)), 0, None, 0.0
        while True:
            best = None
            for action in range(4):
                after, points = kernels.move(board, action, TABLES)
                if after != board:
                    v = float(points) + value(np.uint64(after), written.network)
                    if best is None or v > best[0]:
                        best = (v, np.uint64(after), int(points))
            if best is None:
                break
            if previous is not None:
                add(previous, step * (best[0] - previous_value), written.network)
            previous, previous_value = best[1], best[0] - best[2]
            score += best[2]
            board = np.uint64(kernels.spawn(best[1], states, 0))
        add(previous, step * -value(previous, written.network), written.network)
        scores.append(score)
    assert played == games and moves > 100
    assert out[0].tolist() == scores
    assert np.array_equal(compiled.weights, written.weights) and np.abs(written.weights).sum() > 0

"""Multi-stage weight promotion (``promote``): a later stage's never-learned weights stand for the stage below."""

from __future__ import annotations

import numpy as np
import pytest
from agentos_env_2048 import kernels
from agentos_policy_ntuple import NTuplePolicy
from agentos_policy_ntuple.network import bounds_array, stage_base, value_at
from agentos_trainer_td import TDTrainer
from agentos_trainer_td._episodes import learn
from agentos_trainer_td._rows import learner_layout, pack, promoted_row, promoted_value

SMALL = "0 1 2 3; 4 5 6 7"
PROMOTE = {"td_lambda": 0.5, "restarts": True, "coherent": True, "alpha": 1.0, "promote": True}


def stage_one_board() -> np.uint64:
    """A board whose largest tile is 64: stage 1 of ``stage_tiles = "64"``."""
    return kernels.board_from_cells(np.array([[6, 1, 2, 0], [0, 3, 0, 0], [0, 0, 1, 0], [0, 0, 0, 2]]))


def rows_of(policy):
    n = policy.weights.size
    return pack(policy.weights, np.zeros(n, np.float32), np.zeros(n, np.float32))


def test_a_never_learned_weight_reads_the_stage_below_and_its_own_once_learned():
    policy = NTuplePolicy(tuples=SMALL, stage_tiles="64")
    size = policy.layout.size
    policy.weights[:size] = np.random.default_rng(0).normal(0, 100, size).astype(np.float32)
    rows, board = rows_of(policy), stage_one_board()
    base = stage_base(board, bounds_array(policy.stage_bounds), size)
    assert base == size
    scratch = np.empty(16, np.uint64)
    layout = learner_layout(policy)
    below = value_at(board, policy.network, 0)  # the same board valued by stage 0's weights
    assert below != 0.0
    assert promoted_value(board, rows, layout, base, size, scratch) == pytest.approx(below, rel=1e-6)
    first = int(scratch[0])
    assert promoted_row(rows, np.uint64(first), size, base) == first - size
    rows[scratch, 2] = 1.0  # every weight the board reads has now been learned in stage 1: its own (0) count
    assert promoted_value(board, rows, layout, base, size, scratch) == 0.0
    assert promoted_row(rows, np.uint64(first), size, base) == first


def test_the_first_update_of_a_promoted_weight_starts_from_the_stage_below():
    """One afterstate worth 0 after it (the game ended): the error is minus its promoted value, and each
    weight it reads in stage 1 becomes stage 0's weight plus TC's first (full) step."""
    policy = NTuplePolicy(tuples=SMALL, stage_tiles="64")
    size = policy.layout.size
    policy.weights[:size] = 10.0
    rows, board = rows_of(policy), stage_one_board()
    indices = np.empty(16, np.uint64)
    path, points = np.array([board], np.uint64), np.zeros(1)
    step = 1.0 / 16
    assert learn(path, points, 1, 0.5, step, True, rows, learner_layout(policy), size,
                 bounds_array(policy.stage_bounds), indices, True)
    read = np.unique(indices)
    assert (indices >= size).all()
    error = -16 * 10.0  # 16 weights of 10 each, read through stage 0
    counts = np.array([np.count_nonzero(indices == i) for i in read])
    # a weight read twice by one board (a symmetry) is stepped twice; its second step's rate |E|/A is 1
    assert rows[read, 0] == pytest.approx(10.0 + counts * step * error)
    assert (rows[read, 2] > 0).all() and (rows[:size, 0] == 10.0).all()  # stage 0 is left as it was


@pytest.mark.parametrize("threads", [1, 2])
def test_training_with_promotion_writes_the_promoted_weights_out_for_the_policy(threads):
    trainers, policies = {}, {}
    for promote in (False, True):
        policy = NTuplePolicy(tuples=SMALL, stage_tiles="64")
        size = policy.layout.size
        # stage 0 starts at 1 (as OTD would): which weights two racing threads learn varies, but a stage-1
        # weight that stands for one of stage 0's is never 0, learned there or not
        policy.weights[:size] = 1.0
        trainer = TDTrainer(seed=3, threads=threads, **{**PROMOTE, "promote": promote})
        assert trainer.train(policy, None, episodes=120) == 120
        trainers[promote], policies[promote] = trainer, policy
    learned = trainers[True]._accumulators[1][size:] > 0
    assert 0 < np.count_nonzero(learned) < size
    promoted = policies[True].weights
    # never learned in stage 1: exactly stage 0's weight; without promotion such weights stay 0
    assert np.array_equal(promoted[size:][~learned], promoted[:size][~learned])
    assert np.count_nonzero(promoted[size:][~learned]) == np.count_nonzero(~learned)
    plain = policies[False]
    assert not plain.weights[size:][trainers[False]._accumulators[1][size:] == 0].any()


def test_promotion_is_bit_reproducible_on_one_thread_and_changes_learning():
    runs = []
    for promote in (True, True, False):
        policy = NTuplePolicy(tuples=SMALL, stage_tiles="64")
        TDTrainer(seed=5, **{**PROMOTE, "promote": promote}).train(policy, None, episodes=60)
        runs.append(policy.weights)
    assert np.array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2])


def test_promotion_needs_tc_from_the_first_game_and_a_multi_stage_policy():
    with pytest.raises(ValueError, match="coherent"):
        TDTrainer(promote=True)
    with pytest.raises(ValueError, match="coherent_after"):
        TDTrainer(promote=True, coherent=True, coherent_after=5)
    with pytest.raises(ValueError, match="stage_tiles"):
        TDTrainer(promote=True, coherent=True).train(NTuplePolicy(tuples=SMALL), None, episodes=1)
    with pytest.raises(ValueError, match="promote"):
        TDTrainer(promote="maybe", coherent=True)

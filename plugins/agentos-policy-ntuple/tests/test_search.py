"""Expectimax with a transposition table, tile-downgrading, multi-stage and optimistic policies."""

from __future__ import annotations

import numpy as np
import pytest
from agentos import testing
from agentos_env_2048 import kernels
from agentos_policy_ntuple import NTuplePolicy
from agentos_policy_ntuple._search import downgrade, new_table, search_action
from agentos_policy_ntuple._stages import bounds_array
from agentos_policy_ntuple.network import best_action, value

TABLES = kernels.move_tables()
NO_STAGES = bounds_array(())


class TestConformanceSearching(testing.PolicyConformance):
    name = "ntuple"
    environment = "2048"
    settings = {"tuples": "0 1 2 3; 4 5 6 7", "search_depth": 3, "downgrade_tile": 64, "stage_tiles": "256",
                "initial_value": 100, "cache_bits": 12}


def trained_policy(**settings) -> NTuplePolicy:
    from agentos_trainer_td import TDTrainer

    policy = NTuplePolicy(tuples="0 1 2 3; 4 5 6 7; 0 1 4 5", **settings)
    TDTrainer(seed=0, alpha=0.1).train(policy, None, episodes=150)
    return policy


@pytest.fixture(scope="module")
def policy() -> NTuplePolicy:
    return trained_policy()


def plain_expectimax(board, depth, net) -> float:
    """Best points + expected value of ``board``'s moves, written out in plain Python (the reference)."""
    best = -np.inf
    for action in range(4):
        after, points = kernels.move(board, action, TABLES)
        if after != board:
            best = max(best, float(points) + plain_chance(after, depth, net))
    return best


def plain_chance(after, depth, net) -> float:
    if depth <= 1:
        return value(after, net)
    cells = [c for c in range(16) if not (int(after) >> (4 * c)) & 15]
    total = 0.0
    for c in cells:
        for exponent, p in ((1, 0.9), (2, 0.1)):
            board = np.uint64(int(after) | (exponent << (4 * c)))
            best = plain_expectimax(board, depth - 1, net)
            total += p * (best if best > -np.inf else 0.0)
    return total / len(cells) if cells else 0.0


POSITIONS = [  # crowded boards: the full depth-3 tree stays small for the plain reference
    [[1, 2, 3, 4], [2, 3, 4, 5], [5, 6, 0, 1], [0, 1, 2, 0]],
    [[7, 6, 5, 4], [1, 2, 3, 3], [0, 1, 2, 1], [2, 1, 0, 0]],
    [[9, 8, 2, 1], [3, 7, 5, 2], [2, 6, 4, 1], [1, 0, 0, 2]],
]


@pytest.mark.parametrize("cells", POSITIONS)
def test_depth_three_picks_the_move_of_a_plain_expectimax_and_never_worse_than_greedy(policy, cells):
    board = kernels.board_from_cells(np.array(cells))
    net = policy.network
    values = {}
    for action in range(4):
        after, points = kernels.move(board, action, TABLES)
        if after != board:
            values[action] = float(points) + plain_chance(after, 3, net)
    table = new_table(12)
    chosen = search_action(board, 3, net, policy.layout.size, NO_STAGES, TABLES, table, 0)
    assert values[chosen] == pytest.approx(max(values.values()))
    greedy = best_action(board, 1, net, TABLES)
    assert values[chosen] >= values[greedy] - 1e-9  # the searched move is worth at least greedy's
    again = search_action(board, 3, net, policy.layout.size, NO_STAGES, TABLES, table, 0)  # from the table
    assert again == chosen and table.keys.any()


def test_search_depth_one_and_two_agree_with_the_plain_network_kernels(policy):
    rng = np.random.default_rng(1)
    table = new_table(10)
    for _ in range(40):
        board = kernels.board_from_cells(rng.integers(0, 9, 16) * (rng.random(16) < 0.7))
        for depth in (1, 2):
            assert search_action(board, depth, policy.network, policy.layout.size, NO_STAGES, TABLES, table,
                                 0) == best_action(board, depth, policy.network, TABLES)


def test_downgrading_closes_the_highest_gap_and_keeps_the_legal_moves():
    board = kernels.board_from_cells(np.array([[15, 13, 1, 2], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 3]]))
    assert kernels.cells_from_board(downgrade(board, 15)).tolist()[0] == [14, 13, 1, 2]
    assert downgrade(board, 0) == board and downgrade(board, 16) == board
    full = kernels.board_from_cells(np.array([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 0]]))
    assert downgrade(full, 15) == full  # no missing tile: nothing to close
    rng = np.random.default_rng(2)
    for _ in range(300):
        b = kernels.board_from_cells(rng.integers(0, 16, 16) * (rng.random(16) < 0.7))
        d = np.uint64(downgrade(b, 6))
        for action in range(4):
            assert (kernels.move(b, action, TABLES)[0] != b) == (kernels.move(d, action, TABLES)[0] != d)


def test_tile_downgrading_plays_legally_every_chosen_move_changes_the_board(policy):
    states = kernels.seed_states(7, 1)
    table = new_table(12)
    for depth in (1, 2):
        for _ in range(3):
            board, moves = np.uint64(kernels.new_board(states, 0)), 0
            while kernels.has_legal_move(board):
                action = search_action(board, depth, policy.network, policy.layout.size, NO_STAGES, TABLES,
                                       table, 5)  # downgrade from the 32-tile on: nearly always active
                after = np.uint64(kernels.move(board, action, TABLES)[0])
                assert after != board
                board, moves = np.uint64(kernels.spawn(after, states, 0)), moves + 1
            assert kernels.max_exponent(board) >= 6 and moves > 50


def test_searching_policies_decide_in_batches_as_one_by_one_and_restart_the_table(policy):
    searching = NTuplePolicy(tuples="0 1 2 3; 4 5 6 7; 0 1 4 5", search_depth=3, downgrade_tile=64, cache_bits=12)
    searching.weights = policy.weights.copy()
    rng = np.random.default_rng(3)
    boards = [rng.integers(0, 8, 16).reshape(4, 4) * (rng.random((4, 4)) < 0.6) for _ in range(6)]
    one_by_one = [searching.decide(b) for b in boards]
    assert searching.decide_batch(np.array(boards)).tolist() == one_by_one
    generation = int(searching._table.generation[0])
    searching.decide(np.zeros((4, 4), int) + np.eye(4, dtype=int))  # a smaller tile sum: a new game
    assert searching._table.generation[0] == generation + 1


def test_staged_optimistic_checkpoints_round_trip_sparse_and_refuse_other_stages(tmp_path):
    policy = NTuplePolicy(tuples="0 1 2 3", stage_tiles="256", initial_value=4000)
    policy.weights[[3, 70000]] = [1.5, -2.0]
    path = tmp_path / "staged.safetensors"
    policy.save(str(path))
    assert path.stat().st_size < 4096  # only the two weights that left their start value
    again = NTuplePolicy(tuples="0 1 2 3", stage_tiles="256", initial_value=4000)
    again.load(str(path))
    assert np.array_equal(again.weights, policy.weights)
    with pytest.raises(ValueError, match="stage"):
        NTuplePolicy(tuples="0 1 2 3", stage_tiles="512").load(str(path))
    with pytest.raises(ValueError, match="stage"):
        NTuplePolicy(tuples="0 1 2 3").load(str(path))


@pytest.mark.parametrize("settings, message", [
    ({"search_depth": 6}, "search_depth"), ({"downgrade_tile": 100}, "downgrade_tile"),
    ({"cache_bits": 0}, "cache_bits"), ({"cache_bits": 27}, "cache_bits"),
    ({"tuples": "0 1 2 3 4 5 6 7; 8 9 10 11 12 13 14 15"}, "at most 536,870,912"),
    ({"tuples": "0 1 2 3 4 5 6; 8 9 10 11 12 13 14", "stage_tiles": "2048 4096 8192 16384"}, "weights"),
    ({"stage_tiles": "16384 8192"}, "rise"),
    ({"stage_tiles": "1000"}, "power of 2"), ({"initial_value": "nan"}, "initial_value"),
])
def test_bad_search_and_stage_settings_are_clear(settings, message):
    with pytest.raises(ValueError, match=message):
        NTuplePolicy(**settings)


def test_weight_indices_of_the_default_tuples_by_the_written_out_path_equal_the_generic_ones():
    from agentos_policy_ntuple.network import DEFAULT_TUPLES, make_layout, network, weight_indices

    layout = make_layout(DEFAULT_TUPLES)
    weights = np.zeros(1, np.float32)  # not read
    fast, generic = np.empty(32, np.int64), np.empty(32, np.int64)
    for board in [np.uint64(0x0123456789ABCDEF), np.uint64(0xFEDCBA9876543210), np.uint64(0x1000200030004)]:
        weight_indices(board, network(weights, layout), fast)
        weight_indices(board, network(weights, layout._replace(default=False)), generic)
        assert fast.tolist() == generic.tolist()


def test_the_largest_allowed_network_and_table_are_accepted_beside_the_refused_ones():
    """8x6-tuples in two stages (268 M weights, TDL2048+'s largest common network) and 2**26 slots are
    the valid twins of the refused sizes above; np.zeros leaves the pages untouched, so this is cheap."""
    eight = "; ".join(" ".join(str(c) for c in cells) for cells in (
        (0, 1, 2, 3, 4, 5), (4, 5, 6, 7, 8, 9), (0, 1, 2, 4, 5, 6), (4, 5, 6, 8, 9, 10),
        (0, 1, 4, 5, 8, 9), (1, 2, 5, 6, 9, 10), (0, 1, 2, 3, 5, 6), (4, 5, 6, 7, 9, 10)))
    policy = NTuplePolicy(tuples=eight, stage_tiles="16384", cache_bits=26)
    assert policy.weights.size == 2 * 8 * 16**6 and policy.cache_bits == 26

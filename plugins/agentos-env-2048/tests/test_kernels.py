"""The compiled 2048 core: moves, legality and spawns against independent references, and the
plain-Python path (``AGENTOS_2048_PURE=1``) against the numba one, bit for bit."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from agentos_env_2048 import Game2048Env
from agentos_env_2048 import _kernels as kernels

TABLES = kernels.move_tables()


def slide_left(row: list[int]) -> tuple[list[int], int]:
    """The rules written plainly: compact, merge equal neighbours once (not 15s), compact."""
    tiles = [t for t in row if t]
    out, points, i = [], 0, 0
    while i < len(tiles):
        if i + 1 < len(tiles) and tiles[i] == tiles[i + 1] and tiles[i] < 15:
            out.append(tiles[i] + 1)
            points += 1 << (tiles[i] + 1)
            i += 2
        else:
            out.append(tiles[i])
            i += 1
    return out + [0] * (4 - len(out)), points


def reference_move(cells: np.ndarray, action: int) -> tuple[np.ndarray, int]:
    """Slide a 4x4 grid by rotating it so the move is a left slide."""
    turns = {0: 1, 1: 2, 2: 3, 3: 0}[action]  # np.rot90 turns counter-clockwise
    grid = np.rot90(cells, turns).copy()
    points = 0
    for r in range(4):
        grid[r], gained = slide_left(grid[r].tolist())
        points += gained
    return np.rot90(grid, -turns), points


def random_boards(count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    cells = rng.integers(0, 16, size=(count, 16)) * (rng.random((count, 16)) < 0.7)
    cells[: count // 4] = rng.integers(1, 4, size=(count // 4, 16))  # full boards with merges
    return cells.reshape(count, 4, 4)


def test_moves_agree_with_the_plain_rules_on_many_boards():
    for cells in random_boards(2000, seed=1):
        board = kernels.board_from_cells(cells)
        for action in range(4):
            after, points = kernels.move(board, action, TABLES)
            expected, expected_points = reference_move(cells, action)
            assert kernels.cells_from_board(after).tolist() == expected.tolist(), (cells, action)
            assert points == expected_points


def test_legality_matches_trying_every_move():
    for cells in random_boards(2000, seed=2):
        board = kernels.board_from_cells(cells)
        movable = any(kernels.move(board, a, TABLES)[0] != board for a in range(4))
        assert kernels.has_legal_move(board) == movable


def test_moves_agree_with_the_environment():
    env = Game2048Env()
    env.reset(seed=0)
    for cells in random_boards(300, seed=3):
        for action in range(4):
            env.set_board(cells)
            after, points = kernels.move(kernels.board_from_cells(cells), action, TABLES)
            observation, reward, *_ = env.step(action)
            spawned = np.argwhere(observation != kernels.cells_from_board(after))
            assert reward == points or (after == kernels.board_from_cells(cells) and reward == 0)
            assert len(spawned) == (0 if after == kernels.board_from_cells(cells) else 1)


def test_spawns_fill_one_empty_cell_with_a_two_nine_times_in_ten():
    states = kernels.seed_states(5, 1)
    board = kernels.board_from_cells([[1, 0, 0, 0], [0, 3, 0, 0], [0, 0, 0, 0], [0, 0, 0, 5]])
    cells_hit, fours = set(), 0
    for _ in range(4000):
        new = kernels.spawn(board, states, 0)
        diff = np.argwhere(kernels.cells_from_board(new) != kernels.cells_from_board(board))
        assert len(diff) == 1
        value = kernels.cells_from_board(new)[tuple(diff[0])]
        assert value in (1, 2)
        fours += value == 2
        cells_hit.add(tuple(diff[0]))
    assert len(cells_hit) == 13
    assert 0.08 < fours / 4000 < 0.12


PROBE = """
import json, numpy as np
from agentos_env_2048 import _kernels as k
from agentos_env_2048.vector import Game2048VectorEnv
tables = k.move_tables()
rng = np.random.default_rng(7)
moves = []
for _ in range(300):
    b = k.board_from_cells(rng.integers(0, 12, 16))
    moves.append([[int(x) for x in k.move(b, a, tables)] for a in range(4)])
states = k.seed_states(11, 5)
scores, tops, lengths = (np.zeros(5, np.int64) for _ in range(3))
k.random_games(states, tables, scores, tops, lengths)
env = Game2048VectorEnv(num_envs=3)
obs, _ = env.reset(seed=3)
trace = []
for step in range(400):
    obs, reward, terminated, truncated, info = env.step(rng.integers(0, 4, 3))
    trace.append([obs.tolist(), reward.tolist(), terminated.tolist()])
from agentos_env_2048 import Game2048Env
single = Game2048Env(illegal_move_reward=-1.0)
single.reset(seed=5)
single.set_board([[0, 1, 2, 3], [4, 5, 6, 7], [1, 0, 2, 0], [3, 0, 0, 9]])  # a 512 in the top nibble
single_trace = []
for step in range(1500):
    obs, reward, terminated, truncated, info = single.step(int(rng.integers(0, 4)))
    single_trace.append([obs.tolist(), reward, terminated, sorted(info.items())])
    if terminated:
        single.reset()
print(json.dumps({"pure": k.move.__class__.__name__ == "function", "moves": moves,
                  "games": [scores.tolist(), tops.tolist(), lengths.tolist()], "trace": trace,
                  "single": single_trace}))
"""


def _probe(pure: bool, bmi2: bool = True) -> dict:
    env = {key: value for key, value in os.environ.items() if key not in ("AGENTOS_2048_PURE", "AGENTOS_2048_NO_PEXT")}
    if pure:
        env["AGENTOS_2048_PURE"] = "1"
    if not bmi2:
        env["AGENTOS_2048_NO_PEXT"] = "1"
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_plain_python_path_gives_identical_boards_games_and_env_steps():
    compiled, pure, without_bmi2 = _probe(False), _probe(True), _probe(False, bmi2=False)
    assert not compiled.pop("pure") and pure.pop("pure") and not without_bmi2.pop("pure")
    assert compiled == pure == without_bmi2  # spawns by pdep (where fast) and by the loop pick the same cells
    assert max(compiled["games"][2]) > 50  # whole games were played


def test_compiles_without_a_writable_cache():
    code = (
        "import numba.core.caching as c\n"
        "c.CacheImpl._locator_classes = []\n"  # as when no cache directory is writable
        "from agentos_env_2048 import _kernels as k\n"
        "b = k.new_board(k.seed_states(1, 1), 0)\n"
        "print(type(k.move).__name__, k.has_legal_move(b))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["CPUDispatcher", "True"]


def test_popcount_and_nth_bit_agree_with_counting_and_clearing_bits():
    rng = np.random.default_rng(11)
    high, low = rng.integers(0, 2**63, 300, dtype=np.uint64), rng.integers(0, 2, 300, dtype=np.uint64)
    masks = list(high << np.uint64(1) | low)
    masks += [np.uint64(0), np.uint64(2**64 - 1), np.uint64(0x1111111111111111), np.uint64(2**63)]
    for mask in masks:
        bits = [b for b in range(64) if int(mask) >> b & 1]
        assert int(kernels.popcount(mask)) == kernels.count_bits(mask) == len(bits)
        for k in {0, len(bits) // 2, max(len(bits) - 1, 0), min(len(bits), 63)}:
            expected = 1 << bits[k] if k < len(bits) else 0
            with np.errstate(over="ignore"):  # plain Python: ~0 + 1 wraps, as in the compiled code
                assert int(kernels.nth_bit(mask, np.uint64(k))) == expected, (hex(int(mask)), k)


@pytest.mark.parametrize("seed", [0, 1])
def test_random_games_end_stuck_and_reproduce(seed):
    results = []
    for _ in range(2):
        states = kernels.seed_states(seed, 20)
        scores, tops, lengths = (np.zeros(20, np.int64) for _ in range(3))
        total = kernels.random_games(states, TABLES, scores, tops, lengths)
        assert total == lengths.sum() and (tops >= 3).all() and (scores > 0).all()
        results.append((scores.tolist(), tops.tolist()))
    assert results[0] == results[1]


def test_mirror_and_transpose_are_the_grid_flips_on_many_boards():
    for cells in random_boards(2000, seed=4):
        board = kernels.board_from_cells(cells)
        assert kernels.cells_from_board(kernels.mirror(board)).tolist() == np.fliplr(cells).tolist()
        assert kernels.cells_from_board(kernels.transpose(board)).tolist() == cells.T.tolist()


def test_rotate180_and_symmetries_are_the_eight_turns_and_flips_in_the_kernels_order():
    for cells in random_boards(500, seed=5):
        board = kernels.board_from_cells(cells)
        assert kernels.cells_from_board(kernels.rotate180(board)).tolist() == np.rot90(cells, 2).tolist()
        chain = [board]
        for step in range(7):  # mirror, transpose, mirror, ... as the n-tuple kernels visited them before 1.6
            turned = kernels.mirror(chain[-1]) if step % 2 == 0 else kernels.transpose(chain[-1])
            chain.append(np.uint64(turned))  # (a Python int below 2**63 would be compiled for as an int64)
        assert [int(b) for b in kernels.symmetries(board)] == [int(b) for b in chain]


def test_symmetries_take_the_python_ints_that_compiled_kernels_hand_back():
    """numba returns a uint64 board to Python as an int, and compiles for an int below 2**63 as an int64,
    whose right shifts copy the sign bit: the turns and flips take it as the uint64 it stands for. (An int of
    2**63 or more does not reach them: numba's dispatcher refuses it; pass ``np.uint64(board)``.)"""
    tried = 0
    for cells in random_boards(300, seed=6):
        board = kernels.board_from_cells(cells)
        plain = int(board)
        if plain >= 2**63:
            continue
        tried += 1
        assert int(kernels.rotate180(plain)) == int(kernels.rotate180(board))
        assert int(kernels.mirror(plain)) == int(kernels.mirror(board))
        assert int(kernels.transpose(plain)) == int(kernels.transpose(board))
        assert [int(b) for b in kernels.symmetries(plain)] == [int(b) for b in kernels.symmetries(board)]
    assert tried > 100


def test_move_takes_a_python_int_board_as_its_uint64():
    """``move`` of a Python int (compiled as an int64) gives the afterstate and points of the uint64 board."""
    tables = kernels.move_tables()
    tried = 0
    for cells in random_boards(200, seed=8):
        board = kernels.board_from_cells(cells)
        if int(board) >= 2**63:
            continue
        tried += 1
        for action in range(4):
            assert [int(x) for x in kernels.move(int(board), action, tables)] == [
                int(x) for x in kernels.move(board, action, tables)]
    assert tried > 50

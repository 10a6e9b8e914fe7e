"""Tests for the table-driven 2048 environment."""

from __future__ import annotations

import random
import warnings
from importlib.metadata import entry_points

import gymnasium
import numpy as np
import pytest
from agentos_env_2048 import DOWN, ENV_ID, LEFT, RIGHT, UP, Game2048Env
from gymnasium.utils.env_checker import check_env

# A full board without equal neighbours: no move is legal.
STUCK = [[1, 2, 3, 4], [5, 6, 7, 8], [1, 2, 3, 4], [5, 6, 7, 8]]


def make_env(**kwargs) -> Game2048Env:
    env = Game2048Env(**kwargs)
    env.reset(seed=0)
    return env


def rows_board(*rows: list[int]) -> np.ndarray:
    """A board whose first rows are given, the rest empty."""
    board = np.zeros((4, 4), dtype=np.int64)
    board[: len(rows)] = rows
    return board


def assert_slid(obs: np.ndarray, expected) -> None:
    """``obs`` equals ``expected`` plus one spawned 2 or 4 in an empty cell."""
    expected = np.asarray(expected)
    differs = np.argwhere(obs != expected)
    assert len(differs) == 1, f"\n{obs}\nvs expected\n{expected}"
    row, col = differs[0]
    assert expected[row, col] == 0
    assert obs[row, col] in (1, 2)


# -- API conformance -----------------------------------------------------------


def test_check_env_passes_without_warnings():
    env = gymnasium.make(ENV_ID, disable_env_checker=True)  # gives it a spec
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)


def test_make_passive_checker_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = gymnasium.make(f"agentos_env_2048:{ENV_ID}")
        env.reset(seed=1)
        for action in [0, 1, 2, 3] * 5:
            env.step(action)
        env.close()


def test_entry_point_resolves_to_env_class():
    (entry,) = [
        e for e in entry_points(group="agentos.environment") if e.name == "2048"
    ]
    assert entry.load() is Game2048Env


def test_spaces():
    env = Game2048Env()
    assert env.observation_space == gymnasium.spaces.Box(0, 17, (4, 4), np.uint8)
    assert env.action_space == gymnasium.spaces.Discrete(4)
    assert (UP, RIGHT, DOWN, LEFT) == (0, 1, 2, 3)


def test_reset_places_two_small_tiles():
    env = Game2048Env()
    obs, info = env.reset(seed=3)
    assert obs.dtype == np.uint8 and obs.shape == (4, 4)
    assert np.count_nonzero(obs) == 2
    assert set(obs[obs > 0].tolist()) <= {1, 2}
    assert info == {"score": 0, "max_tile": 1 << int(obs.max()), "illegal_move": False}


def test_random_play_observations_and_info():
    env = Game2048Env()
    obs, _ = env.reset(seed=5)
    rng = random.Random(5)
    total = 0.0
    for _ in range(3000):
        obs, reward, terminated, _, info = env.step(rng.randrange(4))
        total += reward
        assert env.observation_space.contains(obs)
        assert obs.flags.writeable
        assert isinstance(reward, float) and reward >= 0
        assert isinstance(info["illegal_move"], bool)
        assert info["max_tile"] == 1 << int(obs.max())
        assert info["score"] == total
        if terminated:
            obs, info = env.reset()
            total = 0.0


# -- seeding -------------------------------------------------------------------


def trajectory(seed: int, steps: int = 500) -> list:
    env = Game2048Env()
    obs, _ = env.reset(seed=seed)
    rng = random.Random(seed)
    record = [obs.tobytes()]
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(rng.randrange(4))
        record.append((obs.tobytes(), reward, terminated, truncated, info))
        if terminated:
            obs, _ = env.reset()
            record.append(obs.tobytes())
    return record


def test_same_seed_same_trajectory():
    assert trajectory(42) == trajectory(42)


#: Digest of the trajectory below as played by agentos-env-2048 1.1.0, whose step was plain Python.
#: Steps now run in a compiled kernel; the boards, spawns, rewards and infos must not change.
DIGEST_OF_1_1_0 = "e61eed809e6ec93ba38149a7381121faf33be8a78f0b6b302aee322c1f0b3faf"


def test_seeded_trajectories_are_exactly_those_of_version_1_1_0():
    import hashlib

    digest = hashlib.sha256()
    for seed in range(4):
        env = Game2048Env(max_steps=700 if seed == 0 else None, illegal_move_reward=-1.0 if seed % 2 else 0.0)
        obs, info = env.reset(seed=seed)
        choose = random.Random(seed).randrange
        digest.update(obs.tobytes())
        for _ in range(3000):
            obs, reward, terminated, truncated, info = env.step(choose(4))
            digest.update(obs.tobytes())
            digest.update(repr((reward, terminated, truncated, sorted(info.items()))).encode())
            if terminated or truncated:
                obs, info = env.reset()
                digest.update(obs.tobytes())
    assert digest.hexdigest() == DIGEST_OF_1_1_0


def test_different_seeds_differ():
    assert trajectory(1) != trajectory(2)


def test_spawn_probabilities():
    env = Game2048Env()
    tiles = []
    env.reset(seed=0)
    for _ in range(3000):
        obs, _ = env.reset()
        tiles.extend(obs[obs > 0].tolist())
    fours = tiles.count(2) / len(tiles)
    assert 0.08 < fours < 0.12
    cells = np.zeros((4, 4))
    for _ in range(3000):
        cells += env.reset()[0] > 0
    assert cells.min() > 0.6 * cells.mean()  # every cell gets used


# -- move semantics --------------------------------------------------------------


@pytest.mark.parametrize(
    ("row", "moved_left", "points"),
    [
        ([1, 1, 1, 1], [2, 2, 0, 0], 8),  # 2 2 2 2 -> 4 4
        ([1, 1, 2, 0], [2, 2, 0, 0], 4),  # 2 2 4 -> 4 4, not 8
        ([1, 0, 1, 2], [2, 2, 0, 0], 4),  # gaps close before merging
        ([2, 2, 3, 3], [3, 4, 0, 0], 24),  # 4 4 8 8 -> 8 16
        ([1, 1, 1, 0], [2, 1, 0, 0], 4),  # the leading pair merges first
        ([0, 0, 0, 3], [3, 0, 0, 0], 0),  # plain slide
    ],
)
def test_moves_in_all_directions(row, moved_left, points):
    env = make_env()
    flipped, flipped_moved = row[::-1], moved_left[::-1]
    cases = [
        (LEFT, rows_board(row), rows_board(moved_left)),
        (RIGHT, rows_board(flipped), rows_board(flipped_moved)),
        (UP, rows_board(row).T, rows_board(moved_left).T),
        (DOWN, rows_board(flipped).T, rows_board(flipped_moved).T),
    ]
    for action, before, after in cases:
        env.set_board(before)
        obs, reward, terminated, _, info = env.step(action)
        assert_slid(obs, after)
        assert reward == points
        assert not terminated and not info["illegal_move"]


def test_whole_board_move_and_score_accumulates():
    env = make_env()
    score_before = env.score
    board = [[1, 1, 0, 0], [2, 0, 2, 0], [0, 3, 3, 3], [4, 0, 0, 4]]
    env.set_board(board)
    obs, reward, _, _, info = env.step(LEFT)
    assert_slid(obs, [[2, 0, 0, 0], [3, 0, 0, 0], [4, 3, 0, 0], [5, 0, 0, 0]])
    assert reward == 4 + 8 + 16 + 32
    assert info["score"] == score_before + 60
    assert info["max_tile"] == 32


def test_tiles_stop_at_32768():
    env = make_env()
    env.set_board(rows_board([15, 15, 0, 0], [1, 2, 1, 2]))
    _, reward, _, _, info = env.step(LEFT)
    assert info["illegal_move"] and reward == 0


# -- illegal moves and the end of the game ---------------------------------------


@pytest.mark.parametrize("illegal_move_reward", [0.0, -1.0])
def test_illegal_move_changes_nothing(illegal_move_reward):
    env = make_env(illegal_move_reward=illegal_move_reward)
    board = rows_board([1, 2, 3, 4])  # nothing can move left or up
    env.set_board(board)
    score = env.score
    for action in (LEFT, UP):
        obs, reward, terminated, truncated, info = env.step(action)
        np.testing.assert_array_equal(obs, board)
        assert reward == illegal_move_reward
        assert info["illegal_move"] and info["score"] == score
        assert not terminated and not truncated
    obs, _, _, _, info = env.step(DOWN)
    assert not info["illegal_move"]
    assert_slid(obs, np.flipud(board))


def test_game_ends_when_the_new_tile_fills_a_stuck_board():
    env = make_env()
    # Sliding row 0 left frees (0, 3); a 2 or 4 there leaves no legal move.
    env.set_board([[0, 3, 4, 5], [4, 5, 6, 7], [3, 4, 5, 6], [4, 5, 6, 7]])
    obs, _, terminated, _, info = env.step(LEFT)
    assert terminated and not info["illegal_move"]
    assert np.count_nonzero(obs) == 16


def test_full_board_with_a_merge_left_is_not_over():
    env = make_env()
    # As above, but the two 128 tiles at (1, 3) and (2, 3) can still merge.
    env.set_board([[0, 3, 4, 5], [4, 5, 6, 7], [3, 4, 5, 7], [4, 5, 6, 8]])
    obs, _, terminated, _, _ = env.step(LEFT)
    assert np.count_nonzero(obs) == 16 and not terminated


def test_stuck_board_has_no_legal_move():
    env = make_env()
    env.set_board(STUCK)
    for action in range(4):
        obs, reward, terminated, _, info = env.step(action)
        assert terminated and info["illegal_move"] and reward == 0
        np.testing.assert_array_equal(obs, STUCK)


# -- options ---------------------------------------------------------------------


def test_max_steps_truncates():
    env = Game2048Env(max_steps=3)
    env.reset(seed=0)
    flags = [env.step(step % 4)[3] for step in range(3)]
    assert flags == [False, False, True]
    env.reset()
    assert not env.step(0)[3]


def test_render_ansi():
    env = Game2048Env(render_mode="ansi")
    env.reset(seed=0)
    env.set_board(rows_board([1, 11, 0, 0]))
    text = env.render()
    assert "2048" in text and "score:" in text
    assert Game2048Env().render() is None


def test_bad_inputs_are_rejected():
    env = make_env()
    with pytest.raises(ValueError):
        env.step(4)
    with pytest.raises(ValueError):
        env.set_board([[1, 2], [3, 4]])
    with pytest.raises(ValueError):
        env.set_board(np.full((4, 4), 16))
    with pytest.raises(ValueError):
        Game2048Env(render_mode="human")


def test_observations_stay_as_returned_and_independent():
    env = Game2048Env()
    obs, _ = env.reset(seed=3)
    kept, copies = [], []
    for step in range(300):  # several blocks of observations
        obs, _, terminated, truncated, _ = env.step(step % 4)
        kept.append(obs)
        copies.append(obs.copy())
        if terminated or truncated:
            env.reset()
    assert all(np.array_equal(a, b) for a, b in zip(kept, copies, strict=True))  # later steps never rewrite them
    kept[0][:] = 0
    assert not np.array_equal(kept[1], 0) and all(o.flags.writeable and o.shape == (4, 4) for o in kept)

"""The q_table policy: keys, greedy choices, repeats, safetensors checkpoints, conformance."""

from __future__ import annotations

import numpy as np
import pytest
from agentos import testing
from agentos_policy_q_table import QTablePolicy, board_2048_key, legal_moves_2048
from gymnasium import spaces


class TestConformanceCorridor(testing.PolicyConformance):
    name = "q_table"
    environment = "corridor"


class TestConformance2048(testing.PolicyConformance):
    name = "q_table"
    environment = "2048"
    settings = {"key": "2048"}


def test_greedy_on_its_table_and_ties_are_seeded():
    policy = QTablePolicy(spaces.Discrete(5), spaces.Discrete(3), seed=0)
    policy.row(2)[1] = 5.0
    assert all(policy.reset() or policy.decide(2) == 1 for _ in range(10))
    draws = []
    for _ in range(2):
        policy.seed(7)
        draws.append([policy.decide(3) for _ in range(20) if not policy.reset()])
    assert draws[0] == draws[1] and len(set(draws[0])) > 1


def test_exact_keys_for_integer_boards_and_refuses_floats():
    board_space = spaces.Box(0, 17, (4, 4), np.uint8)
    policy = QTablePolicy(board_space, spaces.Discrete(4), key="observation")
    board = np.arange(16, dtype=np.uint8).reshape(4, 4)
    assert policy.key(board) == board.tobytes() and len(policy.key(board)) == 16
    with pytest.raises(ValueError, match="discretise"):
        QTablePolicy(spaces.Box(-1.0, 1.0, (2,)), spaces.Discrete(2))
    with pytest.raises(ValueError, match="key must be one of"):
        QTablePolicy(board_space, spaces.Discrete(4), key="pixels")


def test_2048_key_and_legal_moves():
    board = np.zeros((4, 4), np.uint8)
    board[0, 0] = 3  # a lone tile in the top-left corner: only right and down move it
    assert legal_moves_2048(board) == (False, True, True, False)
    assert board_2048_key(board) == (2 | 4) * 16 + 0
    full = np.array([[1, 2, 1, 2], [2, 1, 2, 1], [1, 2, 1, 2], [2, 1, 2, 7]], np.uint8)
    assert legal_moves_2048(full) == (False, False, False, False)
    assert board_2048_key(full) == 15
    merge = full.copy()
    merge[3, 2] = 7
    assert legal_moves_2048(merge) == (False, True, False, True)


def test_avoid_repeats_never_loops_on_an_unchanged_observation():
    policy = QTablePolicy(spaces.Discrete(4), spaces.Discrete(4), seed=0)
    policy.row(0)[:] = [3.0, 2.0, 1.0, 0.0]
    policy.reset()
    assert [policy.decide(0) for _ in range(4)] == [0, 1, 2, 3]
    assert policy.decide(1) is not None and policy.decide(0) == 0  # a new observation clears the memory
    plain = QTablePolicy(spaces.Discrete(4), spaces.Discrete(4), avoid_repeats=False)
    plain.row(0)[:] = [3.0, 2.0, 1.0, 0.0]
    assert [plain.decide(0) for _ in range(3)] == [0, 0, 0]


def test_checkpoint_is_safetensors_and_checks_its_key(tmp_path):
    from safetensors.numpy import load_file

    board_space = spaces.Box(0, 17, (4, 4), np.uint8)
    policy = QTablePolicy(board_space, spaces.Discrete(4), key="observation")
    policy.row(policy.key(np.ones((4, 4), np.uint8)))[2] = 1.5
    path = str(tmp_path / "q.safetensors")
    policy.save(path)
    tensors = load_file(path)
    assert tensors["keys"].shape == (1, 16) and tensors["values"].tolist() == [[0.0, 0.0, 1.5, 0.0]]
    again = QTablePolicy(board_space, spaces.Discrete(4), key="observation")
    again.load(path)
    assert again.table == policy.table
    with pytest.raises(ValueError, match="key=observation"):
        QTablePolicy(board_space, spaces.Discrete(4), key="2048").load(path)


def test_auto_key_reads_2048_boards_and_other_observations_as_they_are():
    from agentos_env_2048 import Game2048Env
    from agentos_env_corridor import CorridorEnv
    from agentos_policy_q_table import QTablePolicy

    board = Game2048Env()
    assert QTablePolicy(board.observation_space, board.action_space).key_name == "2048"
    assert QTablePolicy(board.observation_space, board.action_space, key="observation").key_name == "observation"
    corridor = CorridorEnv()
    assert QTablePolicy(corridor.observation_space, corridor.action_space).key_name == "observation"


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_load_refuses_non_finite_values_and_loads_the_finite_twin(tmp_path, bad):
    """A table of NaN made every greedy choice a tie among no actions (``empty range for randrange()``)."""
    policy = QTablePolicy(spaces.Discrete(5), spaces.Discrete(3), seed=0)
    policy.row(1)[:] = [1.0, 2.0, 3.0]
    good = str(tmp_path / "good.safetensors")
    policy.save(good)
    policy.row(2)[:] = [bad, 0.0, bad]
    hostile = str(tmp_path / "hostile.safetensors")
    policy.save(hostile)

    fresh = QTablePolicy(spaces.Discrete(5), spaces.Discrete(3), seed=0)
    with pytest.raises(ValueError, match="non-finite"):
        fresh.load(hostile)
    assert fresh.table == {}  # nothing of the hostile table was taken
    fresh.load(good)
    assert fresh.table == {1: [1.0, 2.0, 3.0]} and fresh.decide(1) == 2


def test_extreme_finite_values_that_diverge_in_training_stop_with_one_line_beside_a_calm_twin():
    """Finite but extreme values (accepted by load) overflow to NaN when trained; the next greedy choice
    says so in one line (it was ``ValueError: empty range for randrange()``)."""
    from agentos import AgentOSError
    from agentos_env_corridor import CorridorEnv
    from agentos_trainer_sarsa import SarsaTrainer

    def trained(value):
        env = CorridorEnv()
        policy = QTablePolicy(env.observation_space, env.action_space, seed=0)
        for key in range(env.observation_space.n):
            policy.row(key)[:] = [value, -value]
        SarsaTrainer(alpha=1.0, gamma=1.0, seed=0).train(policy, env, episodes=5)
        return policy

    with pytest.raises(AgentOSError, match="diverged") as info:
        trained(1.7e308)
    assert "\n" not in str(info.value)
    calm = trained(1.0)  # the twin: ordinary values train and play
    assert calm.decide(0) in (0, 1)


def test_playing_adds_no_rows_so_a_peers_observations_cannot_grow_or_break_the_table(tmp_path):
    """decide() on unseen observations (a peer can send any, 2**64 included) stores nothing; training does."""
    from agentos_env_corridor import CorridorEnv
    from agentos_trainer_sarsa import SarsaTrainer

    env = CorridorEnv()
    policy = QTablePolicy(env.observation_space, env.action_space, seed=0)
    for observation in (2**64, 10**6, 3):
        assert policy.decide(observation) in (0, 1)
    assert policy.table == {}
    policy.save(str(tmp_path / "empty.safetensors"))  # nothing huge to overflow the saved keys
    SarsaTrainer(seed=0).train(policy, env, episodes=2)  # the twin: training fills the table
    assert policy.table and all(0 <= key < env.observation_space.n for key in policy.table)
    policy.save(str(tmp_path / "trained.safetensors"))

"""The dqn policy: networks, conformance on 2048 and CartPole, weights-only checkpoints, device."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from agentos import testing
from agentos_policy_dqn import BoardQNetwork, DQNPolicy, MlpQNetwork
from gymnasium import spaces

BOARD = spaces.Box(0, 17, (4, 4), np.uint8)


class TestConformance2048(testing.PolicyConformance):
    name = "dqn"
    environment = "2048"
    settings = {"device": "cpu", "channels": 8, "hidden": [16], "seed": 0}
    steps = 60


class TestConformanceCartPole(testing.PolicyConformance):
    name = "dqn"
    environment = "gymnasium"
    settings = {"device": "cpu", "hidden": [16], "seed": 0}
    steps = 60


def test_auto_picks_the_board_network_for_2048_and_an_mlp_otherwise():
    policy = DQNPolicy(BOARD, spaces.Discrete(4), device="cpu", channels=8, hidden=[16])
    assert isinstance(policy.net, BoardQNetwork) and policy.net.n_values == 18
    q = policy.net(torch.zeros((5, 4, 4), dtype=torch.uint8))
    assert q.shape == (5, 4)
    flat = DQNPolicy(spaces.Box(-1, 1, (4,)), spaces.Discrete(2), device="cpu")
    assert isinstance(flat.net, MlpQNetwork)
    discrete = DQNPolicy(spaces.Discrete(7), spaces.Discrete(2), device="cpu", hidden=[8])
    assert discrete.decide(3) in (0, 1)
    with pytest.raises(ValueError, match="network = board needs"):
        DQNPolicy(spaces.Box(-1, 1, (4,)), spaces.Discrete(2), network="board")


def test_device_setting():
    assert DQNPolicy(BOARD, spaces.Discrete(4), device="auto").device.type == (
        "cuda" if torch.cuda.is_available() else "cpu"
    )
    with pytest.raises(ValueError, match="device must be"):
        DQNPolicy(BOARD, spaces.Discrete(4), device="gpu0")


def test_checkpoint_round_trip_and_architecture_check(tmp_path):
    policy = DQNPolicy(BOARD, spaces.Discrete(4), device="cpu", channels=8, hidden=[16], seed=1)
    path = str(tmp_path / "q.pt")
    policy.save(path)
    data = torch.load(path, weights_only=True)
    assert data["settings"] == {"network": "auto", "channels": 8, "hidden": [16]}
    other = DQNPolicy(BOARD, spaces.Discrete(4), device="cpu", channels=8, hidden=[16], seed=2)
    other.load(path)
    boards = np.random.default_rng(0).integers(0, 12, (20, 4, 4)).astype(np.uint8)
    assert [policy.reset() or policy.decide(b) for b in boards] == [other.reset() or other.decide(b) for b in boards]
    with pytest.raises(ValueError, match="holds a network with"):
        DQNPolicy(BOARD, spaces.Discrete(4), device="cpu", channels=4, hidden=[16]).load(path)


def test_avoid_repeats_tries_every_action_on_an_unchanged_board():
    policy = DQNPolicy(BOARD, spaces.Discrete(4), device="cpu", channels=4, hidden=[8], seed=0)
    board = np.ones((4, 4), np.uint8)
    assert sorted(policy.decide(board) for _ in range(4)) == [0, 1, 2, 3]


def test_a_checkpoint_with_pickled_objects_is_refused_without_advice_to_unpickle_it(tmp_path):
    import fractions

    policy = DQNPolicy(BOARD, spaces.Discrete(4), device="cpu", channels=8, hidden=[16], seed=1)
    good = str(tmp_path / "good.pt")
    policy.save(good)
    hostile = str(tmp_path / "hostile.pt")
    torch.save({**torch.load(good, weights_only=True), "extra": fractions.Fraction(1, 3)}, hostile)
    with pytest.raises(ValueError, match="refused unread") as refused:
        policy.load(hostile)
    assert "weights_only" not in str(refused.value) and "trust" not in str(refused.value)
    policy.load(good)  # the valid twin

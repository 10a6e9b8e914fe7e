"""TD(0) afterstate learning: conformance, learning on tiny budgets, TC, agentos train end to end."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from agentos import testing
from agentos_env_2048 import Game2048Env
from agentos_policy_ntuple import NTuplePolicy
from agentos_trainer_td import TDTrainer

SMALL = "0 1 2 3; 4 5 6 7; 0 1 4 5; 1 2 5 6; 5 6 9 10"


class TestConformance(testing.TrainerConformance):
    name = "td"
    environment = "2048"
    policy = "ntuple"
    policy_settings = {"tuples": "0 1 2 3; 4 5 6 7"}


def play(choose, seeds) -> float:
    """Mean score of whole games in the real environment, one per seed."""
    env = Game2048Env()
    scores = []
    for seed in seeds:
        observation, info = env.reset(seed=seed)
        done = False
        while not done:
            observation, _, terminated, truncated, info = env.step(choose(observation))
            done = terminated or truncated
        scores.append(info["score"])
    return float(np.mean(scores))


@pytest.mark.parametrize("coherent, alpha", [(False, 0.1), (True, 0.5)])
def test_a_few_hundred_games_clearly_beat_random_play(coherent, alpha):
    env = Game2048Env()
    policy = NTuplePolicy(env.observation_space, env.action_space, tuples=SMALL)
    scores = []
    games = TDTrainer(alpha=alpha, coherent=coherent, seed=1).train(
        policy, env, episodes=300, callback=lambda score, moves: scores.append(score)
    )
    assert games == 300 and len(scores) == 300
    seeds = range(100, 130)
    rng = np.random.default_rng(0)
    random_play = play(lambda _: int(rng.integers(4)), seeds)
    trained = play(policy.decide, seeds)
    assert trained > 2.5 * random_play, (trained, random_play)
    assert np.mean(scores[-50:]) > 1.5 * np.mean(scores[:50])  # it learned while training


def test_seeded_training_is_reproducible_and_steps_budget_counts_moves():
    weights = []
    for _ in range(2):
        policy = NTuplePolicy(tuples="0 1 2 3; 4 5 6 7")
        lengths: list[int] = []
        TDTrainer(seed=3).train(policy, Game2048Env(), steps=2000, callback=lambda s, n, out=lengths: out.append(n))
        assert sum(lengths) >= 2000 and sum(lengths[:-1]) < 2000
        weights.append(policy.weights.copy())
    assert (weights[0] == weights[1]).all() and weights[0].any()


def test_refuses_other_policies_environments_and_settings():
    from agentos.testing import ReferenceEnv, ReferencePolicy

    with pytest.raises(TypeError, match="ntuple"):
        env = Game2048Env()
        TDTrainer().train(ReferencePolicy(env.observation_space, env.action_space), env, episodes=1)
    with pytest.raises(TypeError, match="2048"):
        TDTrainer().train(NTuplePolicy(tuples="0 1"), ReferenceEnv(), episodes=1)
    with pytest.raises(ValueError, match="alpha"):
        TDTrainer(alpha=0)


def test_agentos_train_then_run_with_the_recipe(tmp_path, monkeypatch):
    from agentos import api
    from safetensors.numpy import load_file

    (tmp_path / "agent.ini").write_text(
        textwrap.dedent(f"""
            [agentos]
            runs = runs

            [environment]
            default = 2048

            [policy]
            default = ntuple

            [policy.ntuple]
            tuples = {SMALL}

            [trainer]
            default = td

            [trainer.td]
            alpha = 0.1
        """)
    )
    monkeypatch.chdir(tmp_path)
    trained = api.train("agent.ini", episodes=200, seed=1)
    assert trained["status"] == "finished" and trained["episodes"] == 200
    assert trained["checkpoint"].endswith(".safetensors") and set(load_file(trained["checkpoint"])) >= {"tuples"}
    ran = api.run("agent.ini", episodes=5, seed=7)
    assert ran["trained_by"] == trained["run"]
    fresh = api.run("agent.ini", episodes=5, seed=7, fresh=True)
    assert ran["mean_return"] > fresh["mean_return"]


PROBE = """
import json
from agentos_env_2048 import Game2048Env
from agentos_policy_ntuple import NTuplePolicy
from agentos_trainer_td import TDTrainer
for coherent in (False, True):
    policy = NTuplePolicy(tuples="0 1 2 3; 4 5 6 7; 0 4 8")
    games = []
    TDTrainer(seed=5, coherent=coherent).train(policy, Game2048Env(), episodes=3,
                                               callback=lambda s, n: games.append((s, n)))
    decisions = policy.decide_batch([[[1, 2, 0, 0]] * 4]).tolist()
    print(json.dumps([games, round(float(policy.weights.sum()), 2), decisions]))
"""


def test_the_plain_python_path_learns_exactly_like_the_compiled_one():
    import os
    import subprocess
    import sys

    outputs = []
    for pure in (False, True):
        env = {k: v for k, v in os.environ.items() if k != "AGENTOS_2048_PURE"}
        if pure:
            env["AGENTOS_2048_PURE"] = "1"
        result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=300)
        assert result.returncode == 0, result.stderr
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1] and len(outputs[0].splitlines()) == 2


# -- issue 18 point 10: diverging weights stop training at once, with what to do
def test_diverging_weights_stop_training_beside_a_converging_twin():
    from agentos import AgentOSError

    env = Game2048Env()
    policy = NTuplePolicy(env.observation_space, env.action_space, tuples="0 1 2 3; 4 5 6 7")
    with pytest.raises(AgentOSError, match=r"td: the weights diverged .* lower alpha \(now 10\)"):
        TDTrainer(alpha=10.0, seed=1).train(policy, env, episodes=200)
    twin = NTuplePolicy(env.observation_space, env.action_space, tuples="0 1 2 3; 4 5 6 7")
    assert TDTrainer(alpha=0.1, seed=1).train(twin, env, episodes=200) == 200
    assert np.isfinite(twin.weights).all() and twin.weights.any()
    twin.weights[7] = np.nan  # handed a policy whose weights are not numbers: refused before training
    with pytest.raises(AgentOSError, match="1 weights are NaN or Inf before training"):
        TDTrainer(alpha=0.1, seed=1).train(twin, env, episodes=1)


# -- issue 19 point 9: TC state is saved for train --from-run; a hostile state file is one clear error
def test_coherence_state_round_trip_and_hostile_files(tmp_path):
    from safetensors.numpy import save_file

    env = Game2048Env()
    policy = NTuplePolicy(env.observation_space, env.action_space, tuples="0 1 2 3")
    trainer = TDTrainer(alpha=0.5, coherent=True, seed=1)
    trainer.train(policy, env, episodes=20)
    trainer.save(str(tmp_path / "state"))
    again = TDTrainer(alpha=0.5, coherent=True)
    again.load(str(tmp_path / "state"))  # the valid twin
    assert (again._accumulators[1] == trainer._accumulators[1]).all() and again._accumulators[1].any()
    with pytest.raises(NotImplementedError):
        TDTrainer(coherent=False).save(str(tmp_path / "nothing"))
    n = policy.weights.shape[0]
    for name, tensors, message in [
        ("half", {"signed": np.zeros(n, np.float16), "absolute": np.zeros(n, np.float16)},
         "F16 .65536., expected float32"),
        ("nan", {"signed": np.full(n, np.nan, np.float32), "absolute": np.zeros(n, np.float32)}, "finite"),
        ("none", {"weights": np.zeros(n, np.float32)}, "not a td trainer state"),
    ]:
        save_file(tensors, str(tmp_path / name))
        with pytest.raises(ValueError, match=message):
            TDTrainer(coherent=True).load(str(tmp_path / name))
    save_file({"signed": np.zeros(5, np.float32), "absolute": np.zeros(5, np.float32)}, str(tmp_path / "short"))
    short = TDTrainer(coherent=True)
    short.load(str(tmp_path / "short"))
    with pytest.raises(ValueError, match="5 accumulators, the policy 65,536 weights"):
        short.train(policy, env, episodes=1)


def test_a_trainer_state_with_rates_above_one_steps_no_larger_than_alpha_beside_a_valid_twin(tmp_path):
    """|E| <= A per weight on one thread; a hostile state with |E| >> A made every step 1e60 times
    alpha's (td called it divergence, blaming alpha): the rate is clamped to 1 as the episode learner's."""
    from safetensors.numpy import save_file

    env = Game2048Env()
    n = NTuplePolicy(tuples="0 1 2 3; 4 5 6 7").weights.shape[0]
    results = []
    for name, signed, absolute in [("valid", 1.0, 1.0), ("hostile", 1e30, 1e-30), ("negative", 1e30, -1.0)]:
        save_file({"signed": np.full(n, signed, np.float32), "absolute": np.full(n, absolute, np.float32)},
                  str(tmp_path / name))
        policy, trainer = NTuplePolicy(tuples="0 1 2 3; 4 5 6 7"), TDTrainer(alpha=0.1, coherent=True, seed=1)
        trainer.load(str(tmp_path / name))
        assert trainer.train(policy, env, episodes=20) == 20
        results.append(np.abs(policy.weights).max())
    valid, hostile, negative = results
    assert 0 < hostile < 3 * valid and 0 < negative < 3 * valid

"""The gymnasium environment component."""

from __future__ import annotations

import pytest
from agentos import testing
from agentos_env_gymnasium import make


class TestConformance(testing.EnvironmentConformance):
    name = "gymnasium"


class TestConformancePendulum(testing.EnvironmentConformance):
    name = "gymnasium"
    settings = {"id": "Pendulum-v1", "g": 9.81}


def test_default_is_cartpole_with_kwargs_and_time_limit():
    env = make()
    assert env.spec.id == "CartPole-v1" and env.spec.max_episode_steps == 500
    env = make("CartPole-v1", max_episode_steps=20, sutton_barto_reward=True)
    assert env.spec.max_episode_steps == 20 and env.spec.kwargs["sutton_barto_reward"] is True
    env.reset(seed=0)
    steps, done = 0, False
    while not done:
        _, _, terminated, truncated, _ = env.step(0)
        steps += 1
        done = terminated or truncated
    assert steps <= 20


def test_unknown_id_is_clear():
    with pytest.raises(ValueError, match="unknown Gymnasium environment 'CartPol-v1'"):
        make("CartPol-v1")


def _steps(env, n=5):
    obs, _ = env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(n):
        obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            obs, _ = env.reset()
    return obs


def test_box2d_steps_and_renders():
    env = make("LunarLander-v3", render_mode="rgb_array")
    assert _steps(env).shape == (8,)
    assert env.render().shape == (400, 600, 3)  # pygame(-ce) draws it: replays work out of the box


def test_mujoco_steps():
    env = make("HalfCheetah-v5")
    assert _steps(env).shape == (17,)


def test_atari_steps_raw_and_with_the_standard_wrappers():
    raw = make("ALE/Pong-v5")
    assert _steps(raw, 2).shape == (210, 160, 3)
    env = make("ALE/Pong-v5", atari_wrappers=True, frame_stack=4)
    assert _steps(env).shape == (4, 84, 84)
    rewards = set()
    env.reset(seed=0)
    for _ in range(200):  # Pong scores within a few hundred frames: clipped rewards are -1, 0 or 1
        _, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        rewards.add(reward)
    assert rewards <= {-1.0, 0.0, 1.0}
    import pickle

    import gymnasium

    copy = gymnasium.make(pickle.loads(pickle.dumps(env.spec)))  # how trainers make n_envs copies (subproc too)
    assert _steps(copy).shape == (4, 84, 84)
    small = make("ALE/Pong-v5", screen_size=42, grayscale=False)  # any one setting applies the wrappers
    assert _steps(small).shape == (42, 42, 3)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"id": "ALE/Pong-v5", "frame_skip": "4"}, "frame_skip must be int"),
        ({"id": "ALE/Pong-v5", "screen_size": 100000}, "screen_size must be between 8 and 1024"),
        ({"id": "ALE/Pong-v5", "grayscale": 1}, "grayscale must be bool"),
        ({"id": "ALE/Pong-v5", "frame_skip": 4, "frameskip": 4}, "frameskip must be 1 under the Atari wrappers"),
        ({"id": "CartPole-v1", "frame_stack": 4}, "apply to ALE ids only"),
        ({"id": "ALE/NoSuchGame-v5"}, "unknown Gymnasium environment 'ALE/NoSuchGame-v5'"),
    ],
)
def test_bad_atari_settings_are_one_clear_line(settings, message):
    with pytest.raises(ValueError, match=message):
        make(**settings)


@pytest.mark.parametrize("task", ["CartPole-v1", "LunarLander-v3"])
def test_a_replay_works_as_installed(task, tmp_path):
    """``agentos run --record`` on classic control and Box2D: pygame-ce (a dependency) draws the frames."""
    import imageio.v3 as iio
    from agentos.plugin_api import record_episodes

    env = make(task, render_mode="rgb_array")
    env.action_space.seed(0)

    class Random:
        def decide(self, observation):
            return env.action_space.sample()

    done = record_episodes(Random(), env, str(tmp_path / "replay.gif"), seed=0, max_steps=20)
    frames = iio.imread(done["path"], index=None)
    assert done["frames"] >= frames.shape[0] >= 2 and frames.shape[1:3] == (400, 600)  # GIF merges repeats


def test_a_missing_family_extra_is_named_from_gymnasiums_registry():
    """Which extra an id needs is read from its registered entry point (nothing imported), for the one line a
    missing family gives (``LunarLander-v3 needs agentos-env-gymnasium's box2d extra: agentos install ...``)."""
    import gymnasium
    from agentos_env_gymnasium import _extra, _missing

    assert [_extra(gymnasium.spec(i)) for i in ("LunarLander-v3", "HalfCheetah-v5", "CartPole-v1")] == [
        "box2d", "mujoco", None]
    line = _missing("LunarLander-v3", "box2d", "Box2D is not installed, run `pip install ...`\nmore")
    assert line == ("LunarLander-v3 needs agentos-env-gymnasium's box2d extra: agentos install environment "
                    "LunarLander-v3 (or gymnasium[box2d]); Box2D is not installed, run `pip install ...`")

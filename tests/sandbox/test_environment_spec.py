"""What a verification's fresh venvs install for the environment: the locked version, and for a Gymnasium task
the extra its family needs (a LunarLander-v3 policy is re-run with Box2D), never an extra named by the claim."""

from __future__ import annotations

import pytest
from agentos.sandbox._rerun import environment_spec


@pytest.mark.parametrize(("name", "env", "spec"), [
    ("gymnasium", {"version": "1.3.0", "task": "LunarLander-v3"}, "gymnasium[box2d]==1.3.0"),
    ("gymnasium", {"version": "1.3.0", "task": "HalfCheetah-v5"}, "gymnasium[mujoco]==1.3.0"),
    ("gymnasium", {"version": "1.3.0", "task": "ALE/Pong-v5"}, "gymnasium[atari]==1.3.0"),
    ("gymnasium", {"version": "1.2.0", "task": "CartPole-v1"}, "gymnasium==1.2.0"),  # classic control: no extra
    ("gymnasium", {"version": "1.3.0", "task": None}, "gymnasium==1.3.0"),
    ("corridor", {"version": "1.0.0", "task": "LunarLander-v3"}, "corridor==1.0.0"),  # not the gymnasium component
    ("gymnasium", None, "gymnasium"),  # evaluate --isolated: the newest release
])
def test_the_environment_is_pinned_with_its_family_extra(name, env, spec):
    assert environment_spec(name, env) == spec


@pytest.mark.parametrize("task", ["LunarLander-v3]==0; evil", "x[box2d]", "LunarLander-v3 ", "../LunarLander-v3",
                                  "ALE/Pong-v5,atari", 7])
def test_a_hostile_task_adds_no_extra(task):
    assert environment_spec("gymnasium", {"version": "1.3.0", "task": task}) == "gymnasium==1.3.0"

"""DQN and stable-baselines3 components through ``agentos train`` / ``agentos run``, tiny budgets."""

from __future__ import annotations

import json
import textwrap

import pytest
from learning._helpers import make_agent, only_run

DQN_2048 = """\
[environment]
default = 2048

[policy]
default = dqn

[trainer]
default = dqn_sgd

[environment.2048]
package = agentos-env-2048

[policy.dqn]
package = agentos-policy-dqn
channels = 8
hidden = [16]
device = auto

[trainer.dqn_sgd]
package = agentos-trainer-dqn-sgd
learning_starts = 50
batch_size = 16
buffer_size = 1000
threads = 1
"""

SB3_CARTPOLE = """\
[environment]
default = gymnasium

[policy]
default = sb3

[trainer]
default = sb3

[environment.gymnasium]
package = agentos-env-gymnasium
id = CartPole-v1

[policy.sb3]
package = agentos-policy-sb3
device = cpu

[trainer.sb3]
package = agentos-trainer-sb3
algorithm = PPO
n_envs = 2
n_steps = 32
batch_size = 64
n_epochs = 1
learning_rate = lin_0.001
"""


@pytest.mark.parametrize(("text", "budget", "name"), [(DQN_2048, "400", "dqn"), (SB3_CARTPOLE, "200", "sb3")])
def test_train_then_run_from_the_checkpoint(learning_venv, tmp_path, text, budget, name):
    agent = make_agent(tmp_path, text)
    result = learning_venv.agentos("train", budget, "--steps", "--seed", "0", cwd=agent)
    assert result.returncode == 0, result.stderr
    run = only_run(agent, "train")
    meta = json.loads((run / "run.json").read_text())
    assert meta["checkpoint"] == "checkpoint.pt" and meta["summary"]["episodes"] >= 1
    code = textwrap.dedent(f"""
        import torch, agentos
        data = torch.load({str(run / "checkpoint.pt")!r}, weights_only=True)
        assert isinstance(data["state_dict"], dict), data.keys()
        ctx = agentos.use("agent.ini")
        env = ctx.get("environment")
        a, b = ctx.create("policy", {name!r}), ctx.create("policy", {name!r})
        a.load({str(run / "checkpoint.pt")!r}); b.load({str(run / "checkpoint.pt")!r})
        obs, _ = env.reset(seed=0)
        same = 0
        for i in range(50):
            a.reset(); b.reset()
            x, y = a.decide(obs), b.decide(obs)
            same += x == y
            obs, _, term, trunc, _ = env.step(x)
            if term or trunc:
                obs, _ = env.reset()
        print(same)
    """)
    checked = learning_venv.run("python", "-c", code, cwd=agent)
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.strip() == "50"
    ran = learning_venv.agentos("run", "--from-run", meta["id"], "-n", "2", "--seed", "1", cwd=agent)
    assert ran.returncode == 0, ran.stderr
    assert "finished: 2 episodes" in ran.stdout

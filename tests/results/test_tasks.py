"""Tasks end to end: two tiny real PPO policies, one trained on Acrobot-v1 and one on CartPole-v1, published
with ``agentos publish --run``; each record, model card and package names its task, each lands on its own
leaderboard, ``agentos evaluate NAME`` (no --environment) plays the task it was trained on, and an agent
of another task refuses it in one line before any weight is loaded."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from results.conftest import agentos, fresh_venv, one_line_error

PPO = """\
[environment]
default = gymnasium
[policy]
default = sb3
[trainer]
default = sb3
[environment.gymnasium]
package = agentos-env-gymnasium
id = {task}
[policy.sb3]
package = agentos-policy-sb3
device = cpu
net_arch = [16]
[trainer.sb3]
package = agentos-trainer-sb3
algorithm = PPO
n_steps = 32
batch_size = 32
n_epochs = 1
"""
TASKS = {"acrobot_tiny": "Acrobot-v1", "cartpole_tiny": "CartPole-v1"}
EPISODES = 5


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Path, dict[str, Path]]:
    """(index, name -> kept wheel): each policy trained 64 steps on its task and published."""
    pytest.importorskip("stable_baselines3")
    index = tmp_path_factory.mktemp("task-index") / "index"
    wheels = {}
    for name, task in TASKS.items():
        folder = tmp_path_factory.mktemp(name)
        (folder / "agent.ini").write_text(PPO.format(task=task))
        done = agentos("train", "64", "--steps", "--seed", "1", "--quiet", cwd=folder)
        assert done.returncode == 0, done.stderr
        (run,) = [p.name for p in (folder / "runs").iterdir() if "-train-" in p.name]
        done = agentos("publish", "--run", run, "--name", name, "--index", index, "--episodes", EPISODES,
                       "--no-replay", "--keep", folder / "kept", cwd=folder, timeout=600)
        assert done.returncode == 0, done.stderr
        (wheels[name],) = (folder / "kept").glob("*.whl")
    return index, wheels


def _member(wheel: Path, member: str) -> bytes:
    name = wheel.name.split("-")[0]  # agentos_policy_<name>: the package folder
    with zipfile.ZipFile(wheel) as zf:
        return zf.read(f"{name}/{member}")


def test_records_cards_and_boards_name_the_task(trained):
    index, wheels = trained
    for name, task in TASKS.items():
        record = json.loads(_member(wheels[name], "results.json"))
        assert record["environment"]["name"] == "gymnasium" and record["environment"]["task"] == task
        card = _member(wheels[name], "README.md").decode()
        assert f"task `{task}`" in card and f"policy for gymnasium task {task}" in card
        assert f"agentos evaluate {name} --episodes" in card and "--environment" not in card
        spec = _member(wheels[name], "__init__.py").decode()
        assert f'"task": "{task}"' in spec  # the package's SPEC carries it
        board = json.loads((index / "leaderboards" / f"gymnasium--{task.lower()}.json").read_text())
        assert [e["component"] for e in board["entries"]] == [name] and board["task"] == task
    obs = {n: len(json.loads(_member(w, "results.json"))["returns"]) for n, w in wheels.items()}
    assert obs == {"acrobot_tiny": EPISODES, "cartpole_tiny": EPISODES}


def test_evaluate_plays_the_trained_task_and_another_task_refuses_in_one_line(
    trained, tmp_path_factory, results_site, wheelhouse
):
    index, wheels = trained
    venv = fresh_venv(tmp_path_factory, results_site, wheelhouse, "tasks", "agentos-env-gymnasium",
                      "agentos-policy-sb3")
    venv.pip_install("--no-deps", *map(str, wheels.values()))
    agent = tmp_path_factory.mktemp("cartpole-agent")
    (agent / "agent.ini").write_text(
        "[environment]\ndefault = gymnasium\n[policy]\ndefault = acrobot_tiny\n"
        "[environment.gymnasium]\nid = CartPole-v1\n"
    )
    for name, task in TASKS.items():  # no --environment: the task the package was trained on
        done = venv.agentos("evaluate", name, "--episodes", EPISODES, "--seed", 0, "--json", cwd=agent, timeout=600)
        assert done.returncode == 0, done.stderr
        record, shipped = json.loads(done.stdout), json.loads(_member(wheels[name], "results.json"))
        assert record["environment"]["task"] == task
        assert record["returns"] == shipped["returns"] and record["lengths"] == shipped["lengths"]
    line = one_line_error(venv.agentos("run", "-n", "1", cwd=agent, timeout=600))
    assert "'acrobot_tiny' was trained on gymnasium (task Acrobot-v1)" in line
    assert "gymnasium (task CartPole-v1)" in line and "set id = Acrobot-v1 under [environment.gymnasium]" in line
    assert "do not fit" not in line  # said before any weight is loaded
    line = one_line_error(venv.agentos("evaluate", "acrobot_tiny", "--task", "CartPole-v1", "-n", "2", cwd=agent))
    assert "trained on gymnasium (task Acrobot-v1)" in line
    fresh = tmp_path_factory.mktemp("install-agent")  # installing it into a CartPole agent says so at once
    (fresh / "agent.ini").write_text("[environment]\ndefault = gymnasium\n[environment.gymnasium]\nid = CartPole-v1\n")
    done = venv.agentos("install", "policy", "acrobot_tiny", "--default", cwd=fresh,
                        env={"AGENTOS_INDEX_URL": index.as_uri()}, timeout=600)
    assert done.returncode == 0, done.stderr
    notes = [ln for ln in done.stdout.splitlines() if "trained on" in ln]
    assert notes == [
        "note: policy 'acrobot_tiny' was trained on gymnasium (task Acrobot-v1), but this agent plays gymnasium "
        "(task CartPole-v1): set id = Acrobot-v1 under [environment.gymnasium] in agent.ini "
        "(agentos evaluate acrobot_tiny plays its own task)"
    ]


def test_evaluate_task_option_records_the_task_and_refuses_a_hostile_one(tmp_path):
    done = agentos("evaluate", "random", "--environment", "gymnasium", "--task", "Acrobot-v1", "-n", "2", "--json",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["environment"]["task"] == "Acrobot-v1" and record["lengths"][0] > 1
    for hostile in ("os:system-v0", "A" * 81 + "-v0", "../../etc/passwd-v0"):
        line = one_line_error(agentos("evaluate", "random", "--environment", "gymnasium", "--task", hostile,
                                      "-n", "2", cwd=tmp_path))
        assert line.startswith("error: --task") or "--task" in line
    line = one_line_error(agentos("evaluate", "random", "--environment", "corridor", "--task", "CartPole-v1",
                                  "-n", "2", cwd=tmp_path))
    assert "plays one game: it takes no --task" in line

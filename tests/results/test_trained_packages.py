"""``agentos publish --run``: a real wheel into a real index, installed with real pip into a fresh venv."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest
from results.conftest import agentos, fresh_venv, one_line_error

NAME = "corridor_sarsa"
PACKAGE = "agentos_policy_corridor_sarsa"
SEED, EPISODES = 100, 30


@pytest.fixture(scope="module")
def published(corridor_run, results_index, tmp_path_factory):
    folder, run = corridor_run
    keep = tmp_path_factory.mktemp("kept")
    result = agentos("publish", "--run", run, "--name", NAME, "--index", results_index, "--episodes", EPISODES,
                     "--seed", SEED, "--keep", keep, cwd=folder)
    assert result.returncode == 0, result.stderr
    (wheel,) = keep.glob("*.whl")
    return wheel


@pytest.fixture(scope="module")
def trained_venv(tmp_path_factory, results_site, wheelhouse, results_index, published):
    """A fresh venv: core, the corridor and q_table from wheels, then the trained policy from the index."""
    venv = fresh_venv(tmp_path_factory, results_site, wheelhouse, "trained", "agentos-env-corridor",
                      "agentos-policy-q-table")
    agent = tmp_path_factory.mktemp("user-agent")
    (agent / "agent.ini").write_text("[environment]\ndefault = corridor\n")
    result = venv.agentos("install", "policy", NAME, "--default", cwd=agent,
                          env={"AGENTOS_INDEX_URL": results_index.as_uri()})
    assert result.returncode == 0, result.stderr
    return venv, agent


def zf_read(wheel: Path, member: str) -> bytes:
    with zipfile.ZipFile(wheel) as zf:
        return zf.read(member)


def _record(wheel: Path) -> dict:
    with zipfile.ZipFile(wheel) as zf:
        return json.loads(zf.read(f"{PACKAGE}/results.json"))


DECISIONS = """
import json, random, sys
from importlib.metadata import entry_points
from agentos_env_corridor import CorridorEnv
env = CorridorEnv()
(ep,) = [e for e in entry_points(group="agentos.policy") if e.name == sys.argv[1]]
policy = ep.load()(env.observation_space, env.action_space)
rng = random.Random(5)
actions = []
for episode in range(20):
    policy.seed(episode)
    policy.reset()
    actions.append([int(policy.decide(rng.randrange(env.observation_space.n))) for _ in range(15)])
print(json.dumps(actions))
"""


def _decisions_of_run(folder: Path, run: str) -> list:
    import random

    from agentos_env_corridor import CorridorEnv
    from agentos_policy_q_table import QTablePolicy

    env = CorridorEnv()
    policy = QTablePolicy(env.observation_space, env.action_space)
    policy.load(str(folder / "runs" / run / "checkpoint.safetensors"))
    rng = random.Random(5)
    actions = []
    for episode in range(20):
        policy.seed(episode)
        policy.reset()
        actions.append([int(policy.decide(rng.randrange(env.observation_space.n))) for _ in range(15)])
    return actions


def test_installed_package_decides_as_the_runs_policy(trained_venv, corridor_run, tmp_path):
    venv, agent = trained_venv
    script = tmp_path / "decide.py"
    script.write_text(DECISIONS)
    result = venv.run("python", script, NAME, cwd=agent)
    assert result.returncode == 0, result.stderr
    theirs = json.loads(result.stdout)
    assert theirs == _decisions_of_run(*corridor_run)
    assert len({a for row in theirs for a in row}) == 2  # both moves occur: a real table, not a constant


def test_install_then_run_plays_the_shipped_weights_and_evaluate_agrees(trained_venv, published):
    venv, agent = trained_venv
    run = venv.agentos("run", "-n", "100", cwd=agent)
    assert run.returncode == 0, run.stderr
    assert "finished: 100 episodes" in run.stdout
    evaluated = venv.agentos("evaluate", NAME, "--environment", "corridor", "--episodes", EPISODES, "--seed", SEED,
                             "--json", cwd=agent)
    assert evaluated.returncode == 0, evaluated.stderr
    record, shipped = json.loads(evaluated.stdout), _record(published)
    assert record["returns"] == shipped["returns"] and record["seeds"] == shipped["seeds"]
    assert record["policy"] == {"name": NAME, "package": "agentos-policy-corridor-sarsa", "version": "1.0.0"}
    assert max(record["returns"]) > -30  # the corridor's random policy needs ~50 steps; a trained one is short


def test_wheel_layout_requirements_and_model_card(published, corridor_run):
    from importlib.metadata import version

    from agentos import __version__ as core_version
    from agentos.registry import parse_results_record

    folder, run = corridor_run
    with zipfile.ZipFile(published) as zf:
        names = set(zf.namelist())
        metadata = zf.read(f"{PACKAGE}-1.0.0.dist-info/METADATA").decode()
        readme = zf.read(f"{PACKAGE}/README.md").decode()
        weights = zf.read(f"{PACKAGE}/weights.safetensors")
        eps = zf.read(f"{PACKAGE}-1.0.0.dist-info/entry_points.txt").decode()
    files = {"__init__.py", "weights.safetensors", "lock.json", "agent.ini", "returns.csv", "returns.png",
             "results.json", "README.md"}
    assert {f"{PACKAGE}/{f}" for f in files} <= names
    assert not any(n.endswith((".pkl", ".pt", ".pickle", ".zip")) for n in names)
    assert weights == (folder / "runs" / run / "checkpoint.safetensors").read_bytes()
    assert f"Requires-Dist: agentos-policy-q-table=={version('agentos-policy-q-table')}" in metadata
    assert f"Requires-Dist: agentos-core>={core_version}" in metadata
    assert f"[agentos.policy]\n{NAME} = {PACKAGE}:policy" in eps
    record = parse_results_record(_record(published))
    assert record["seeds"] == list(range(SEED, SEED + EPISODES))
    import imageio.v3 as iio  # the noxfile's TOOLS have it: a replay is recorded by default

    frames = iio.imread(zf_read(published, f"{PACKAGE}/replay.gif"), index=None, extension=".gif")
    assert record["replay"] == "replay.gif" and frames.shape[0] >= 2 and frames.shape[-1] in (3, 4)
    assert "replay.gif" in readme
    for text in ("q_table", "sarsa", "agentos-policy-q-table", "agentos reproduce", "seed: 3", "40 episodes",
                 f"{record['mean']:,.4g}", "| IQM |", run):
        assert text in readme, text


@pytest.mark.parametrize("scheme", ["float16", "int8"])
def test_quantized_package_is_evaluated_with_its_shipped_weights(corridor_run, results_index, trained_venv, tmp_path,
                                                                  scheme):
    from safetensors import safe_open

    folder, run = corridor_run
    name = f"corridor_sarsa_{scheme}"
    result = agentos("publish", "--run", run, "--name", name, "--index", results_index,
                     "--episodes", 10, "--quantize", scheme, "--keep", tmp_path, cwd=folder)
    assert result.returncode == 0, result.stderr
    (wheel,) = tmp_path.glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        (tmp_path / "w.safetensors").write_bytes(zf.read(f"agentos_policy_{name}/weights.safetensors"))
        shipped = json.loads(zf.read(f"agentos_policy_{name}/results.json"))
        assert f"quantized, {scheme}" in zf.read(f"agentos_policy_{name}/README.md").decode()
    with safe_open(str(tmp_path / "w.safetensors"), framework="numpy") as f:
        assert str(f.get_tensor("values").dtype) == scheme
    venv, agent = trained_venv
    assert venv.agentos("install", "policy", name, cwd=agent,
                        env={"AGENTOS_INDEX_URL": results_index.as_uri()}).returncode == 0
    evaluated = venv.agentos("evaluate", name, "--environment", "corridor", "-n", "10", "--json", cwd=agent)
    assert evaluated.returncode == 0, evaluated.stderr
    assert json.loads(evaluated.stdout)["returns"] == shipped["returns"]


def test_size_limit_refuses_with_one_line_beside_a_valid_twin(published, tmp_path, monkeypatch):
    from agentos.errors import PublishError
    from agentos.registry import _limits, publish_files

    twin = publish_files([str(published)], str(tmp_path / "ok"))
    assert twin[0]["status"] == "published"
    monkeypatch.setattr(_limits, "MAX_UNPACKED_FILE", 1000)  # the plot and the card are larger
    with pytest.raises(PublishError) as caught:
        publish_files([str(published)], str(tmp_path / "small"))
    message = str(caught.value)
    assert "unpacks to more than 1,000 bytes, the per-file limit" in message and "MAX_UNPACKED_FILE" in message
    assert "\n" not in message
    assert not (tmp_path / "small" / "simple" / "agentos-policy-corridor-sarsa").exists()


def test_a_trained_wheel_over_the_upload_limit_is_refused_beside_a_twin_at_it(published, tmp_path, monkeypatch):
    """MAX_WHEEL bounds the wheel as uploaded (PyPI's limit), apart from each file's unpacked bound."""
    import os

    from agentos.errors import PublishError
    from agentos.registry import _limits, publish_files

    size = os.path.getsize(published)
    monkeypatch.setattr(_limits, "MAX_WHEEL", size)
    assert publish_files([str(published)], str(tmp_path / "ok"))[0]["status"] == "published"
    monkeypatch.setattr(_limits, "MAX_WHEEL", size - 1)
    with pytest.raises(PublishError) as caught:
        publish_files([str(published)], str(tmp_path / "small"))
    message = str(caught.value)
    assert f"{size:,} bytes, over the limit of {size - 1:,} bytes" in message and "MAX_WHEEL" in message
    assert "\n" not in message
    assert not (tmp_path / "small" / "simple" / "agentos-policy-corridor-sarsa").exists()


def test_a_trained_wheel_that_unpacks_past_the_total_is_refused_beside_a_twin_at_it(published, tmp_path, monkeypatch):
    """MAX_UNPACKED bounds the files together, counted by unpacking them (many files each under the per-file
    bound: a zip bomb)."""
    from agentos.errors import PublishError
    from agentos.registry import _limits, publish_files

    with zipfile.ZipFile(published) as zf:
        total = sum(info.file_size for info in zf.infolist())
    monkeypatch.setattr(_limits, "MAX_UNPACKED", total)
    assert publish_files([str(published)], str(tmp_path / "ok"))[0]["status"] == "published"
    monkeypatch.setattr(_limits, "MAX_UNPACKED", total - 1)
    with pytest.raises(PublishError) as caught:
        publish_files([str(published)], str(tmp_path / "small"))
    message = str(caught.value)
    assert f"unpacks to more than {total - 1:,} bytes" in message and "MAX_UNPACKED" in message and "\n" not in message
    assert not (tmp_path / "small" / "simple" / "agentos-policy-corridor-sarsa").exists()


def _copy_run(folder: Path, run: str, new: str) -> Path:
    target = folder / "runs" / new
    shutil.copytree(folder / "runs" / run, target)
    meta = json.loads((target / "run.json").read_text())
    meta["id"] = new
    (target / "run.json").write_text(json.dumps(meta))
    return target


def test_altered_runs_are_refused(corridor_run, results_index):
    import numpy as np
    from safetensors.numpy import load_file, save_file

    folder, run = corridor_run
    lock_run = _copy_run(folder, run, "20200101-000000-train-aaaa")
    lock = json.loads((lock_run / "lock.json").read_text())
    for entry in lock["components"]:
        if entry.get("name") == "q_table":
            entry["version"] = "0.0.1"
    (lock_run / "lock.json").write_text(json.dumps(lock))
    line = one_line_error(agentos("publish", "--run", lock_run.name, "--name", "x1", "--index", results_index,
                                  cwd=folder))
    assert "other components" in line and "0.0.1" in line

    weights_run = _copy_run(folder, run, "20200101-000000-train-bbbb")
    tensors = load_file(str(weights_run / "checkpoint.safetensors"))
    tensors["values"] = tensors["values"] + np.float64(1.0)
    save_file(tensors, str(weights_run / "checkpoint.safetensors"), metadata=None)
    line = one_line_error(agentos("publish", "--run", weights_run.name, "--name", "x2", "--index", results_index,
                                  cwd=folder))
    assert "changed after training" in line

    pickle_run = _copy_run(folder, run, "20200101-000000-train-cccc")
    import hashlib
    import pickle

    data = pickle.dumps({"values": [1.0, 2.0]})
    (pickle_run / "checkpoint.safetensors").write_bytes(data)
    meta = json.loads((pickle_run / "run.json").read_text())
    meta["checkpoint_sha256"] = hashlib.sha256(data).hexdigest()
    (pickle_run / "run.json").write_text(json.dumps(meta))
    line = one_line_error(agentos("publish", "--run", pickle_run.name, "--name", "x3", "--index", results_index,
                                  cwd=folder))
    assert "checkpoint.safetensors" in line and "refused" in line

    pt_run = _copy_run(folder, run, "20200101-000000-train-dddd")
    (pt_run / "checkpoint.safetensors").rename(pt_run / "checkpoint.pt")
    meta = json.loads((pt_run / "run.json").read_text())
    meta["checkpoint"] = "checkpoint.pt"
    (pt_run / "run.json").write_text(json.dumps(meta))
    line = one_line_error(agentos("publish", "--run", pt_run.name, "--name", "x4", "--index", results_index,
                                  cwd=folder))
    assert "not safetensors" in line
    assert not any((results_index / "simple").glob("agentos-policy-x*"))


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--name", "bad name"], "not a valid policy name"),
        (["--name", "../up"], "not a valid policy name"),
        (["--episodes", "0", "--name", "ok"], "--episodes must be"),
        (["--version", "one", "--name", "ok"], "is not a version"),
        (["--replay", "agent.ini", "--name", "ok"], "not a GIF"),
        ([], "say the package's name"),
    ],
)
def test_bad_publish_requests_are_one_line(corridor_run, results_index, args, expected):
    folder, run = corridor_run
    line = one_line_error(agentos("publish", "--run", run, "--index", results_index, *args, cwd=folder))
    assert expected in line


def test_unknown_run_is_one_line(corridor_run, results_index):
    folder, _ = corridor_run
    line = one_line_error(agentos("publish", "--run", "nosuch", "--name", "ok", "--index", results_index, cwd=folder))
    assert "nosuch" in line


DQN_CORRIDOR = """\
[environment]
default = corridor
[policy]
default = dqn
[trainer]
default = dqn_sgd
[environment.corridor]
package = agentos-env-corridor
[policy.dqn]
package = agentos-policy-dqn
hidden = [8]
[trainer.dqn_sgd]
package = agentos-trainer-dqn-sgd
"""


def test_a_torch_checkpoint_ships_as_safetensors_with_the_same_q_values(tmp_path):
    """dqn saves weights-only torch files; publish --run writes them again as safetensors (never a pickle)."""
    import torch
    from agentos.results import build_policy
    from agentos_env_corridor import CorridorEnv
    from agentos_policy_dqn import DQNPolicy

    (tmp_path / "agent.ini").write_text(DQN_CORRIDOR)
    assert agentos("train", "3", "--seed", "2", cwd=tmp_path).returncode == 0
    (run,) = [p.name for p in (tmp_path / "runs").iterdir() if "-train-" in p.name]
    result = agentos("publish", "--run", run, "--name", "corridor_dqn", "--index", tmp_path / "index",
                     "--episodes", 5, "--keep", tmp_path / "kept", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    (wheel,) = (tmp_path / "kept").glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        assert not any(n.endswith(".pt") for n in zf.namelist())
        (tmp_path / "w.safetensors").write_bytes(zf.read("agentos_policy_corridor_dqn/weights.safetensors"))
    env = CorridorEnv()
    from importlib.metadata import version

    spec = {"base": {"name": "dqn", "package": "agentos-policy-dqn", "version": version("agentos-policy-dqn")},
            "settings": {"hidden": [8]}}
    shipped = build_policy(spec, str(tmp_path / "w.safetensors"), env.observation_space, env.action_space)
    original = DQNPolicy(env.observation_space, env.action_space, hidden=[8])
    original.load(str(tmp_path / "runs" / run / "checkpoint.pt"))
    for cell in range(env.observation_space.n):
        assert torch.equal(shipped.q_values(cell), original.q_values(cell))


PPO_CARTPOLE = """\
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
net_arch = [16]
[trainer.sb3]
package = agentos-trainer-sb3
algorithm = PPO
n_steps = 32
batch_size = 32
n_epochs = 1
"""


def test_a_ppo_run_ships_as_safetensors_and_the_package_decides_as_the_run(tmp_path):
    """sb3 saves weights-only torch files; publish --run writes them again as safetensors with the settings
    that rebuild the network, and the shipped policy decides as the run's on seeded observations."""
    pytest.importorskip("stable_baselines3")
    import gymnasium
    from agentos.results import build_policy
    from agentos_policy_sb3 import SB3Policy

    (tmp_path / "agent.ini").write_text(PPO_CARTPOLE)
    trained = agentos("train", "64", "--steps", "--seed", "1", "--quiet", cwd=tmp_path)
    assert trained.returncode == 0, trained.stderr
    (run,) = [p.name for p in (tmp_path / "runs").iterdir() if "-train-" in p.name]
    result = agentos("publish", "--run", run, "--name", "cartpole_tiny", "--index", tmp_path / "index",
                     "--episodes", 3, "--no-replay", "--keep", tmp_path / "kept", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    (wheel,) = (tmp_path / "kept").glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        assert not any(n.endswith(".pt") for n in zf.namelist())
        (tmp_path / "w.safetensors").write_bytes(zf.read("agentos_policy_cartpole_tiny/weights.safetensors"))
        training = json.loads(zf.read("agentos_policy_cartpole_tiny/training.json"))
    assert training["run"] == run and training["seed"] == 1 and training["budget"] == {"steps": 64}
    assert training["trainer"]["name"] == "sb3" and training["trainer"]["deterministic"] is False
    from importlib.metadata import version

    env = gymnasium.make("CartPole-v1")
    spec = {"base": {"name": "sb3", "package": "agentos-policy-sb3", "version": version("agentos-policy-sb3")},
            "settings": {"device": "cpu", "net_arch": [16]}}
    shipped = build_policy(spec, str(tmp_path / "w.safetensors"), env.observation_space, env.action_space)
    original = SB3Policy(env.observation_space, env.action_space, device="cpu", net_arch=[16])
    original.load(str(tmp_path / "runs" / run / "checkpoint.pt"))
    assert shipped.algorithm == "PPO"
    for seed in range(25):
        obs, _ = env.reset(seed=seed)
        assert shipped.decide(obs) == original.decide(obs)


NTUPLE_SMALL = """\
[environment]
default = 2048
[policy]
default = ntuple
[trainer]
default = td
[environment.2048]
package = agentos-env-2048
[policy.ntuple]
package = agentos-policy-ntuple
tuples = "0 1 2 3; 4 5 6 7; 0 4 8 12"
[trainer.td]
package = agentos-trainer-td
"""


def test_a_checkpoint_over_the_limit_ships_when_quantized_to_fit(tmp_path, monkeypatch):
    """The 2048 master's float32 checkpoint is over MAX_TRAINED_FILE; --quantize int8 makes it fit, and only the
    shipped file is held to the limit (the float32 twin is refused with one line)."""
    import os

    from agentos.errors import UsageError
    from agentos.registry import _limits
    from agentos.results import publish_run

    (tmp_path / "agent.ini").write_text(NTUPLE_SMALL)
    assert agentos("train", "60", "--seed", "1", "--quiet", cwd=tmp_path).returncode == 0  # weights > the plot
    (run,) = [p.name for p in (tmp_path / "runs").iterdir() if "-train-" in p.name]
    size = os.path.getsize(tmp_path / "runs" / run / "checkpoint.safetensors")  # sparse: int64 indices, float32 values
    monkeypatch.setattr(_limits, "MAX_TRAINED_FILE", size - 1)  # int8 values make it smaller
    common = {"index": str(tmp_path / "index"), "agent_ini": str(tmp_path / "agent.ini"), "episodes": 2,
              "record_replay": False}
    with pytest.raises(UsageError, match="over the per-file limit") as caught:
        publish_run(run, "small_float32", **common)
    assert "\n" not in str(caught.value)
    done = publish_run(run, "small_int8", quantize="int8", keep=str(tmp_path / "kept"), **common)
    assert done["published"][0]["status"] == "published" and done["record"]["episodes"] == 2
    (wheel,) = (tmp_path / "kept").glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        assert zf.getinfo("agentos_policy_small_int8/weights.safetensors").file_size < size - 1


def test_an_environment_that_fails_to_draw_gives_a_note_not_an_error(corridor_run, tmp_path, monkeypatch):
    """CartPole without pygame raises its own error from render(): publish goes on without a replay (one note)."""
    from agentos.learning import _replay
    from agentos.results import publish_run

    def failing(*args, **kwargs):
        raise RuntimeError('pygame is not installed, run `pip install "gymnasium[classic-control]"`\nmore')

    folder, run = corridor_run
    notes = []
    common = {"index": str(tmp_path / "index"), "agent_ini": str(folder / "agent.ini"), "episodes": 3,
              "echo": notes.append}
    drawn = publish_run(run, "corridor_drawn", keep=str(tmp_path / "drawn"), **common)  # the valid twin
    monkeypatch.setattr(_replay, "record_episodes", failing)
    done = publish_run(run, "corridor_undrawn", keep=str(tmp_path / "undrawn"), **common)
    assert done["published"][0]["status"] == "published" and "replay" not in done["record"]
    assert "note: no replay.gif (the environment could not draw its pictures: RuntimeError: pygame is not " \
           "installed, run `pip install \"gymnasium[classic-control]\"`)" in notes
    with zipfile.ZipFile(tmp_path / "undrawn" / done["wheel"]) as zf:
        assert not any(n.endswith("replay.gif") for n in zf.namelist())
    with zipfile.ZipFile(tmp_path / "drawn" / drawn["wheel"]) as zf:
        assert any(n.endswith("replay.gif") for n in zf.namelist())

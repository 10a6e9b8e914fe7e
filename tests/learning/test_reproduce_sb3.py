"""SB3 step budgets: ``train N --steps`` takes N steps (rounded up to a multiple of n_envs), the record says so
(``summary.steps_taken``), and ``agentos reproduce`` retrains it in a fresh venv (real pip, packages by hash from a
file:// index); the index's own cartpole_ppo record (100,000 steps asked, 97,738 in finished episodes) is checked
as taken, not called altered, and a greedier twin of it still is."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import ROOT, wheel_for
from learning._helpers import make_agent

PUBLISHED = ("agentos-core", "agentos-env-gymnasium", "agentos-policy-sb3", "agentos-trainer-sb3")
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
n_epochs = 2
"""


@pytest.fixture(scope="module")
def sb3_run(learning_venv, tmp_path_factory) -> Path:
    agent = make_agent(tmp_path_factory.mktemp("reproduce-sb3"), SB3_CARTPOLE)
    result = learning_venv.agentos("train", "301", "--steps", "--seed", "0", "--quiet", cwd=agent,
                                   env={"OMP_NUM_THREADS": "1"})
    assert result.returncode == 0, result.stderr
    (run,) = (agent / "runs").iterdir()
    return run


def test_steps_are_the_budget_rounded_up_to_n_envs(sb3_run):
    meta = json.loads((sb3_run / "run.json").read_text())
    assert meta["request"]["steps"] == 301
    assert meta["summary"]["steps_taken"] == 302  # 151 steps of 2 environments: not whole 64-step rollouts
    finished = sum(int(line.split(",")[3]) for line in (sb3_run / "returns.csv").read_text().splitlines()[1:])
    assert 302 - 2 * 500 <= finished <= 302 and finished == meta["summary"]["steps"]


def test_a_budget_that_is_not_the_steps_taken_is_altered(sb3_run, tmp_path):
    from agentos.errors import UsageError
    from agentos.learning._records import find_record
    from agentos.reproduce import _prepared

    assert _prepared(find_record(None, str(sb3_run)))["budget"] == 301  # the valid twin
    copy = tmp_path / sb3_run.name
    shutil.copytree(sb3_run, copy)
    meta = json.loads((copy / "run.json").read_text())
    (copy / "run.json").write_text(json.dumps({**meta, "request": {**meta["request"], "steps": 290}}))
    with pytest.raises(UsageError, match=r"request steps 290 is not what its summary says it took \(302 steps\)"):
        _prepared(find_record(None, str(copy)))


def test_an_sb3_steps_run_reproduces(learning_venv, sb3_run, wheelhouse, tmp_path):
    from agentos.registry import publish

    index = tmp_path / "index"
    publish([str(wheel_for(wheelhouse, dist)) for dist in PUBLISHED], str(index), library=True)
    work = tmp_path / "work"
    result = learning_venv.agentos("reproduce", sb3_run, "--index-url", index.as_uri(), "--workdir", work,
                                   cwd=tmp_path, timeout=900, env={"OMP_NUM_THREADS": "1"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == "reproduced: identical"  # one thread, one seed (see results.md)
    new = json.loads((Path(json.loads((work / "verdict.json").read_text())["new_run"]) / "run.json").read_text())
    assert new["summary"]["steps_taken"] == 302


def _package_stage(folder: Path, change=None) -> dict:
    from agentos.learning._records import find_record
    from agentos.reproduce import _prepared
    from agentos.reproduce._package import package_run

    run = Path(package_run("cartpole_ppo", (ROOT / "index").as_uri(), str(folder)))
    if change is not None:
        meta = json.loads((run / "run.json").read_text())
        change(meta)
        (run / "run.json").write_text(json.dumps(meta))
    return _prepared(find_record(None, str(run)))


def test_the_index_cartpole_ppo_record_is_checked_as_taken(tmp_path):
    """Every check reproduce makes before it installs anything, on the embedded index's own package (retraining
    it takes 1.5 minutes: docs/results.md); its 97,738 finished-episode steps are 100,000 less the unfinished last
    episodes of its 8 environments."""
    stage = _package_stage(tmp_path / "shipped")
    assert stage["budget"] == 100_000 and stage["unit"] == "steps" and stage["seed"] == 0
    assert sum(length for _, length in stage["recorded"]) == 97_738
    from agentos.errors import UsageError

    with pytest.raises(UsageError, match=r"request steps 110000 is not what its returns.csv took \(97738 steps\): "
                                         r"the record was altered \(the finished episodes may miss at most 4000"):
        _package_stage(tmp_path / "greedy", lambda meta: meta["request"].update(steps=110_000))
    with pytest.raises(UsageError, match="request steps 50000 is not what its returns.csv took"):
        _package_stage(tmp_path / "short", lambda meta: meta["request"].update(steps=50_000))
    shutil.rmtree(tmp_path)


def test_a_presets_rounded_up_steps_are_not_called_altered(tmp_path):
    """A zoo preset's n_envs is not in agent.ini (its package is not imported to read it): 300 steps of 8
    environments took 304, which is the budget rounded up, not an altered record; a stated n_envs still binds."""
    from types import SimpleNamespace

    from agentos.config import AgentConfig
    from agentos.errors import UsageError
    from agentos.reproduce._budget import check_budget

    record = SimpleNamespace(id="r", meta={"summary": {"steps_taken": 304}})
    recorded = [(20.0, 50)] * 5
    preset = tmp_path / "preset.ini"
    preset.write_text("[environment]\ndefault = gymnasium\n\n[preset]\ndefault = zoo_ppo_cartpole_v1\n")
    check_budget(record, AgentConfig.load(str(preset)), "steps", 300, recorded)
    stated = tmp_path / "stated.ini"
    stated.write_text("[environment]\ndefault = gymnasium\n\n[trainer]\ndefault = sb3\n\n[trainer.sb3]\nn_envs = 1\n")
    with pytest.raises(UsageError, match=r"summary says it took \(304 steps\)"):
        check_budget(record, AgentConfig.load(str(stated)), "steps", 300, recorded)

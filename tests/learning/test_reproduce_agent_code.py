"""``agentos reproduce`` of a run of an agent with its own code (the Quick start's ``agentos init`` agent, whose
agent.py imports a helper of its folder): the code is kept in the run folder by sha256 and hashed in the lock,
rebuilt in the scratch agent of a fresh venv (real pip, packages by hash from a file:// index), and the run
retrains identically; an altered kept file is refused with one line before anything is installed."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from conftest import wheel_for

PUBLISHED = ("agentos-core", "agentos-env-corridor", "agentos-policy-random", "agentos-policy-q-table",
             "agentos-trainer-sarsa", "agentos-env-2048", "agentos-policy-ntuple", "agentos-trainer-td")
HELPER = "SCALE = 1\n"
AGENT_PY_IMPORT = "from helpers import SCALE  # a neighbour of agent.py: kept with the run too\n"


@pytest.fixture(scope="module")
def index_url(tmp_path_factory, wheelhouse) -> str:
    from agentos.registry import publish

    root = tmp_path_factory.mktemp("reproduce-code-index") / "index"
    publish([str(wheel_for(wheelhouse, dist)) for dist in PUBLISHED], str(root), library=True)
    return root.as_uri()


@pytest.fixture(scope="module")
def quick_start_run(learning_venv, tmp_path_factory) -> Path:
    """The Quick start's agent: ``agentos init my_agent``, q_table and sarsa as defaults (the sections
    ``agentos install ... --default`` writes), agent.py importing a helper; ``train 300 --seed 0``."""
    home = tmp_path_factory.mktemp("quick-start")
    assert learning_venv.agentos("init", "my_agent", cwd=home).returncode == 0
    agent = home / "my_agent"
    ini = (agent / "agent.ini").read_text().replace("[policy]\ndefault = random", "[policy]\ndefault = q_table")
    ini += "\n[policy.q_table]\npackage = agentos-policy-q-table\n\n[trainer]\ndefault = sarsa\n\n" \
           "[trainer.sarsa]\npackage = agentos-trainer-sarsa\n"
    (agent / "agent.ini").write_text(ini)
    (agent / "helpers.py").write_text(HELPER)
    (agent / "agent.py").write_text(AGENT_PY_IMPORT + (agent / "agent.py").read_text())
    (agent / "notes.py").write_text("raise SystemExit('not imported by the agent: not kept')\n")
    result = learning_venv.agentos("train", "agent.ini", "300", "--seed", "0", "--quiet", cwd=agent)
    assert result.returncode == 0, result.stderr
    (run,) = (agent / "runs").iterdir()
    return run


def test_an_init_agent_trained_by_td_reproduces_identically(learning_venv, index_url, tmp_path):
    """td (the other deterministic trainer) on 2048 with an n-tuple policy, in an ``agentos init`` agent."""
    assert learning_venv.agentos("init", "td_agent", cwd=tmp_path).returncode == 0
    agent = tmp_path / "td_agent"
    ini = (agent / "agent.ini").read_text()
    ini = ini.replace("[environment]\ndefault = corridor", "[environment]\ndefault = 2048")
    ini = ini.replace("[policy]\ndefault = random", "[policy]\ndefault = ntuple")
    ini += ("\n[environment.2048]\npackage = agentos-env-2048\n\n[policy.ntuple]\npackage = agentos-policy-ntuple\n"
            'tuples = "0 1 2 3; 4 5 6 7"\n\n[trainer]\ndefault = td\n\n[trainer.td]\npackage = agentos-trainer-td\n')
    (agent / "agent.ini").write_text(ini)
    result = learning_venv.agentos("train", "agent.ini", "20", "--seed", "0", "--quiet", cwd=agent)
    assert result.returncode == 0, result.stderr
    (run,) = (agent / "runs").iterdir()
    work = tmp_path / "work"
    result = learning_venv.agentos("reproduce", run, "--index-url", index_url, "--workdir", work, cwd=tmp_path,
                                   timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == "reproduced: identical"
    assert (work / "agent" / "agent.py").read_bytes() == (agent / "agent.py").read_bytes()


def test_the_run_keeps_the_agents_code_by_hash(quick_start_run):
    lock = json.loads((quick_start_run / "lock.json").read_text())
    kept = {e["path"]: e for e in lock["local_code"]}
    assert sorted(kept) == ["agent.py", "helpers.py"]  # agent.py and what it imports; not notes.py
    agent = quick_start_run.parent.parent
    for rel, entry in kept.items():
        data = (agent / rel).read_bytes()
        assert entry["sha256"] == hashlib.sha256(data).hexdigest() and entry["bytes"] == len(data)
        assert (quick_start_run / f"code-{entry['sha256']}.py").read_bytes() == data
    (local,) = [e for e in lock["components"] if e["install"] == "local"]
    assert local["kind"] == "agent" and local["source"] == "agent.py:MyAgent"


def test_the_quick_start_agents_run_reproduces_identically(learning_venv, quick_start_run, index_url, tmp_path):
    work = tmp_path / "work"
    result = learning_venv.agentos("reproduce", quick_start_run, "--index-url", index_url, "--workdir", work,
                                   cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == "reproduced: identical"
    verdict = json.loads((work / "verdict.json").read_text())
    assert verdict["identical"] and verdict["episodes"] == [300, 300]
    assert (work / "agent" / "helpers.py").read_text() == HELPER  # rebuilt in the scratch agent
    assert not (work / "agent" / "notes.py").exists()
    new_lock = json.loads((Path(verdict["new_run"]) / "lock.json").read_text())
    assert new_lock["local_code"] == json.loads((quick_start_run / "lock.json").read_text())["local_code"]


def _copy(run: Path, tmp_path: Path, name: str) -> Path:
    copy = tmp_path / name / run.name
    shutil.copytree(run, copy)
    return copy


def _kept(run: Path, rel: str) -> Path:
    entry = next(e for e in json.loads((run / "lock.json").read_text())["local_code"] if e["path"] == rel)
    return run / f"code-{entry['sha256']}.py"


def _relock(run: Path, change) -> None:
    lock = json.loads((run / "lock.json").read_text())
    change(lock)
    (run / "lock.json").write_text(json.dumps(lock))


@pytest.mark.parametrize(
    ("alter", "message"),
    [
        (lambda run: _kept(run, "helpers.py").write_text("SCALE = 2\n"),
         "local code helpers.py is not the file its lock hashed"),
        (lambda run: _relock(run, lambda lock: lock["local_code"][0].update(path="../agent.py")),
         "local code path '../agent.py' is not a relative .py path inside the agent folder"),
        (lambda run: _relock(run, lambda lock: lock["local_code"][0].update(path="/tmp/agent.py")),
         "local code path '/tmp/agent.py' is not a relative .py path"),
        (lambda run: _relock(run, lambda lock: lock["local_code"][0].update(path="setup.cfg")),
         "local code path 'setup.cfg' is not a relative .py path"),
        (lambda run: (_kept(run, "agent.py").unlink(), _kept(run, "agent.py").symlink_to("/etc/hostname")),
         "is not a file in the run folder"),
        (lambda run: _relock(run, lambda lock: lock["local_code"].append(dict(lock["local_code"][0]))),
         "is listed twice"),
        (lambda run: _relock(run, lambda lock: next(e for e in lock["components"] if e["install"] == "local")
                             .update(sha256="0" * 64)),
         "agent my_agent: the lock's sha256 of agent.py is not that of the kept file"),
    ],
    ids=["altered-file", "dot-dot", "absolute", "not-py", "symlink", "twice", "component-hash"],
)
def test_altered_kept_code_is_refused_with_one_line(learning_venv, quick_start_run, index_url, tmp_path, alter,
                                                    message):
    altered = _copy(quick_start_run, tmp_path, "altered")
    alter(altered)
    work = tmp_path / "work"
    result = learning_venv.agentos("reproduce", altered, "--index-url", index_url, "--workdir", work, cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("NOT reproduced: the lock cannot be rebuilt as recorded:")
    assert message in result.stderr, result.stderr
    assert not (work / "venv").exists()  # refused before any venv or install

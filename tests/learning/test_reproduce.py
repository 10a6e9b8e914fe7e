"""``agentos reproduce RUN``: a real fresh venv from the run's lock (real pip, the packages taken by hash from a
temporary file:// index), a real retraining, the curves compared; an altered lock is flagged before anything
is installed; bad input is one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import wheel_for
from learning._helpers import CORRIDOR_SARSA, make_agent

PUBLISHED = ("agentos-core", "agentos-env-corridor", "agentos-policy-q-table", "agentos-trainer-sarsa")


@pytest.fixture(scope="module")
def index_url(tmp_path_factory, wheelhouse) -> str:
    from agentos.registry import publish

    root = tmp_path_factory.mktemp("reproduce-index") / "index"
    publish([str(wheel_for(wheelhouse, dist)) for dist in PUBLISHED], str(root), library=True)
    return root.as_uri()


@pytest.fixture(scope="module")
def sarsa_run(learning_venv, tmp_path_factory) -> Path:
    """A real 40-episode SARSA run on corridor (seed 3), trained in the learning venv."""
    agent = make_agent(tmp_path_factory.mktemp("reproduce-agent"), CORRIDOR_SARSA)
    result = learning_venv.agentos("train", "40", "--seed", "3", "--quiet", cwd=agent)
    assert result.returncode == 0, result.stderr
    (run,) = (agent / "runs").iterdir()
    return run


def test_sarsa_on_corridor_reproduces_identically(learning_venv, sarsa_run, index_url, tmp_path):
    lock = json.loads((sarsa_run / "lock.json").read_text())
    assert all(len(e["files_sha256"]) == 64 for e in lock["components"])  # the released files are locked
    work = tmp_path / "work"
    result = learning_venv.agentos("reproduce", sarsa_run, "--index-url", index_url, "--workdir", work,
                                   cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == "reproduced: identical"
    verdict = json.loads((work / "verdict.json").read_text())
    assert verdict["identical"] and verdict["deterministic"] and verdict["episodes"] == [40, 40]
    new_run = Path(verdict["new_run"])
    assert (new_run / "returns.csv").read_text().count("\n") == 41
    # the retraining ran in the fresh venv, with the packages at the lock's versions
    new_lock = json.loads((new_run / "lock.json").read_text())
    assert [(e["package"], e["version"], e["files_sha256"]) for e in new_lock["components"]] == [
        (e["package"], e["version"], e["files_sha256"]) for e in lock["components"]
    ]
    names = {p["name"] for p in new_lock["packages"]}  # the fresh venv holds only what the run needs
    assert "torch" in {p["name"] for p in lock["packages"]} and "torch" not in names and "agentos-core" in names
    png = (work / "overlay.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 10_000


def _altered_copy(run: Path, tmp_path: Path, change) -> Path:
    copy = tmp_path / run.name
    shutil.copytree(run, copy)
    lock = json.loads((copy / "lock.json").read_text())
    change(next(e for e in lock["components"] if e["kind"] == "trainer"))
    (copy / "lock.json").write_text(json.dumps(lock))
    return copy


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda e: e.update(version="9.9.9"), "the lock names agentos-trainer-sarsa 9.9.9, which the index at"),
        (lambda e: e.update(files_sha256="f" * 64), "agentos-trainer-sarsa 1.1.2: hash mismatch: the lock's"),
        (lambda e: e.update(install="local", package=None), "trainer sarsa is not a released package in the lock"),
    ],
    ids=["version-not-in-index", "files-hash-altered", "not-a-package"],
)
def test_an_altered_lock_is_flagged_and_nothing_installed(learning_venv, sarsa_run, index_url, tmp_path, change,
                                                          message):
    altered = _altered_copy(sarsa_run, tmp_path, change)
    work = tmp_path / "work"
    result = learning_venv.agentos("reproduce", altered, "--index-url", index_url, "--workdir", work, cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr.strip().count("\n") == 0, result.stderr
    assert result.stderr.startswith("NOT reproduced: the lock cannot be rebuilt as recorded:")
    assert message in result.stderr
    assert not (work / "venv").exists()  # refused before any venv or install


def test_bad_input_is_one_line(learning_venv, sarsa_run, index_url, tmp_path):
    def reproduce(*args):
        result = learning_venv.agentos("reproduce", *args, "--index-url", index_url, cwd=tmp_path)
        assert result.returncode == 2, result.stdout + result.stderr
        assert result.stderr.count("\n") == 1, result.stderr
        return result.stderr

    assert "no run folder 'nope'" in reproduce("nope")
    run_mode = tmp_path / "as-run"
    shutil.copytree(sarsa_run, run_mode)
    meta = json.loads((run_mode / "run.json").read_text())
    (run_mode / "run.json").write_text(json.dumps({**meta, "mode": "run"}))
    assert "is an agentos 'run' run: only training runs are reproduced" in reproduce(run_mode)
    resumed = tmp_path / "resumed"
    shutil.copytree(sarsa_run, resumed)
    (resumed / "run.json").write_text(json.dumps({**meta, "request": {"episodes": 40, "checkpoint": "/x"}}))
    assert "started from a checkpoint file, not a recorded run" in reproduce(resumed)
    orphan = tmp_path / "orphan"  # continued from a run whose folder is not beside it
    shutil.copytree(sarsa_run, orphan)
    (orphan / "run.json").write_text(json.dumps({**meta, "parent": "20260101-000000-train-0000"}))
    assert "whose folder is not beside it" in reproduce(orphan)
    (orphan / "run.json").write_text(json.dumps({**meta, "parent": "../../etc"}))
    assert "whose folder is not beside it" in reproduce(orphan)
    greedy = tmp_path / "greedy"  # its 40-episode curve asking the fresh venv for 10**12 episodes of training
    shutil.copytree(sarsa_run, greedy)
    (greedy / "run.json").write_text(json.dumps({**meta, "request": {**meta["request"], "episodes": 10**12}}))
    assert "request episodes 1000000000000 is not what its returns.csv took (40 episodes)" in reproduce(greedy)
    assert not list(tmp_path.glob("reproduce/*"))  # refused before any venv or work folder is made
    hostile = tmp_path / "hostile"
    shutil.copytree(sarsa_run, hostile)
    (hostile / "run.json").write_text("[" * 100_000)
    assert "cannot use run" in reproduce(hostile)
    no_curve = tmp_path / "no-curve"
    shutil.copytree(sarsa_run, no_curve)
    (no_curve / "returns.csv").unlink()
    (no_curve / "returns.csv").symlink_to("/etc/passwd")
    assert "returns.csv is not a file" in reproduce(no_curve)
    assert "the index at" in reproduce("--package", "nosuch") and "has no project agentos-policy-nosuch" in \
        reproduce("--package", "nosuch")
    assert "is not NAME or NAME==VERSION" in reproduce("--package", "../x")
    assert "not both" in reproduce(sarsa_run, "--package", "x")


def test_a_published_trained_package_reproduces_from_what_it_ships(learning_venv, sarsa_run, index_url, tmp_path):
    """publish --run ships training.json (seed, budget, trainer determinism, no parents): reproduce --package
    rebuilds the run from the package alone (taken from the index by hash) and retrains it identically."""
    from urllib.parse import urlparse

    agent = sarsa_run.parent.parent
    published = learning_venv.agentos("publish", "--run", sarsa_run.name, "--name", "corridor_sarsa_tiny",
                                      "--index", urlparse(index_url).path, "--episodes", 5, "--no-replay", cwd=agent)
    assert published.returncode == 0, published.stderr
    work = tmp_path / "work"
    result = learning_venv.agentos("reproduce", "--package", "corridor_sarsa_tiny==1.0.0", "--index-url", index_url,
                                   "--workdir", work, cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == "reproduced: identical"
    shipped = work / "package" / sarsa_run.name
    training = json.loads((shipped.parent.parent / "verdict.json").read_text())
    assert training["run"] == sarsa_run.name and training["seed"] == 3 and training["budget"] == {"episodes": 40}
    assert (shipped / "returns.csv").read_bytes() == (sarsa_run / "returns.csv").read_bytes()
    assert json.loads((shipped / "lock.json").read_text()) == json.loads((sarsa_run / "lock.json").read_text())


def test_compare_verdicts():
    from agentos.reproduce._compare import compare

    curve = [(-10.0 - i % 3, 10) for i in range(200)]
    assert compare(curve, list(curve), deterministic=True)["verdict"] == "reproduced: identical"
    moved = curve[:150] + [(r - 1, n) for r, n in curve[150:]]
    verdict = compare(curve, moved, deterministic=True)
    assert not verdict["reproduced"]
    assert verdict["verdict"].startswith("NOT reproduced: the trainer is deterministic but the curves differ")
    assert "(episode 151 returned" in verdict["verdict"]
    assert compare(curve, moved, deterministic=False)["verdict"].startswith("reproduced within tolerance: last-100")
    far = [(r * 2, n) for r, n in curve]
    assert compare(curve, far, deterministic=False)["verdict"].startswith("NOT reproduced: last-100 mean")


def test_a_from_run_chain_reproduces_stage_by_stage(learning_venv, sarsa_run, index_url, tmp_path):
    """A run continued with --from-run: reproduce retrains its parent first (stage 1), then itself from the
    reproduced parent's end (stage 2), and says each stage's verdict."""
    agent = tmp_path / "agent"
    shutil.copytree(sarsa_run.parent.parent, agent, ignore=shutil.ignore_patterns(".venv"))
    child = learning_venv.agentos("train", "25", "--seed", "4", "--quiet", "--from-run", sarsa_run.name, cwd=agent)
    assert child.returncode == 0, child.stderr
    (child_run,) = [p for p in (agent / "runs").iterdir() if p.name != sarsa_run.name]
    assert json.loads((child_run / "run.json").read_text())["parent"] == sarsa_run.name
    work = tmp_path / "work"
    result = learning_venv.agentos("reproduce", child_run, "--index-url", index_url, "--workdir", work,
                                   cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.strip().splitlines()
    assert f"stage 1/2 (run {sarsa_run.name}): reproduced: identical" in lines
    assert f"stage 2/2 (run {child_run.name}): reproduced: identical" in lines
    assert lines[-1] == "reproduced: identical"
    verdict = json.loads((work / "verdict.json").read_text())
    assert [s["run"] for s in verdict["stages"]] == [sarsa_run.name, child_run.name]
    assert verdict["episodes"] == [25, 25] and verdict["run"] == child_run.name
    new_child = json.loads((Path(verdict["new_run"]) / "run.json").read_text())
    assert new_child["parent"] == Path(verdict["stages"][0]["new_run"]).name  # continued from the rebuilt stage 1
    assert len(list(work.glob("venv*"))) == 1  # one lock, one venv
    # the chain's curve is the parent's and the child's: a child whose parent learned differently is not reproduced
    altered = tmp_path / "altered" / "runs"
    shutil.copytree(agent / "runs", altered)
    curve = (altered / sarsa_run.name / "returns.csv").read_text().splitlines()
    first = curve[1].split(",")
    first[2] = str(float(first[2]) - 1)
    (altered / sarsa_run.name / "returns.csv").write_text("\n".join([curve[0], ",".join(first), *curve[2:]]) + "\n")
    result = learning_venv.agentos("reproduce", altered / child_run.name, "--index-url", index_url,
                                   "--workdir", tmp_path / "work2", cwd=tmp_path, timeout=600)
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1].startswith(
        f"NOT reproduced: stage 1/2 (run {sarsa_run.name}): the trainer is deterministic but the curves differ")
    assert not (tmp_path / "work2" / "agent-2").exists()  # stage 2 is not retrained

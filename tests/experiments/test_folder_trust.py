"""An experiment folder is data: planted links are never followed, malformed records are one line each.

The base experiment runs once for real (worker processes); each test copies it, plants its hostile
files beside untouched valid twins, then resumes or shows it.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest
from agentos.experiments import run_experiment
from experiments.helpers import agentos

GRID = {"agents": ["random"], "environments": ["corridor"], "seeds": [0, 1, 2], "episodes": 1, "test_episodes": 1}


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    folder = tmp_path_factory.mktemp("base") / "exp"
    result = run_experiment(**GRID, folder=str(folder), workers=1)
    assert [t["status"] for t in result.trials] == ["finished"] * 3, result.failed()
    return folder, {t["seed"]: t["id"] for t in result.trials}


@pytest.fixture
def experiment(finished, tmp_path):
    base, ids = finished
    folder = tmp_path / "experiments" / "exp"
    shutil.copytree(base, folder, symlinks=True)
    return folder, ids


def _victim(tmp_path):
    victim = tmp_path / "victim"
    (victim / "runs-target").mkdir(parents=True)
    (victim / "agent.ini").write_text("precious agent.ini\n")
    (victim / "summary.csv").write_text("precious summary\n")
    return victim


def _tree(folder) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else None for p in sorted(folder.rglob("*"))}


def test_resume_never_follows_links_out_of_the_experiment_folder(experiment, tmp_path, capfd):
    folder, ids = experiment
    victim = _victim(tmp_path)
    before = _tree(victim)
    trials = folder / "trials"
    shutil.rmtree(trials / ids[0])
    os.symlink(victim, trials / ids[0])  # a whole trial folder that is a link
    shutil.rmtree(trials / ids[1] / "runs")
    os.symlink(victim / "runs-target", trials / ids[1] / "runs")  # runs/ of a trial is a link
    (trials / ids[1] / "trial.json").unlink()  # (so that trial runs again and writes runs/)
    (folder / "summary.csv").unlink()
    os.symlink(victim / "summary.csv", folder / "summary.csv")  # a summary file that is a link
    twin = (trials / ids[2] / "trial.json").read_bytes()  # the valid twin: kept as it is
    result = run_experiment(**GRID, folder=str(folder), workers=1)
    assert [t["status"] for t in result.trials] == ["finished"] * 3, result.failed()
    assert _tree(victim) == before  # nothing written, replaced or removed outside the folder
    for seed in (0, 1):
        trial_dir = trials / ids[seed]
        assert not trial_dir.is_symlink() and not (trial_dir / "runs").is_symlink()
        assert json.loads((trial_dir / "trial.json").read_text())["status"] == "finished"
        assert (trial_dir / "agent.ini").is_file() and os.listdir(trial_dir / "runs")
    assert (trials / ids[2] / "trial.json").read_bytes() == twin  # not run again
    assert not (folder / "summary.csv").is_symlink() and (folder / "summary.csv").read_text().startswith("agent,")
    assert "symbolic link" in capfd.readouterr().err


MALFORMED = {
    "a list": lambda record: [record],
    "no agent (KeyError)": lambda record: {k: v for k, v in record.items() if k != "agent"},
    "train is a list (AttributeError)": lambda record: record | {"train": [1, 2]},
    "run leads out of the folder": lambda record: record | {"train": (record["train"] or {}) | {"run": "../../.."}},
    "not JSON": None,
}


@pytest.mark.parametrize("kind", list(MALFORMED))
def test_a_malformed_record_is_one_line_naming_the_file_and_resume_runs_it_again(experiment, kind, capfd):
    folder, ids = experiment
    path = folder / "trials" / ids[1] / "trial.json"
    record = json.loads(path.read_text())
    change = MALFORMED[kind]
    path.write_text("{not json" if change is None else json.dumps(change(record)))
    twin = (folder / "trials" / ids[2] / "trial.json").read_bytes()

    shown = agentos("experiment", "show", str(folder), cwd=folder.parent, timeout=60)
    assert shown.returncode == 1, shown.stdout + shown.stderr
    (line,) = shown.stderr.strip().splitlines()
    assert str(path) in line and "Traceback" not in shown.stderr, shown.stderr
    assert "random" in shown.stdout and "corridor" in shown.stdout  # the valid twins are still shown

    capfd.readouterr()
    result = run_experiment(**GRID, folder=str(folder), workers=1)
    err = capfd.readouterr().err
    assert [t["status"] for t in result.trials] == ["finished"] * 3, result.failed()
    assert str(path) in err and "runs again" in err, err
    assert json.loads(path.read_text())["id"] == ids[1]  # rewritten by the rerun
    assert (folder / "trials" / ids[2] / "trial.json").read_bytes() == twin
    assert agentos("experiment", "show", str(folder), cwd=folder.parent, timeout=60).returncode == 0


def test_show_prints_record_text_without_escape_sequences(experiment):
    folder, ids = experiment
    escape = "\x1b]0;owned\x07\x1b[2J"
    for seed, change in ((0, {"agent": f"random{escape}"}), (1, {"status": "failed", "error": f"boom{escape}"})):
        path = folder / "trials" / ids[seed] / "trial.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), **change}))
    shown = agentos("experiment", "show", str(folder), cwd=folder.parent, timeout=60)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "\x1b" not in shown.stdout + shown.stderr and "\x07" not in shown.stdout + shown.stderr
    assert "random?]0;owned??" in shown.stdout and "failed: random corridor seed=1: boom?]0;owned" in shown.stdout
    assert "corridor" in shown.stdout  # the valid twin (seed 2) is still shown as it is

"""A grid over Gymnasium tasks: ``environments = [CartPole-v1, Acrobot-v1]`` (or a settings axis over
``environment.id``) gives one row group and one plot panel per task, not one ``gymnasium`` for both."""

from __future__ import annotations

import csv

import pytest
from experiments.helpers import agentos

FOLDER_AGENT = """\
[environment]
default = gymnasium

[policy]
default = random

[environment.gymnasium]
package = agentos-env-gymnasium
"""


@pytest.fixture(scope="module")
def grids(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("tasks")
    (tmp_path / "walker").mkdir()
    (tmp_path / "walker" / "agent.ini").write_text(FOLDER_AGENT)
    common = "seeds = 1\nepisodes = 1\ntest-episodes = 1\nworkers = 1\n"
    (tmp_path / "by_entry.ini").write_text(
        f"[experiment]\nagents = [random]\nenvironments = [CartPole-v1, Acrobot-v1]\n{common}"
        f"folder = {tmp_path / 'by_entry'}\n")
    (tmp_path / "by_setting.ini").write_text(
        f"[experiment]\nagents = [./walker]\nenvironments = [gymnasium]\n{common}folder = {tmp_path / 'by_setting'}\n"
        "\n[settings]\nenvironment.id = [CartPole-v1, Acrobot-v1]\n")
    for name in ("by_entry", "by_setting"):
        ran = agentos("experiment", "run", str(tmp_path / f"{name}.ini"), "--quiet", cwd=tmp_path)
        assert ran.returncode == 0, ran.stderr
    return tmp_path


@pytest.mark.parametrize("name", ["by_entry", "by_setting"])
def test_each_task_is_its_own_row_group_and_panel(grids, name):
    from agentos.experiments._records import load_trials
    from agentos.experiments._scores import test_scores

    with open(grids / name / "summary.csv") as f:
        rows = list(csv.DictReader(f))
    assert sorted(r["environment"] for r in rows) == ["Acrobot-v1", "CartPole-v1"]
    assert {r["settings"] for r in rows} == {"{}"}  # the task names the row, not a setting
    trials, _ = load_trials(str(grids / name))
    (scores,) = test_scores(trials).values()  # one label (the agent, no settings): a panel per task
    assert sorted(scores) == ["Acrobot-v1", "CartPole-v1"]
    assert scores["Acrobot-v1"][0] < 0 < scores["CartPole-v1"][0]  # each trial played its own task
    shown = agentos("experiment", "show", str(grids / name), cwd=grids)
    assert shown.returncode == 0 and "CartPole-v1" in shown.stdout and "Acrobot-v1" in shown.stdout, shown.stderr


def test_a_task_given_twice_is_one_clear_line(tmp_path):
    (tmp_path / "twice.ini").write_text("[experiment]\nagents = [random]\nenvironments = [CartPole-v1]\nseeds = 1\n"
                                        "episodes = 1\n\n[settings]\nenvironment.id = [Acrobot-v1]\n")
    ran = agentos("experiment", "run", str(tmp_path / "twice.ini"), "--quiet", cwd=tmp_path)
    assert ran.returncode != 0 and "Traceback" not in ran.stderr
    assert "give the task in one place" in ran.stderr

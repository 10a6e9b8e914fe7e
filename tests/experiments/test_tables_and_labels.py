"""Experiment tables (issue 19, points 10 and 11): environment metrics as columns, folder agents by
name, and ``experiment show`` in the order of ``experiment run``."""

from __future__ import annotations

import csv
import json
import os

import pytest
from experiments.helpers import agentos

AGENT_2048 = """\
[environment]
default = 2048

[policy]
default = q_table

[trainer]
default = sarsa

[environment.2048]
package = agentos-env-2048

[policy.q_table]
package = agentos-policy-q-table
key = 2048

[trainer.sarsa]
package = agentos-trainer-sarsa
"""


def _table(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("agent "))
    return [line for line in lines[start:] if not line.startswith("summary:")]


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    """One experiment over two folder agents, a preset and a folder sharing a name with one of them."""
    tmp_path = tmp_path_factory.mktemp("grid")
    exp = tmp_path / "exp"
    for name in ("zeta_agent", "alpha_agent"):
        (exp / name).mkdir(parents=True)
        (exp / name / "agent.ini").write_text(f"; {name}\n" + AGENT_2048)  # two agents, not one content
    # the hostile twin: the same folder name elsewhere must not be merged with ./alpha_agent
    (tmp_path / "other" / "alpha_agent").mkdir(parents=True)
    (tmp_path / "other" / "alpha_agent" / "agent.ini").write_text(AGENT_2048.replace("key = 2048", "key = observation"))
    sweep = exp / "sweep.ini"
    sweep.write_text(f"""\
[experiment]
agents = [./zeta_agent, random, ./alpha_agent, {tmp_path / 'other' / 'alpha_agent'}]
environments = [2048]
seeds = 2
episodes = 6
test-episodes = 4
workers = 1
folder = {tmp_path / 'out'}
""")
    ran = agentos("experiment", "run", str(sweep), "--quiet", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    return tmp_path, _table(ran.stdout)


def test_folder_agents_are_labelled_by_name_unless_two_share_it(grid):
    tmp_path, table = grid
    rows = [line.split()[0] for line in table[1:]]
    assert rows == ["zeta_agent", "random", os.path.normpath(str(tmp_path / "exp" / "alpha_agent")),
                    os.path.normpath(str(tmp_path / "other" / "alpha_agent"))]
    assert not any("/./" in line for line in table)
    with open(tmp_path / "out" / "summary.csv") as f:
        assert [r["agent"] for r in csv.DictReader(f)] == rows


def test_experiment_show_prints_the_table_of_experiment_run_in_its_order(grid):
    tmp_path, table = grid
    planned = [t["id"] for t in json.loads((tmp_path / "out" / "experiment.json").read_text())["trials"]]
    assert planned != sorted(planned)  # trials are stored by id: the folder's order is not the plan's
    shown = agentos("experiment", "show", str(tmp_path / "out"), cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    measured = 2  # steps/s and wall are measured, the rest must be the same
    assert [line.rsplit(None, measured)[0] for line in _table(shown.stdout)] == [
        line.rsplit(None, measured)[0] for line in table]


def test_environment_metrics_are_columns_of_the_table_and_of_summary_csv(grid):
    tmp_path, table = grid
    header = table[0].split()
    assert header[:3] == ["agent", "environment", "settings"]
    for column in ("best_tile", "reached_2048", "reached_4096", "reached_8192"):
        assert column in header
    assert all(line.count("0.0% ± 0.0") == 3 for line in table[1:])  # the rates, in percent
    with open(tmp_path / "out" / "summary.csv") as f:
        summary = list(csv.DictReader(f))
    assert {r["reached_2048_mean"] for r in summary} == {"0.0"}
    assert all(float(r["best_tile_mean"]) >= 8 for r in summary)


def test_the_plot_has_smooth_curves_no_offset_and_a_panel_per_rate_that_moves(tmp_path):
    import numpy as np
    from agentos.experiments._plot import experiment_figure, plot_experiment

    trials = []
    for agent in (str(tmp_path / "exp" / "." / "ntuple_agent"), "random"):
        for seed in range(2):
            rng = np.random.default_rng(seed)
            n = 20_000
            center = np.linspace(5_000, 100_000, n) if agent != "random" else 1_100
            returns = np.maximum(0, rng.normal(center, 9_000, n))
            folder = tmp_path / f"trial-{len(trials)}"
            (folder / "runs" / "r").mkdir(parents=True)
            with open(folder / "runs" / "r" / "returns.csv", "w") as f:
                f.write("episode,frame,return,length,seconds,best_tile,reached_2048,reached_8192\n")
                for i, value in enumerate(returns):
                    f.write(f"{i + 1},{i},{float(value)!r},1,0.0,1024,{int(value > 40_000)},0\n")
            metrics = {"best_tile": {"kind": "value", "mean": 1024.0}, "reached_2048": {"kind": "rate", "mean": 0.5},
                       "reached_8192": {"kind": "rate", "mean": 0.0}}
            trials.append({"id": str(len(trials)), "agent": agent, "environment": "2048", "seed": seed,
                           "status": "finished", "settings": {}, "train": {"run": "r", "metrics": metrics},
                           "run_dir": str(folder)})
    fig = experiment_figure(trials)
    fig.canvas.draw()
    shown = [ax for ax in fig.get_axes() if ax.get_visible()]
    assert [ax.get_title() for ax in shown] == ["2048", "2048: reached_2048"]  # 8192: never reached, no panel
    for ax in shown:
        assert ax.xaxis.get_offset_text().get_text() == "" and ax.yaxis.get_offset_text().get_text() == ""
        assert {t.get_text() for t in ax.get_legend().get_texts()} == {"ntuple_agent", "random"}
        assert all(len(line.get_xdata()) <= 300 for line in ax.get_lines())
    assert shown[1].get_ylim() == (0.0, 100.0)
    assert os.path.getsize(plot_experiment(trials, str(tmp_path / "plot.png"))) > 10_000

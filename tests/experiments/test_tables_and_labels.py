"""Experiment tables (issue 19, points 10 and 11): environment metrics as columns, folder agents by
name, and ``experiment show`` in the order of ``experiment run``."""

from __future__ import annotations

import csv
import json
import os

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


def test_metrics_columns_folder_labels_and_one_order(tmp_path):
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
    table = _table(ran.stdout)
    header = table[0].split()
    assert header[:3] == ["agent", "environment", "settings"]
    for column in ("best_tile", "reached_2048", "reached_4096", "reached_8192"):
        assert column in header
    rows = [line.split()[0] for line in table[1:]]
    other = os.path.normpath(str(tmp_path / "other" / "alpha_agent"))
    assert rows == ["zeta_agent", "random", os.path.normpath(str(exp / "alpha_agent")), other]
    assert not any("/./" in line for line in table)
    assert all("0.0% ± 0.0" in line for line in table[1:])  # rates in percent
    # experiment show: the very same table, in the same order (trials are stored by hash)
    planned = [t["id"] for t in json.loads((tmp_path / "out" / "experiment.json").read_text())["trials"]]
    assert planned != sorted(planned)  # the order of the folder names is not the plan's
    shown = agentos("experiment", "show", str(tmp_path / "out"), cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    strip = [line.rsplit(None, 2)[0] for line in table]  # without steps/s and wall (they are measured)
    assert [line.rsplit(None, 2)[0] for line in _table(shown.stdout)] == strip
    with open(tmp_path / "out" / "summary.csv") as f:
        summary = list(csv.DictReader(f))
    assert [r["agent"] for r in summary] == rows
    assert {r["reached_2048_mean"] for r in summary} == {"0.0"}
    assert all(float(r["best_tile_mean"]) >= 8 for r in summary)

"""Agents and helpers shared by the learning tests."""

from __future__ import annotations

import contextlib
import subprocess
import textwrap
import time
from pathlib import Path

CORRIDOR_SARSA = """\
[environment]
default = corridor

[policy]
default = q_table

[trainer]
default = sarsa

[environment.corridor]
package = agentos-env-corridor

[policy.q_table]
package = agentos-policy-q-table

[trainer.sarsa]
package = agentos-trainer-sarsa
alpha = 0.5
"""

GAME_2048_SARSA = """\
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


NTUPLE_TD_AGENT = """\
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
tuples = "0 1 2 3; 4 5 6 7"
[trainer.td]
package = agentos-trainer-td
"""


def ntuple_td_ini(**trainer_settings) -> str:
    """agent.ini of a small 2048 agent (two 4-tuples) that td trains; ``trainer_settings`` go under [trainer.td]."""
    return NTUPLE_TD_AGENT + "".join(f"{key} = {value}\n" for key, value in trainer_settings.items())


def make_agent(tmp_path: Path, text: str, name: str = "agent") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "agent.ini").write_text(textwrap.dedent(text))
    return folder


def only_run(agent: Path, mode: str | None = None) -> Path:
    runs = sorted(p for p in (agent / "runs").iterdir() if mode is None or f"-{mode}-" in p.name)
    assert len(runs) == 1, runs
    return runs[0]


@contextlib.contextmanager
def training(venv, agent: Path):
    """``agentos train 100000 --seed 1`` in ``agent``, yielded once its record exists and it has run
    for 3 s (returns.csv is written in batches); killed on the way out if still running."""
    proc = subprocess.Popen(
        [str(venv.bin / "agentos"), "train", "100000", "--seed", "1"],
        cwd=agent,
        env=venv.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not ((agent / "runs").exists() and list((agent / "runs").glob("*/run.json"))):
            if time.monotonic() > deadline:
                raise AssertionError("training never started")
            time.sleep(0.1)
        time.sleep(3.0)
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()

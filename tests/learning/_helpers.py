"""Agents and helpers shared by the learning tests."""

from __future__ import annotations

import textwrap
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


def make_agent(tmp_path: Path, text: str, name: str = "agent") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "agent.ini").write_text(textwrap.dedent(text))
    return folder


def only_run(agent: Path, mode: str | None = None) -> Path:
    runs = sorted(p for p in (agent / "runs").iterdir() if mode is None or f"-{mode}-" in p.name)
    assert len(runs) == 1, runs
    return runs[0]

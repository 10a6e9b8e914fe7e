"""Agent folders of the arena tests, on tic-tac-toe: the installed ``tictactoe`` environment component
(agentos-env-tictactoe, PettingZoo's classic game) or a local ``env.py:make`` of the same game, with
the installed ``random`` policy (it respects action masks) or a local policy (a perfect minimax player,
a seeded random legal mover, a ``student`` that a local trainer teaches)."""

from __future__ import annotations

import shutil
from pathlib import Path

AGENTS = Path(__file__).resolve().parent / "agents"
POLICIES = {"minimax": "minimax.py:Minimax", "random_masked": "random_masked.py:RandomMasked",
            "student": "student.py:Student", "raises": "faulty.py:Raises", "out_of_range": "faulty.py:OutOfRange",
            "illegal": "faulty.py:Illegal", "slow": "faulty.py:Slow"}


def agent_folder(parent: Path, name: str, policy: str = "random", env: str = "tictactoe") -> Path:
    """``parent/name``: an agent.ini whose environment is ``env`` (a component name, or ``file.py:make``
    of this folder's agents/) and whose policy is ``policy`` (``random``, or a local one of POLICIES)."""
    folder = parent / name
    folder.mkdir(parents=True)
    files = {"minimax.py"}
    ini = "[environment]\ndefault = game\n\n[environment.game]\n"
    if ":" in env:
        files.add(env.partition(":")[0])
        ini += f"source = {env}\n"
    else:
        ini = f"[environment]\ndefault = {env}\n"
    ini += f"\n[policy]\ndefault = {policy}\n"
    if policy in POLICIES:
        files.add(POLICIES[policy].partition(":")[0])
        ini += f"\n[policy.{policy}]\nsource = {POLICIES[policy]}\n"
    if policy == "student":
        ini += "\n[trainer]\ndefault = teach\n\n[trainer.teach]\nsource = student.py:Teach\n"
    for file in files:
        shutil.copy(AGENTS / file, folder / file)
    (folder / "agent.ini").write_text(ini)
    return folder

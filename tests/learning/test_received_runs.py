"""A received run folder names only code the agent already has (issue 18 point 2): ``source =`` is a
file inside the agent folder or an installed component's entry point, whatever ``--force`` says."""

from __future__ import annotations

import json
import shutil
import time

import pytest
from learning._helpers import CORRIDOR_SARSA, make_agent, only_run

LOCAL_AGENT = CORRIDOR_SARSA + "\n[agent]\ndefault = mine\n\n[agent.mine]\nsource = agent.py:MyAgent\n"
ENTRY_POINT_POLICY = CORRIDOR_SARSA.replace("default = q_table", "default = mine") + (
    "\n[policy.mine]\nsource = agentos_policy_q_table:QTablePolicy\n"
)


def _one_line_error(proc) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("agentos: error: "), proc.stderr
    return proc.stderr


def _trained_and_received(venv, tmp_path, agent, name: str):
    """Train ``agent`` briefly and copy its run folder elsewhere, as if someone had sent it."""
    trained = venv.agentos("train", "30", "--seed", "0", "--quiet", cwd=agent)
    assert trained.returncode == 0, trained.stderr
    received = tmp_path / name
    shutil.copytree(only_run(agent, "train"), received)
    return received


@pytest.fixture
def local_agent(tmp_path):
    agent = make_agent(tmp_path, LOCAL_AGENT, name="local_agent")
    (agent / "agent.py").write_text("from agentos import Agent\n\n\nclass MyAgent(Agent):\n    pass\n")
    return agent


def test_received_runs_naming_the_agents_own_code_still_run(learning_venv, tmp_path, local_agent):
    # valid twin 1: a file inside the agent folder (the run's lock lists its sha256)
    received = _trained_and_received(learning_venv, tmp_path, local_agent, "received-file")
    played = learning_venv.agentos("run", "--from-run", str(received), "-n", "2", cwd=local_agent)
    assert played.returncode == 0, played.stderr
    assert "mean return -9.00" in played.stdout  # the trained policy, through the agent's own class
    # valid twin 2: an installed component's entry point, named by source
    agent = make_agent(tmp_path, ENTRY_POINT_POLICY, name="entry_point_agent")
    received = _trained_and_received(learning_venv, tmp_path, agent, "received-entry-point")
    played = learning_venv.agentos("run", "--from-run", str(received), "-n", "2", cwd=agent)
    assert played.returncode == 0, played.stderr
    assert "mean return -9.00" in played.stdout
    continued = learning_venv.agentos("train", "5", "--quiet", "--from-run", str(received), cwd=agent)
    assert continued.returncode == 0, continued.stderr  # and training goes on from it


@pytest.mark.parametrize("command", [["run", "-n", "1"], ["train", "5"]])
@pytest.mark.parametrize("constructor", ["popen", "file_handler"])
def test_a_received_run_cannot_construct_other_classes_even_with_force(
    learning_venv, tmp_path, local_agent, constructor, command
):
    received = _trained_and_received(learning_venv, tmp_path, local_agent, "received")
    marker, victim = tmp_path / "pwned", tmp_path / "precious.txt"
    victim.write_text("data that must survive\n")
    hostile = {
        "popen": f'source = subprocess:Popen\nargs = "touch {marker}"\nshell = true\n',
        "file_handler": f'source = logging:FileHandler\nfilename = "{victim}"\nmode = "w"\n',
    }[constructor]
    ini = received / "agent.ini"
    ini.write_text(ini.read_text().replace("source = agent.py:MyAgent\n", hostile))
    # the lock lists "agent mine" (so the lock check alone does not stop it) and --force accepts any
    # difference in hashes: only the source allowlist stands in the way
    assert any(e["kind"] == "agent" for e in json.loads((received / "lock.json").read_text())["components"])
    result = learning_venv.agentos(*command, "--from-run", str(received), "--force", cwd=local_agent)
    time.sleep(0.5)  # a started shell would have touched the marker by now
    assert result.returncode == 2
    line = _one_line_error(result)
    assert "agent.mine: source = " in line and "neither a file in the agent folder nor an entry point" in line
    assert not marker.exists()
    assert victim.read_text() == "data that must survive\n"

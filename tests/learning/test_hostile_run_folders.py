"""Hostile run folders, each built here beside a valid twin (in-process: the test venv's editable
components). ``source =`` names one class or function defined in a file of the agent's own code;
``--force`` never accepts a local file of another hash; ``[agentos]`` comes from the user's agent.ini;
malformed records are skipped with one line; record text is printed without escape sequences;
a checkpoint that is a link is refused; errors name the run folder's agent.ini."""

from __future__ import annotations

import json
import os
import re
import shutil
import time

import pytest
from agentos.cli import main
from agentos.learning._records import _sha256_files
from learning._helpers import CORRIDOR_SARSA, make_agent

AGENT_PY = "import os\nfrom os import system\n\nfrom agentos import Agent\n\n\nclass MyAgent(Agent):\n    pass\n"
LOCAL_AGENT = CORRIDOR_SARSA + "\n[agent]\ndefault = mine\n\n[agent.mine]\nsource = agent.py:MyAgent\n"
ESC = "\x1b]0;owned\x07\x1b[2J"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTOS_CACHE_DIR", str(tmp_path / "cache"))
    yield
    from agentos.core._context import reset_active

    reset_active()


@pytest.fixture
def agent(tmp_path):
    folder = make_agent(tmp_path, LOCAL_AGENT, name="victim")
    (folder / "agent.py").write_text(AGENT_PY)
    return folder


def _cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return code, out, err


def _received(agent, tmp_path, capsys, name="received"):
    """Train the agent briefly and copy its run folder elsewhere, as if someone had sent it."""
    code, _, err = _cli(capsys, "train", agent / "agent.ini", "30", "--seed", "0", "--quiet")
    assert code == 0, err
    run = next(p for p in sorted((agent / "runs").iterdir()) if "-train-" in p.name)
    received = tmp_path / name
    shutil.copytree(run, received)
    shutil.rmtree(run)
    return received


def _set_source(received, source, *, settings="", lock_file=None):
    """The run's agent.ini names ``source`` (with ``settings``) and its lock the same text and the
    hash of ``lock_file`` (what an attacker who read the docs writes)."""
    ini = received / "agent.ini"
    text = re.sub(r"^source = .*\n", lambda _: f"source = {source}\n{settings}", ini.read_text(), flags=re.M)
    ini.write_text(text)
    lock = json.loads((received / "lock.json").read_text())
    for entry in lock["components"]:
        if entry["kind"] == "agent":
            entry["source"] = source
            if lock_file is not None:
                entry["sha256"] = _sha256_files([str(lock_file)])
    (received / "lock.json").write_text(json.dumps(lock))


def test_the_agents_own_class_from_a_received_run_still_runs(agent, tmp_path, capsys):
    received = _received(agent, tmp_path, capsys)
    code, out, err = _cli(capsys, "run", agent / "agent.ini", "--from-run", received, "-n", "2")
    assert code == 0, err
    assert "mean return -9.00" in out  # the trained policy, through the agent's own class
    code, out, err = _cli(capsys, "train", agent / "agent.ini", "3", "--quiet", "--from-run", received)
    assert code == 0, err


@pytest.mark.parametrize("command", [["run", "-n", "1"], ["train", "3"]])
@pytest.mark.parametrize(
    "hostile",
    ["chain", "re-exported", "venv-file", "hidden-folder", "experiments-folder"],
)
def test_a_received_run_cannot_run_commands_through_source(agent, tmp_path, capsys, hostile, command):
    received = _received(agent, tmp_path, capsys)
    marker = tmp_path / "pwned"
    touch = f'command = "touch {marker}"\n'
    if hostile == "chain":  # a dotted chain through the file's imports: os.system
        _set_source(received, "agent.py:os.system", settings=touch, lock_file=agent / "agent.py")
    elif hostile == "re-exported":  # one name, but imported into the file, not defined there
        _set_source(received, "agent.py:system", settings=touch, lock_file=agent / "agent.py")
    else:  # a file inside the agent folder that is not the agent's own code
        where = {"venv-file": ".venv/lib/python3.11/site-packages/pip", "hidden-folder": ".git/hooks",
                 "experiments-folder": "experiments/grid"}[hostile]
        payload = agent / where / "payload.py"
        payload.parent.mkdir(parents=True)
        payload.write_text(f"open({str(marker)!r}, 'w').close()\n" + AGENT_PY)
        _set_source(received, f"{where}/payload.py:MyAgent", lock_file=payload)
    for force in ([], ["--force"]):
        code, _, err = _cli(capsys, command[0], agent / "agent.ini", *command[1:], "--from-run", received, *force)
        time.sleep(0.2 if hostile in ("chain", "re-exported") else 0)  # a started shell would be done by now
        assert not marker.exists()
        assert code != 0 and err.count("\n") == 1, err
        if hostile == "re-exported":  # only importing the agent's own file shows where the name comes from
            assert "'agent.py:system' names no class or function defined in that file" in err, err
        else:  # refused before anything is imported
            assert code == 2 and "agent.mine: source" in err, err
        assert not marker.exists()


def test_a_received_run_placed_in_runs_cannot_name_its_own_code(agent, tmp_path, capsys):
    received = _received(agent, tmp_path, capsys)
    marker = tmp_path / "pwned"
    evil = agent / "runs" / "evilrun"
    shutil.copytree(received, evil)
    meta = json.loads((evil / "run.json").read_text())
    (evil / "run.json").write_text(json.dumps({**meta, "id": "evilrun"}))
    payload = evil / "payload.py"
    payload.write_text(f"open({str(marker)!r}, 'w').close()\n" + AGENT_PY)
    _set_source(evil, "runs/evilrun/payload.py:MyAgent", lock_file=payload)
    code, _, err = _cli(capsys, "run", agent / "agent.ini", "--from-run", "evilrun", "-n", "1")
    assert not marker.exists()
    assert code == 2 and "inside the runs folder" in err, err
    # the twin: the same run naming the agent's own file is used
    _set_source(evil, "agent.py:MyAgent", lock_file=agent / "agent.py")
    code, out, err = _cli(capsys, "run", agent / "agent.ini", "--from-run", "evilrun", "-n", "1")
    assert code == 0, err


def test_force_never_accepts_a_local_file_of_another_hash(agent, tmp_path, capsys):
    received = _received(agent, tmp_path, capsys)
    lock = json.loads((received / "lock.json").read_text())
    for entry in lock["components"]:
        if entry["kind"] == "policy":  # the twin: another installed version, which --force accepts
            entry["version"] = "0.0.1"
    (received / "lock.json").write_text(json.dumps(lock))
    code, _, err = _cli(capsys, "run", agent / "agent.ini", "--from-run", received, "-n", "1")
    assert code == 2 and "--force" in err, err
    code, _, err = _cli(capsys, "run", agent / "agent.ini", "--from-run", received, "-n", "1", "--force")
    assert code == 0, err
    (agent / "agent.py").write_text(AGENT_PY + "\nEDITED = True\n")  # the local file is not the locked one
    code, _, err = _cli(capsys, "run", agent / "agent.ini", "--from-run", received, "-n", "1", "--force")
    assert code == 2 and "local components differ" in err and err.count("\n") == 1, err


def test_the_agentos_section_comes_from_the_users_own_agent_ini(agent, tmp_path, capsys):
    received = _received(agent, tmp_path, capsys)
    elsewhere = tmp_path / "elsewhere"
    ini = received / "agent.ini"
    ini.write_text(f"[agentos]\nruns = {elsewhere}\n\n" + ini.read_text())
    for command in (["run", "-n", "1"], ["train", "2"]):
        code, _, err = _cli(capsys, command[0], agent / "agent.ini", *command[1:], "--from-run", received)
        assert code == 0, err
    assert not elsewhere.exists()
    assert len(list((agent / "runs").iterdir())) == 2  # the new records are where the user keeps runs
    # the twin: the user's own [agentos] runs is honoured with --from-run
    own = agent / "agent.ini"
    own.write_text("[agentos]\nruns = myruns\n\n" + own.read_text())
    code, _, err = _cli(capsys, "run", own, "--from-run", received, "-n", "1")
    assert code == 0, err
    assert len(list((agent / "myruns").iterdir())) == 1


def test_errors_about_a_received_runs_settings_name_its_file(agent, tmp_path, capsys):
    received = _received(agent, tmp_path, capsys)
    ini = received / "agent.ini"
    ini.write_text(ini.read_text().replace("alpha = 0.5", "alphaa = 0.5"))
    code, _, err = _cli(capsys, "run", agent / "agent.ini", "--from-run", received, "-n", "1")
    assert code == 2 and "alphaa" in err, err
    assert str(ini) in err and str(agent / "agent.ini") not in err, err
    # the [agentos] section is the user's, and so is the file its errors name
    ini.write_text(ini.read_text().replace("alphaa = 0.5", "alpha = 0.5"))
    own = agent / "agent.ini"
    own.write_text('[agentos]\nseed = "x"\n\n' + own.read_text())
    code, _, err = _cli(capsys, "run", own, "--from-run", received, "-n", "1")
    assert code == 2 and f"{own}: [agentos] seed must be an integer" in err, err


def test_a_checkpoint_that_is_a_link_is_refused(agent, tmp_path, capsys):
    received = _received(agent, tmp_path, capsys)
    name = json.loads((received / "run.json").read_text())["checkpoint"]
    outside = tmp_path / "outside" / name
    outside.parent.mkdir()
    shutil.copy(received / name, outside)
    twin = tmp_path / "twin"
    shutil.copytree(received, twin)
    (received / name).unlink()
    os.symlink(outside, received / name)
    code, _, err = _cli(capsys, "run", agent / "agent.ini", "--from-run", received, "-n", "1")
    assert code == 2 and "symbolic link" in err and err.count("\n") == 1, err
    code, _, err = _cli(capsys, "run", agent / "agent.ini", "--from-run", twin, "-n", "1")
    assert code == 0, err


@pytest.mark.parametrize("content", ["[1]", "[" * 100_000 + "]" * 100_000, '{"started": 5}',
                                     '{"id": "x", "started": 5}', '{"id": "y", "summary": {"episodes": "many"}}',
                                     '{"id": "z", "evaluation": {"seeds": "all"}}',
                                     '{"id": "w", "summary": {"evaluation": {"seeds": [1], "best": {"steps": "x"}}}}'])
def test_a_malformed_run_record_is_skipped_with_one_line(agent, tmp_path, capsys, content):
    code, _, err = _cli(capsys, "train", agent / "agent.ini", "5", "--seed", "0", "--quiet")
    assert code == 0, err
    good = next((agent / "runs").iterdir()).name
    bad = agent / "runs" / "bad"
    bad.mkdir()
    (bad / "run.json").write_text(content)
    code, out, err = _cli(capsys, "runs", "--agent", agent / "agent.ini")
    assert code == 0 and good in out, err
    assert err.count("\n") == 1 and "skipping malformed run record" in err and str(bad / "run.json") in err, err
    code, out, err = _cli(capsys, "runs", "show", good, "--agent", agent / "agent.ini")
    assert code == 0 and f"run {good}" in out, err
    code, out, err = _cli(capsys, "run", agent / "agent.ini", "-n", "1")
    assert code == 0 and good in out, err  # plain run still finds the trained policy
    code, out, err = _cli(capsys, "runs", "show", bad, "--agent", agent / "agent.ini")
    assert code == 2 and err.count("\n") == 1, err


def test_record_text_is_printed_without_escape_sequences(agent, tmp_path, capsys):
    received = _received(agent, tmp_path, capsys)
    meta = json.loads((received / "run.json").read_text())
    meta.update(id=f"evil{ESC}", status=f"finished{ESC}", mode=f"train{ESC}", error=f"boom{ESC}",
                components={**meta["components"], "policy": f"q_table{ESC}"})
    (received / "run.json").write_text(json.dumps(meta))
    code, out, err = _cli(capsys, "train", agent / "agent.ini", "2", "--quiet", "--from-run", received)
    assert code == 0, err
    assert "continued from run evil" in out and "\x1b" not in out + err and "\x07" not in out + err
    placed = agent / "runs" / "evil"
    shutil.copytree(received, placed)
    for argv in (["runs"], ["runs", "show", "evil"], ["runs", "show", str(placed)]):
        code, out, err = _cli(capsys, *argv, "--agent", agent / "agent.ini")
        assert code == 0, err
        assert "evil" in out and "\x1b" not in out + err and "\x07" not in out + err, out
    # the twin: plain text is printed as it is
    code, out, err = _cli(capsys, "runs", "show", good_id(agent), "--agent", agent / "agent.ini")
    assert code == 0 and "(train, finished)" in out, out


def good_id(agent) -> str:
    return next(p.name for p in (agent / "runs").iterdir() if "-train-" in p.name)


def test_force_accepts_another_installed_version_named_by_an_entry_point_source(tmp_path, capsys):
    text = CORRIDOR_SARSA.replace("default = q_table", "default = mine")
    agent = make_agent(tmp_path, text + "\n[policy.mine]\nsource = agentos_policy_q_table:QTablePolicy\n", "ep")
    code, _, err = _cli(capsys, "train", agent / "agent.ini", "5", "--seed", "0", "--quiet")
    assert code == 0, err
    received = next((agent / "runs").iterdir())
    lock = json.loads((received / "lock.json").read_text())
    for entry in lock["components"]:
        if entry["kind"] == "policy":  # as if made with another installed release of the component
            entry["sha256"] = "0" * 64
    (received / "lock.json").write_text(json.dumps(lock))
    code, _, err = _cli(capsys, "run", agent / "agent.ini", "--from-run", received, "-n", "1")
    assert code == 2 and "--force" in err, err
    code, _, err = _cli(capsys, "run", agent / "agent.ini", "--from-run", received, "-n", "1", "--force")
    assert code == 0, err

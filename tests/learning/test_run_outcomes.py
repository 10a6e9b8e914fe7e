"""Runs that tell the truth: final states, one "last 100", counted steps, one number style, drawn
seeds, failures and faults recorded, bad checkpoints and received run folders refused in one line."""

from __future__ import annotations

import csv
import json
import re
import signal
import textwrap
import time

import pytest
from learning._helpers import make_agent, ntuple_td_ini, only_run, training
from learning.test_torch_components import DQN_2048

NUMBER = r"-?\d{1,3}(?:,\d{3})*\.\d{2}"


def _returns(run) -> list[float]:
    with open(run / "returns.csv") as f:
        return [float(r["return"]) for r in csv.DictReader(f)]


def _one_line_error(proc) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("agentos: error: "), proc.stderr
    return proc.stderr


# -- issue 10 point 4: Ctrl-C (even repeated while the result is saved) ends the record "interrupted"
def test_repeated_ctrl_c_records_an_interrupted_run_and_run_says_so(learning_venv, agent_2048):
    with training(learning_venv, agent_2048) as proc:
        # Ctrl-C three times: stop after this episode, stop now, and once more while the record is saved
        for _ in range(3):
            proc.send_signal(signal.SIGINT)
            time.sleep(0.15)
        out, err = proc.communicate(timeout=90)
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in err
    run = only_run(agent_2048, "train")
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "interrupted" and meta["finished"]
    returns = _returns(run)
    assert meta["summary"]["episodes"] == len(returns) > 0
    assert meta["summary"]["steps"] > 0 and (run / "returns.png").exists()
    assert (run / "checkpoint.safetensors").exists()
    assert not [p.name for p in run.iterdir() if ".tmp" in p.name or ".partial" in p.name]

    listed = json.loads(learning_venv.agentos("runs", "--json", cwd=agent_2048).stdout)
    assert listed[0]["status"] == "interrupted" and listed[0]["episodes"] == len(returns)

    played = learning_venv.agentos("run", "-n", "1", cwd=agent_2048)
    assert played.returncode == 0, played.stderr
    assert f"policy trained by run {meta['id']}, which was interrupted" in played.stdout


# -- issue 10 points 5, 8: one "last 100", one number style
def test_last100_and_numbers_agree_across_outputs(learning_venv, corridor_agent):
    trained = learning_venv.agentos("train", "137", "--seed", "0", cwd=corridor_agent)
    assert trained.returncode == 0, trained.stderr
    run = only_run(corridor_agent, "train")
    returns = _returns(run)
    expected = f"{sum(returns[-100:]) / 100:,.2f}"
    assert f"last 100 {expected}," in trained.stdout
    table = learning_venv.agentos("runs", cwd=corridor_agent).stdout
    row = table.splitlines()[1].split()
    header = table.splitlines()[0].split()
    assert row[header.index("LAST100")] == expected and row[header.index("EPISODES")] == "137"
    shown = learning_venv.agentos("runs", "show", "latest", cwd=corridor_agent).stdout
    assert f"last 100:   mean return {expected}" in shown
    assert "{" not in shown and "None" not in shown and "'" not in shown, shown
    assert "request:    episodes 137; seed 0" in shown

    # 37 episodes: the mean of all of them, in `runs` as at the end of training
    short = learning_venv.agentos("train", "37", "--seed", "1", cwd=corridor_agent)
    newest = next(p for p in (corridor_agent / "runs").iterdir() if p.name != run.name)  # (ids of one second
    # sort by their random suffix: pick the other run, not the last name)
    value = f"{sum(_returns(newest)) / 37:,.2f}"
    assert f"last 100 {value}," in short.stdout
    rows = json.loads(learning_venv.agentos("runs", "--json", cwd=corridor_agent).stdout)
    assert f"{rows[-1]['last100_mean']:,.2f}" == value


def test_run_prints_every_number_in_one_style(learning_venv, tmp_path):
    agent = make_agent(
        tmp_path,
        """\
        [environment]
        default = 2048
        [policy]
        default = random
        [environment.2048]
        package = agentos-env-2048
        [policy.random]
        package = agentos-policy-random
        """,
    )
    result = learning_venv.agentos("run", "-n", "3", "--seed", "0", cwd=agent)
    assert result.returncode == 0, result.stderr
    episodes = [line for line in result.stdout.splitlines() if line.startswith("episode")]
    assert len(episodes) == 3
    for line in episodes:
        m = re.fullmatch(rf"episode +\d+: return +({NUMBER})  steps (\d{{1,3}}(?:,\d{{3}})*)", line)
        assert m, line
    summary = next(line for line in result.stdout.splitlines() if line.startswith("finished"))
    steps = re.search(r"episodes, (\S+) steps", summary).group(1)
    assert re.fullmatch(r"\d{1,3}(,\d{3})*", steps), summary  # 2048 random games: hundreds of steps each
    assert re.search(rf"mean return {NUMBER} ± {NUMBER} \(min {NUMBER}, max {NUMBER}\), {NUMBER} steps/s", summary)


# -- issue 10 point 6: --steps N takes and reports exactly N steps (the budget cuts the last episode)
def test_steps_budget_counts_every_step_taken(learning_venv, tmp_path):
    agent = make_agent(tmp_path, DQN_2048)
    result = learning_venv.agentos("train", "--steps", "700", "--seed", "0", "--quiet", cwd=agent)
    assert result.returncode == 0, result.stderr
    assert ", 700 steps," in result.stdout, result.stdout
    run = only_run(agent, "train")
    meta = json.loads((run / "run.json").read_text())
    assert meta["summary"]["steps"] == 700
    with open(run / "returns.csv") as f:
        assert int(list(csv.DictReader(f))[-1]["frame"]) == 700


# -- issue 10 point 7: the periodic line and the summary measure steps/s the same way
def test_progress_rate_and_summary_rate_are_one_figure(learning_venv, agent_2048):
    code = textwrap.dedent("""
        import time
        from agentos.core._runner import EpisodeResult, Run
        from agentos.cli._learning_commands import _Reporter
        reporter = _Reporter(10, "episodes", quiet=False, interval=0.0)
        time.sleep(0.5)  # the time before the run starts (imports, building the agent) is not training
        run = Run(agent=None, mode="train")
        run.started -= 2.0
        run.episodes.append(EpisodeResult(1.0, 1000))
        reporter.on_episode(run, run.episodes[0])
        print(run.summary()["steps_per_second"])
    """)
    result = learning_venv.run("python", "-c", code)
    assert result.returncode == 0, result.stderr
    line, summary = result.stdout.strip().splitlines()
    bar = float(re.search(r"([\d,.]+) steps/s", line).group(1).replace(",", ""))
    assert bar == pytest.approx(float(summary), rel=0.05)


# -- issue 10 point 9: a run without --seed draws a seed, records it, and it reproduces the run
def test_unseeded_run_records_the_seed_it_drew(learning_venv, tmp_path):
    agent = make_agent(
        tmp_path,
        """\
        [environment]
        default = 2048
        [policy]
        default = random
        [environment.2048]
        package = agentos-env-2048
        [policy.random]
        package = agentos-policy-random
        """,
    )
    first = learning_venv.agentos("run", "-n", "3", cwd=agent)
    assert first.returncode == 0, first.stderr
    meta = json.loads((only_run(agent) / "run.json").read_text())
    assert isinstance(meta["seed"], int)
    again = learning_venv.agentos("run", "-n", "3", "--seed", str(meta["seed"]), cwd=agent)
    episodes = [line for line in first.stdout.splitlines() if line.startswith("episode")]
    assert episodes == [line for line in again.stdout.splitlines() if line.startswith("episode")]


# -- issue 9 point 4: a run that fails ends "failed" with its error; a missing component stops first
def test_missing_policy_is_a_usage_error_before_anything_starts(learning_venv, tmp_path):
    text = "[environment]\ndefault = corridor\n\n[environment.corridor]\npackage = agentos-env-corridor\n"
    agent = make_agent(tmp_path, text)
    result = learning_venv.agentos("run", "-n", "2", cwd=agent)
    assert result.returncode == 2
    assert "names no policy" in _one_line_error(result)
    assert not (agent / "runs").exists()


def test_a_full_disk_fails_the_run_and_leaves_no_temporary_files(learning_venv, corridor_agent):
    # RLIMIT_FSIZE: writing past 20,000 bytes fails with EFBIG, as a full disk fails a write: the
    # record starts, then returns.csv (about 30 bytes an episode) and the PNG hit the limit
    code = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (20000, 20000)); "
        "from agentos.cli import main; sys.exit(main(['train', '3000', '--seed', '0', '--quiet']))"
    )
    # (tensorboard's own writer thread prints its failure: its tracker is left out here)
    env = {**learning_venv.env, "AGENTOS_DISABLE_PLUGINS": "tensorboard"}
    result = learning_venv.run("python", "-c", code, cwd=corridor_agent, env=env)
    assert result.returncode == 1
    assert "File too large" in _one_line_error(result)
    run = only_run(corridor_agent, "train")
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "failed" and "File too large" in meta["error"]
    assert not [p.name for p in run.iterdir() if ".tmp" in p.name or ".partial" in p.name]


# -- issue 9 point 5: a runs/ that cannot be written stops training before it starts
def test_unwritable_runs_folder_stops_training_before_it_starts(learning_venv, corridor_agent):
    (corridor_agent / "blocked").write_text("a file, not a folder\n")
    ini = corridor_agent / "agent.ini"
    ini.write_text(ini.read_text() + "\n[agentos]\nruns = blocked/runs\n")
    result = learning_venv.agentos("train", "50", cwd=corridor_agent)
    assert result.returncode == 2 and "cannot write the run record" in _one_line_error(result)
    assert result.stdout == ""  # nothing trained
    # a disk that refuses every write: the same, before training
    code = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0)); "
        "from agentos.cli import main; sys.exit(main(['train', '50', '--quiet']))"
    )
    ini.write_text(ini.read_text().replace("runs = blocked/runs", "runs = runs"))
    limited = learning_venv.run("python", "-c", code, cwd=corridor_agent)
    assert limited.returncode == 2 and "cannot write the run record" in _one_line_error(limited)
    assert list((corridor_agent / "runs").iterdir()) == []  # no half-made record left behind


# -- issue 9 point 6: bad and malicious checkpoints
def test_bad_checkpoints_are_one_line_and_never_unpickled(learning_venv, tmp_path, corridor_agent):
    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes(b"\x00not a checkpoint" * 10)
    result = learning_venv.agentos("run", "--checkpoint", str(garbage), "-n", "1", cwd=corridor_agent)
    assert result.returncode == 2
    line = _one_line_error(result)
    assert line.startswith(f"agentos: error: cannot load checkpoint {garbage}: ")
    assert line.rstrip().endswith("(use --fresh to run an untrained policy)")

    agent = make_agent(tmp_path, DQN_2048, name="dqn_agent")
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.pt"
    make = textwrap.dedent(f"""
        import os, torch
        class Evil:
            def __reduce__(self):
                return (os.system, ("touch {marker}",))
        torch.save({{"state": Evil()}}, {str(evil)!r})
    """)
    assert learning_venv.run("python", "-c", make).returncode == 0
    result = learning_venv.agentos("run", "--checkpoint", str(evil), "-n", "1", cwd=agent)
    assert result.returncode == 2
    assert f"cannot load checkpoint {evil}: " in _one_line_error(result)
    assert not marker.exists()


# -- issue 9 point 3: a received run folder is data, not code
def _received_run(tmp_path, agent_ini: str, components: list) -> str:
    folder = tmp_path / "received"
    folder.mkdir()
    (folder / "agent.ini").write_text(textwrap.dedent(agent_ini))
    (folder / "lock.json").write_text(json.dumps({"components": components}))
    (folder / "checkpoint.safetensors").write_bytes(b"")
    (folder / "run.json").write_text(
        json.dumps({"id": "received", "mode": "train", "status": "finished", "checkpoint": "checkpoint.safetensors"})
    )
    return str(folder)


def test_from_run_never_executes_what_a_received_run_names(learning_venv, tmp_path, corridor_agent):
    marker = tmp_path / "pwned"
    folder = _received_run(
        tmp_path,
        f"""\
        [environment]
        default = corridor
        [agent]
        default = evil
        [environment.corridor]
        package = agentos-env-corridor
        [agent.evil]
        source = os:system
        command = touch {marker}
        """,
        [],
    )
    result = learning_venv.agentos("run", "--from-run", folder, "-n", "1", "--force", cwd=corridor_agent)
    assert result.returncode == 2
    assert "agent.evil: source = 'os:system' is neither a file" in _one_line_error(result)
    assert not marker.exists()


def test_source_must_be_a_file_in_the_agent_folder_or_an_installed_component(learning_venv, tmp_path, corridor_agent):
    marker = tmp_path / "pwned"
    (tmp_path / "outside.py").write_text(f"open({str(marker)!r}, 'w').close()\nclass Outside: pass\n")
    ini = corridor_agent / "agent.ini"
    base = ini.read_text()
    ini.write_text(base + "\n[agent]\ndefault = evil\n\n[agent.evil]\nsource = ../outside.py:Outside\n")
    result = learning_venv.agentos("run", "-n", "1", cwd=corridor_agent)
    assert result.returncode == 2 and "outside the agent folder" in _one_line_error(result)
    assert not marker.exists()
    ini.write_text(base + f"\n[agent]\ndefault = evil\n\n[agent.evil]\nsource = os:system\ncommand = touch {marker}\n")
    result = learning_venv.agentos("run", "-n", "1", cwd=corridor_agent)
    assert result.returncode == 2 and "nor an entry point of an installed component" in _one_line_error(result)
    assert not marker.exists()


# -- issue 18 point 10: no policy can hang a run; diverging weights stop training with one line
STUCK_2048 = """\
[environment]
default = 2048
[policy]
default = {policy}
[environment.2048]
package = agentos-env-2048
[policy.up]
source = up.py:AlwaysUp
[policy.random]
package = agentos-policy-random
"""


def _stuck_agent(tmp_path, policy: str):
    agent = make_agent(tmp_path, STUCK_2048.format(policy=policy), name=f"stuck_{policy}")
    # "up" until up is illegal, then "up" for ever: the board never changes again
    (agent / "up.py").write_text("from agentos import Policy\n\n\nclass AlwaysUp(Policy):\n"
                                 "    def decide(self, observation):\n        return 0\n")
    return agent


def test_a_policy_that_makes_no_progress_ends_its_episodes(learning_venv, tmp_path):
    agent = _stuck_agent(tmp_path, "up")
    result = learning_venv.agentos("run", "-n", "2", "--seed", "0", cwd=agent, timeout=120)  # hung before
    assert result.returncode == 0, result.stderr
    meta = json.loads((only_run(agent) / "run.json").read_text())
    assert meta["status"] == "finished"
    assert meta["summary"]["episodes_cut"] == 2 and meta["summary"]["max_episode_steps"] == 100_000
    assert "note: 2 episodes did not end within 100,000 steps and were cut" in result.stdout
    with open(only_run(agent) / "returns.csv") as f:
        assert [int(r["length"]) for r in csv.DictReader(f)] == [100_000, 100_000]
    batched = learning_venv.agentos(
        "run", "-n", "4", "--n-envs", "2", "--max-episode-steps", "300", "--seed", "0", cwd=agent, timeout=120
    )
    assert batched.returncode == 0, batched.stderr
    assert "were cut" in batched.stdout and "the run ended early" in batched.stdout
    # the valid twin: a policy that plays on ends every episode itself, nothing is cut
    twin = _stuck_agent(tmp_path, "random")
    played = learning_venv.agentos("run", "-n", "2", "--seed", "0", "--max-episode-steps", "5000", cwd=twin)
    assert played.returncode == 0, played.stderr
    summary = json.loads((only_run(twin) / "run.json").read_text())["summary"]
    assert summary["episodes_cut"] == 0 and summary["max_episode_steps"] == 5000 and "were cut" not in played.stdout


def test_diverging_td_weights_stop_training_with_one_line(learning_venv, tmp_path):
    agent = make_agent(tmp_path, ntuple_td_ini(alpha=10.0), name="diverging")
    result = learning_venv.agentos("train", "50", "--seed", "1", "--quiet", cwd=agent)
    assert result.returncode == 1
    assert "td: the weights diverged (a TD error became NaN or Inf" in _one_line_error(result)
    assert "lower alpha (now 10)" in result.stderr
    meta = json.loads((only_run(agent, "train") / "run.json").read_text())
    assert meta["status"] == "failed" and "diverged" in meta["error"]
    # its weights are not numbers: `run` neither plays them by default nor loads them when asked
    fresh = learning_venv.agentos("run", "-n", "1", "--seed", "0", cwd=agent)
    assert fresh.returncode == 0 and "policy trained by" not in fresh.stdout, fresh.stderr
    checkpoint = only_run(agent, "train") / "checkpoint.safetensors"
    refused = learning_venv.agentos("run", "--checkpoint", str(checkpoint), "-n", "1", cwd=agent)
    assert refused.returncode == 2
    assert "weights are not all finite numbers" in _one_line_error(refused)
    # the valid twin: a sensible alpha trains and plays
    twin = make_agent(tmp_path, ntuple_td_ini(alpha=0.1), name="converging")
    trained = learning_venv.agentos("train", "50", "--seed", "1", "--quiet", cwd=twin)
    assert trained.returncode == 0, trained.stderr
    played = learning_venv.agentos("run", "-n", "1", "--seed", "0", cwd=twin)
    assert played.returncode == 0 and "policy trained by run" in played.stdout, played.stderr

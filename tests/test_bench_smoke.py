"""Every script in bench/ runs at a smoke size and writes its JSON, so that no figure in the docs loses the
script that made it (issue 34: a bench that nothing runs rots).

``SMOKE`` gives each script its smoke arguments: ``{out}`` is a JSON file in a temporary folder (never the
committed ``bench/*.json``); a script whose entry has no ``{out}`` prints its JSON on stdout. A new script
without an entry fails :func:`test_every_bench_script_has_a_smoke_run`. The smoke runs check that the
script completes and that its JSON holds figures, not the figures themselves (the machine is shared).
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"

#: script -> its smoke arguments (``{out}``: where it writes its JSON; without it, JSON on stdout)
SMOKE: dict[str, list[str]] = {
    "bench_2048.py": ["--seconds", "0.2", "--episodes", "20", "--json"],
    "bench_loop.py": ["--episodes", "20", "--rounds", "1", "--json", "--no-targets"],
    "bench_startup.py": ["--runs", "1", "--json", "--no-targets"],
    "bench_multiagent_loop.py": ["--episodes", "10", "--rounds", "1", "--json"],
    "bench_corridor_sarsa.py": ["--seeds", "0", "--episodes", "5", "--json"],
    "bench_ntuple_vs_cpp.py": ["--train-games", "20", "--boards", "20000", "--rounds", "1", "--blocks", "1",
                               "--block-games", "20", "--seconds", "0.2", "--json", "{out}"],
    "bench_ntuple_speed.py": ["--rounds", "1", "--seconds", "0.1", "--num-envs", "64", "--json", "{out}"],
    "bench_ntuple_learning.py": ["--minutes", "0.01", "--test-games", "20", "--expectimax-minutes", "0.01",
                                 "--json", "{out}", "--plot", "curve.png"],
    "bench_train_overhead.py": ["--episodes", "5", "--repeats", "1", "--json"],
    "bench_2048_learning.py": ["--seeds", "0", "--dqn-seeds", "0", "--sarsa-episodes", "3", "--dqn-steps", "100",
                               "--eval-games", "2", "--plot", "curve.png", "--json"],
    "bench_cartpole_sb3.py": ["--steps", "256", "--seeds", "0", "--eval-episodes", "1", "--json"],
    "bench_arena.py": ["--train-games", "20", "--games", "4", "--json", "{out}"],
    "bench_selfplay.py": ["tictactoe", "--games", "20", "--eval", "2", "--json", "{out}"],
    "bench_experiments.py": ["overhead", "--trials", "1", "--seconds", "0.2", "--repeats", "1"],
    "bench_ntuple_options.py": ["--rounds", "1", "--seconds", "0.1", "--search-seconds", "0.1", "--pretrain", "0",
                                "--depths", "1 2", "--json", "{out}"],
    "bench_ntuple_recipes.py": ["--seconds", "0.1", "--games", "10", "--recipes", "td0", "--json", "{out}"],
    "bench_academy.py": ["--calls", "5", "--seconds", "0.2", "--json", "{out}"],
    "bench_hybrid.py": ["--calls", "5", "--json", "{out}"],
    "bench_pbt.py": ["--agents", "2", "--rounds", "1", "--games", "2", "--eval-games", "2", "--json", "{out}",
                     "--png", "pbt.png"],
    "bench_server.py": ["--projects", "20", "--requests", "50", "--rounds", "1", "--json"],
    # the slow parts of three scripts are left out of their smoke runs (an experiment on the MLflow server, and
    # the fresh venvs that time installs: minutes on a shared 2-core machine)
    "bench_tracking.py": ["--episodes", "5", "--repeats", "1", "--trials", "0", "--json"],
    "bench_registry.py": ["--reps", "1", "--projects", "20", "--only", "publish", "--json"],
    "bench_results.py": ["--reps", "1", "--games", "10", "--train", "10", "--projects", "20", "--only", "publish",
                         "--out", "{out}"],
    "bench_first_results.py": ["--episodes", "2", "--games", "10", "--reps", "1", "--out", "{out}"],
    "bench_results_runs.py": ["runs", "--only", "sarsa", "--sarsa-episodes", "5", "--json", "{out}",
                              "--gif", "replay.gif"],
    # a few steps of each mode: the smoke checks the script, not the figures (fixed costs dominate)
    "bench_sb3_speed.py": ["--pairs", "zoo_ppo_cartpole_v1:512", "zoo_dqn_atari:64:learning_starts=32,buffer_size=500",
                           "--repeats", "1", "--eval", "256:1", "--json", "{out}"],
    # two trials of a tune (pruned, then unpruned) and their checks, one seed of 256 steps each
    "bench_tune.py": ["tune", "--trials", "2", "--steps", "256", "--seeds", "1", "--test-episodes", "1",
                      "--check-seeds", "1", "--workers", "1", "--same-trials", "--json", "{out}"],
    # the zoo's PPO on CartPole in a new agent folder, 300 of its 100,000 steps, 2 test episodes
    "bench_zoo_results.py": ["zoo", "--only", "cartpole", "--scale", "0.003", "--episodes", "2", "--json", "{out}"],
    # {run}: a run folder of `agentos train` (a small n-tuple network trained for a few games, see tiny_run)
    "bench_ntuple_hour.py": ["--run", "{run}", "--greedy-games", "4", "--search-games", "2", "--processes", "1",
                             "--json", "{out}", "--plot", "curve.png"],
    # one reproduction on one thread of the index's corridor_sarsa (cartpole_ppo's fresh venv with torch and SB3
    # and 100,000 steps take ~100 s; tests/learning/test_reproduce_sb3.py reproduces an SB3 run)
    "bench_reproduce_cartpole_ppo.py": ["--threads", "1", "--package", "corridor_sarsa", "--json", "{out}"],
}

#: scripts whose smoke run needs a fixture of another test module (bubblewrap, a running Slurm, a served
#: index): script -> the test module that runs it at its smoke size
SMOKE_ELSEWHERE: dict[str, str] = {
    "bench_sandbox.py": "tests/sandbox/test_bench_sandbox_smoke.py",
    "bench_slurm.py": "tests/experiments/test_slurm.py",
    "bench_verify_upload.py": "tests/server/test_bench_verify_upload.py",
}


#: the n-tuple agent of {run}: straight and square 4-tuples (1.3 MB of weights), as bench_pbt's
TINY_AGENT = """[environment]
default = 2048

[policy]
default = ntuple

[trainer]
default = td

[policy.ntuple]
tuples = 0 1 2 3; 4 5 6 7; 0 1 4 5; 1 2 5 6; 5 6 9 10
"""


def tiny_run(folder: pathlib.Path, agent_ini: str = TINY_AGENT) -> pathlib.Path:
    """A run folder of ``agentos train 20`` (20 games) of ``agent_ini`` (:data:`TINY_AGENT`) in ``folder``."""
    agent = folder / "agent"
    agent.mkdir()
    (agent / "agent.ini").write_text(agent_ini)
    subprocess.run([sys.executable, "-m", "agentos", "train", "20", "--seed", "1"], cwd=agent, check=True,
                   capture_output=True, timeout=300)
    return next(run for run in sorted((agent / "runs").iterdir()) if "-train-" in run.name)


def scripts() -> list[str]:
    return sorted(path.name for path in BENCH.glob("*.py"))


def test_every_bench_script_has_a_smoke_run():
    assert len(scripts()) > 20
    missing = sorted(set(scripts()) - set(SMOKE) - set(SMOKE_ELSEWHERE))
    assert not missing, f"bench scripts without a smoke run (add them to SMOKE in {__file__}): {missing}"
    for script, module in SMOKE_ELSEWHERE.items():
        assert script in (ROOT / module).read_text() and "--smoke" in (ROOT / module).read_text(), (script, module)


def test_every_bench_script_is_run_by_a_nox_session():
    import ast

    tree = ast.parse((ROOT / "noxfile.py").read_text())
    listed = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign | ast.Assign):
            target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0]
            if isinstance(target, ast.Name) and target.id in ("SPEED_BENCHES", "LEARNING_BENCHES", "BY_HAND"):
                listed[target.id] = ast.literal_eval(node.value)
    named = {entry[0] for entry in [*listed["SPEED_BENCHES"], *listed["LEARNING_BENCHES"]]} | set(listed["BY_HAND"])
    assert named == set(scripts()), f"list every bench script in noxfile.py: {sorted(set(scripts()) ^ named)}"


def run_smoke(script: str, folder: pathlib.Path) -> dict:
    """Run ``script`` at its smoke size in ``folder``; the JSON it wrote (or printed)."""
    out = folder / "out.json"
    args = [arg.replace("{out}", str(out)) for arg in SMOKE[script]]
    if "{run}" in args:
        args[args.index("{run}")] = str(tiny_run(folder))
    env = {**os.environ, "PYGAME_HIDE_SUPPORT_PROMPT": "1", "MPLBACKEND": "Agg"}
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, str(BENCH / script), *args], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=300)
    seconds = time.perf_counter() - started
    assert proc.returncode == 0, f"{script} failed in {seconds:.1f} s:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    text = out.read_text() if "{out}" in SMOKE[script] else proc.stdout
    print(f"{script}: {seconds:.1f} s")
    return json.loads(text)


@pytest.mark.parametrize("script", [name for name in scripts() if name not in SMOKE_ELSEWHERE])
def test_bench_script_runs_at_smoke_size(script, tmp_path):
    committed = {path: path.stat().st_mtime_ns for path in [*BENCH.glob("*.json"), *BENCH.glob("*.png")]}
    if script not in SMOKE:
        pytest.fail(f"{script} has no smoke run: add its smoke arguments to SMOKE")
    result = run_smoke(script, tmp_path)
    assert isinstance(result, dict | list) and result, f"{script} wrote no figures"
    assert {path: path.stat().st_mtime_ns for path in [*BENCH.glob("*.json"), *BENCH.glob("*.png")]} == committed


def test_the_hour_bench_plays_the_network_of_a_folder_holding_only_the_preset(tmp_path):
    """A run of a folder whose agent.ini names the preset and overrides its tuples: the bench plays the network the
    preset and its overrides built (as the hours' folders were), not the policy's default tuples."""
    run = tiny_run(tmp_path, "[preset]\ndefault = ntuple_2048_master\n\n[preset.ntuple_2048_master]\n"
                             "policy.tuples = 0 1 2 3; 4 5 6 7\ntrainer.threads = 1\n")
    out = tmp_path / "out.json"
    proc = subprocess.run([sys.executable, str(BENCH / "bench_ntuple_hour.py"), "--run", str(run), "--greedy-games",
                           "4", "--search-games", "2", "--processes", "1", "--json", str(out)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["greedy"]["games"] == 4 and result["greedy"]["mean_score"] > 0

"""The 2048 master from the embedded index, as a new user gets it (issue 20, point 6).

(a) A new venv with only the index: ``pip install -r $AGENTOS_INDEX_URL/install/agentos-core.txt``
    (timed apart: the set-up), then in a new agent folder ``agentos init``, ``agentos install
    environment 2048 --default``, ``agentos install policy 2048_master --default`` and ``agentos run -n
    EPISODES --seed SEED``: its 2048-rate, mean score and wall time (goal: >= 94%, >= 100,000, < 60 s).
(b) ``agentos install policy 2048_master`` versus ``pip install`` of the same wheel (its requirement
    agentos-policy-ntuple from the same index), each into a fresh copy of a venv holding agentos-core
    and the 2048 environment (goal: within 1.2x).
(c) ``agentos.api.evaluate`` of GAMES games with the installed master versus the same games played by
    its own compiled kernel (``agentos_policy_ntuple.network.play_games``, the package's weights) in
    the same process, alternated; the returns must be identical (goal: within 1.2x). The CLI's wall
    time (``agentos evaluate 2048_master --environment 2048 --episodes GAMES``) is given too.

    python bench/bench_first_results.py [--index index] [--episodes 100] [--games 1000] [--reps 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "2048_master"

IN_PROCESS = r"""
import json, statistics, sys, time
import numpy as np
from agentos.api import evaluate
from agentos_env_2048 import Game2048Env
from agentos_env_2048.kernels import has_legal_move, move, move_tables, new_board, njit, seed_states, spawn
from agentos_policy_ntuple.network import bounds_array, new_table, play_games, search_action
from agentos_policy_2048_master import policy as trained

games, reps = int(sys.argv[1]), int(sys.argv[2])
env = Game2048Env()

@njit
def play_searching(states, depth, net, size, bounds, tables, table, threshold, scores):
    for game in range(states.shape[0]):  # play_games, with the policy's search and tile-downgrading
        board, score = new_board(states, game), 0
        while has_legal_move(board):
            board, points = move(board, search_action(board, depth, net, size, bounds, tables, table, threshold),
                                 tables)
            score += points
            board = spawn(board, states, game)
        scores[game] = score

def kernel():
    p = trained(env.observation_space, env.action_space)  # the package's weights, dequantized as shipped
    states = np.array([seed_states(s, 1)[0] for s in range(games)], dtype=np.uint64)
    scores, tiles = np.zeros(games, np.int64), np.zeros(games, np.int64)
    if p.searches:  # 3.0.0 downgrades tiles from 32768 on, as its preset does
        threshold = p.downgrade_tile.bit_length() - 1 if p.downgrade_tile else 0
        play_searching(states, p.search_depth or p.depth, p.network, p.layout.size, bounds_array(p.stage_bounds),
                       move_tables(), new_table(p.cache_bits), threshold, scores)
    else:
        play_games(states, 1, p.network, move_tables(), scores, tiles)
    return [float(s) for s in scores]

def ours():
    return evaluate("2048_master", environment="2048", episodes=games, seed=0)

record = ours()  # warm: numba caches loaded
assert record["returns"] == kernel(), "evaluate played other games than the kernel"
times = {"ours": [], "kernel": []}
for rep in range(reps):
    order = [("ours", ours), ("kernel", kernel)]
    for label, fn in order if rep % 2 == 0 else order[::-1]:
        start = time.perf_counter()
        fn()
        times[label].append(time.perf_counter() - start)
o, k = statistics.median(times["ours"]), statistics.median(times["kernel"])
print(json.dumps({"games": games, "mean_score": record["mean"], "metrics": record["metrics"],
                  "evaluate_s": times["ours"], "kernel_s": times["kernel"], "ratio": o / k, "target": 1.2}))
"""


def _run(cmd, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(map(str, cmd))}\n{proc.stdout[-1000:]}\n{proc.stderr[-2000:]}")
    return proc


def _timed(cmd, **kw) -> float:
    start = time.perf_counter()
    _run(cmd, **kw)
    return round(time.perf_counter() - start, 3)


def _copy_venv(template: str, target: str) -> str:
    shutil.copytree(template, target, symlinks=True)
    cfg = os.path.join(target, "pyvenv.cfg")
    with open(cfg) as f:
        text = f.read()
    with open(cfg, "w") as f:
        f.write(text.replace(template, target))
    return os.path.join(target, "bin", "python")


def fresh_master(work: str, index: str, env: dict, episodes: int, seed: int) -> dict:
    venv = os.path.join(work, "venv")
    out = {"venv_s": _timed([sys.executable, "-m", "venv", venv])}
    py = os.path.join(venv, "bin", "python")
    core = f"{index}/install/agentos-core.txt"
    out["core_install_s"] = _timed([py, "-m", "pip", "install", "-q", "-r", core], env=env)
    agent = os.path.join(work, "agent")
    out["init_s"] = _timed([py, "-m", "agentos", "init", agent], env=env)
    out["install_environment_s"] = _timed([py, "-m", "agentos", "install", "environment", "2048", "--default"],
                                          cwd=agent, env=env)
    template = os.path.join(work, "template")  # core + the environment: for (b)
    shutil.copytree(venv, template, symlinks=True)
    out["install_policy_s"] = _timed([py, "-m", "agentos", "install", "policy", NAME, "--default"], cwd=agent, env=env)
    out["run_s"] = _timed([py, "-m", "agentos", "run", "-n", str(episodes), "--seed", str(seed)], cwd=agent, env=env)
    (newest,) = sorted(glob.glob(os.path.join(agent, "runs", "*-run-*")))[-1:]
    with open(os.path.join(newest, "run.json")) as f:
        summary = json.load(f)["summary"]
    out.update(episodes=summary["episodes"], seed=seed, mean_score=summary["mean_return"],
               metrics=summary.get("metrics"), run=os.path.basename(newest),
               goal="2048-rate >= 0.94, mean >= 100,000, agentos run < 60 s")
    return out, py, agent, template


def install_vs_pip(work: str, template: str, index: str, env: dict, reps: int) -> dict:
    from packaging.version import Version

    wheels = glob.glob(os.path.join(ROOT, "index", "files", "agentos-policy-2048-master", "*.whl"))
    wheel = max(wheels, key=lambda path: Version(os.path.basename(path).split("-")[1]))  # what `install` takes
    ours, theirs = [], []
    for rep in range(reps):
        a = _copy_venv(template, os.path.join(work, f"ours-{rep}"))
        b = _copy_venv(template, os.path.join(work, f"pip-{rep}"))
        agent = os.path.join(work, f"agent-{rep}")
        os.makedirs(agent)
        with open(os.path.join(agent, "agent.ini"), "w") as f:
            f.write("[environment]\ndefault = 2048\n")
        pairs = [(ours, [a, "-m", "agentos", "install", "policy", NAME], agent),
                 (theirs, [b, "-m", "pip", "install", "-q", "--extra-index-url", f"{index}/simple", wheel], work)]
        for bucket, cmd, cwd in pairs if rep % 2 == 0 else pairs[::-1]:
            bucket.append(_timed(cmd, cwd=cwd, env=env))
        shutil.rmtree(os.path.dirname(os.path.dirname(a)))
        shutil.rmtree(os.path.dirname(os.path.dirname(b)))
    o, t = statistics.median(ours), statistics.median(theirs)
    return {"agentos_install_s": ours, "pip_install_s": theirs, "ratio": o / t, "target": 1.2}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", default=os.path.join(ROOT, "index"))
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--out", metavar="FILE")
    args = parser.parse_args()
    index = "file://" + os.path.abspath(args.index)
    env = {**os.environ, "AGENTOS_INDEX_URL": index, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("AGENTOS_AGENT_INI", None)
    env.pop("VIRTUAL_ENV", None)
    result = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "index": index,
              "machine": f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start"}
    with tempfile.TemporaryDirectory(prefix="agentos-first-") as work:
        result["fresh"], py, agent, template = fresh_master(work, index, env, args.episodes, args.seed)
        print(json.dumps({"fresh": result["fresh"]}), flush=True)
        result["install"] = install_vs_pip(work, template, index, env, args.reps)
        print(json.dumps({"install": result["install"]}), flush=True)
        proc = _run([py, "-c", IN_PROCESS, str(args.games), str(args.reps)], cwd=agent, env=env)
        result["evaluate"] = json.loads(proc.stdout.strip().splitlines()[-1])
        result["evaluate"]["cli_s"] = _timed([py, "-m", "agentos", "evaluate", NAME, "--environment", "2048",
                                              "--episodes", str(args.games), "--seed", "0", "--json"],
                                             cwd=agent, env=env)
        print(json.dumps({"evaluate": result["evaluate"]}), flush=True)
    if args.out:
        with open(args.out + ".partial", "w") as f:
            json.dump(result, f, indent=2)
        os.replace(args.out + ".partial", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

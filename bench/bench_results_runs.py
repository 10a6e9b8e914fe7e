"""The runs behind the first published results: each trained by ``agentos train`` in its own agent folder.

Agents (folders made under ``DIR``):

- ``2048-master``: the n-tuple network (default 4x6-tuples, 8 symmetries) trained by ``td`` -- the
  recipe of ``bench/bench_ntuple_learning.py``, TD(0) with ``alpha = 0.1`` and then ``alpha = 0.01`` --
  as successive ``agentos train`` runs, each starting from the previous one's checkpoint
  (``--checkpoint``): ``--master-stages`` ``alpha:games:seed`` (default: the runs that made the
  published master, 148,813 + 60,000 games at 0.1 and 30,000 at 0.01: the first was a longer run
  stopped with Ctrl-C after its 148,813th game, and td is deterministic, so these should give the
  same weights again -- not re-run to check). The last checkpoint is the master. Then ``--test-games`` greedy
  games of it on unseen seeds (2048-rate, mean score), and the weights' size in float32 / float16 /
  int8 with the score each quantization costs (the quantized weights are played, de-quantized to
  float32 for the kernel).
- ``corridor-sarsa``: q_table + sarsa on corridor (``--sarsa-episodes``, seed 0).
- ``cartpole-ppo``: SB3 PPO on CartPole-v1 with the rl-baselines3-zoo hyperparameters of
  ``bench/bench_cartpole_sb3.py`` (``--ppo-steps``, seed 0).

``agentos`` is the one next to this Python (``--agentos`` names another); each agent's packages must
be installed there.  Figures go to ``--json`` (written after each agent).

    python bench/bench_results_runs.py DIR [--only master sarsa ppo] [--json bench/results_runs.json]
    python bench/bench_results_runs.py DIR --only measure   # the master's tests again, no training
    python bench/bench_results_runs.py DIR --only replay --gif docs/img/2048-replay.gif  # one game of it

``replay`` needs agentos-core with ``agentos.plugin_api.record_episodes`` and imageio (the replay extra).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

MASTER_INI = """\
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

[trainer.td]
package = agentos-trainer-td
alpha = {alpha}
"""

SARSA_INI = """\
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

PPO_INI = """\
[environment]
default = gymnasium

[policy]
default = sb3

[trainer]
default = sb3

[environment.gymnasium]
package = agentos-env-gymnasium
id = CartPole-v1

[policy.sb3]
package = agentos-policy-sb3
device = cpu

[trainer.sb3]
package = agentos-trainer-sb3
algorithm = PPO
n_envs = 8
n_steps = 32
batch_size = 256
gae_lambda = 0.8
gamma = 0.98
n_epochs = 20
ent_coef = 0.0
learning_rate = lin_0.001
clip_range = lin_0.2
"""


def _write_atomic(path: str, text: str) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as handle:
        handle.write(text)
    os.replace(tmp, path)


def _train(agentos: str, folder: str, args: list[str]) -> dict:
    """``agentos train ARGS`` in ``folder``; returns the new run's id, folder, wall time and command."""
    before = set(os.listdir(os.path.join(folder, "runs"))) if os.path.isdir(os.path.join(folder, "runs")) else set()
    command = [agentos, "train", *args, "--quiet"]
    started = time.perf_counter()
    subprocess.run(command, cwd=folder, check=True)
    seconds = time.perf_counter() - started
    new = sorted(set(os.listdir(os.path.join(folder, "runs"))) - before)
    if len(new) != 1:
        raise SystemExit(f"expected one new run in {folder}/runs, found {new}")
    run_dir = os.path.join(folder, "runs", new[0])
    with open(os.path.join(run_dir, "run.json")) as handle:
        record = json.load(handle)
    return {"run": new[0], "run_dir": run_dir, "seconds": round(seconds, 1),
            "command": " ".join(["agentos", "train", *args, "--quiet"]),
            "checkpoint": os.path.join(run_dir, record["checkpoint"]) if record.get("checkpoint") else None}


def _agent(directory: str, name: str, ini: str) -> str:
    folder = os.path.join(directory, name)
    os.makedirs(folder, exist_ok=True)
    _write_atomic(os.path.join(folder, "agent.ini"), ini)
    return folder


def train_master(agentos: str, directory: str, stages: list[tuple[float, int, int]]) -> dict:
    """One ``agentos train GAMES --seed SEED`` per stage at its ``alpha``, each from the previous checkpoint."""
    folder = _agent(directory, "2048-master", MASTER_INI.format(alpha=stages[0][0]))
    runs, checkpoint = [], None
    for alpha, games, seed in stages:
        _write_atomic(os.path.join(folder, "agent.ini"), MASTER_INI.format(alpha=alpha))
        start = ["--checkpoint", checkpoint] if checkpoint else []
        runs.append({"alpha": alpha, **_train(agentos, folder, [str(games), "--seed", str(seed), *start])})
        checkpoint = runs[-1]["checkpoint"]
    return {"folder": folder, "stages": runs, "checkpoint": checkpoint}


def _stages(text: str) -> list[tuple[float, int, int]]:
    stages = []
    for part in text.split(","):
        alpha, games, seed = part.split(":")
        stages.append((float(alpha), int(games), int(seed)))
    return stages


def _play(weights, layout, seed: int, games: int) -> dict:
    import numpy as np
    from agentos_env_2048.kernels import move_tables, seed_states
    from agentos_policy_ntuple.network import network, play_games

    tables, net = move_tables(), network(weights, layout)
    states = seed_states(seed, games)
    scores = np.zeros(games, np.int64)
    tops = np.zeros(games, np.int64)
    started = time.perf_counter()
    moves = play_games(states, 1, net, tables, scores, tops)
    seconds = time.perf_counter() - started
    return {"games": games, "mean_score": float(scores.mean()), "median_score": float(np.median(scores)),
            **{f"rate_{1 << e}": float((tops >= e).mean()) for e in (11, 12, 13, 14)},
            "moves": int(moves), "seconds": round(seconds, 1)}


def _file_size(tensors: dict) -> dict:
    """The safetensors file's size, and deflated (as in a wheel, zlib level 6)."""
    import zlib

    from safetensors.numpy import save_file

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "w.safetensors")
        save_file(tensors, path)
        with open(path, "rb") as handle:
            data = handle.read()
    return {"bytes": len(data), "deflated_bytes": len(zlib.compress(data, 6))}


BLOCK = 4096  #: weights sharing one int8 scale in the block-wise quantization


def measure_master(checkpoint: str, test_seed: int, games: int) -> dict:
    """Greedy games of the checkpoint, and of its float16 and int8 (per-tuple-table scale) copies."""
    import numpy as np
    from agentos_policy_ntuple import NTuplePolicy

    policy = NTuplePolicy()
    policy.load(checkpoint)
    weights, layout = policy.weights, policy.layout
    _play(weights, layout, test_seed + 1, 1)  # compile outside the clock
    result = {"checkpoint": checkpoint, "checkpoint_bytes": os.path.getsize(checkpoint),
              "weights": int(weights.size), "nonzero": int(np.count_nonzero(weights)), "test_seed": test_seed}
    result["float32"] = {**_file_size({"weights": weights}), **_play(weights, layout, test_seed, games)}
    print(json.dumps({"float32": result["float32"]}), flush=True)
    half = weights.astype(np.float16)
    if not np.isfinite(half).all():
        result["float16"] = {"error": "weights overflow float16"}
    else:
        result["float16"] = {**_file_size({"weights": half}),
                             **_play(half.astype(np.float32), layout, test_seed, games)}
    print(json.dumps({"float16": result["float16"]}), flush=True)
    scale = float(np.abs(weights).max()) / 127.0 or 1.0
    quantized = np.clip(np.rint(weights / scale), -127, 127).astype(np.int8)
    restored = quantized.astype(np.float32) * np.float32(scale)
    result["int8"] = {**_file_size({"weights": quantized, "scale": np.array([scale], np.float32)}),
                      "scale": scale, **_play(restored, layout, test_seed, games)}
    print(json.dumps({"int8": result["int8"]}), flush=True)
    padded = np.zeros(-(-weights.size // BLOCK) * BLOCK, np.float32)
    padded[:weights.size] = weights
    blocks = padded.reshape(-1, BLOCK)
    scales = (np.abs(blocks).max(axis=1) / 127.0).astype(np.float32)
    scales[scales == 0] = 1.0
    quantized = np.clip(np.rint(blocks / scales[:, None]), -127, 127).astype(np.int8)
    restored = (quantized.astype(np.float32) * scales[:, None]).reshape(-1)[:weights.size]
    result["int8_blocks"] = {**_file_size({"weights": quantized.reshape(-1), "scales": scales}), "block": BLOCK,
                             **_play(np.ascontiguousarray(restored), layout, test_seed, games)}
    print(json.dumps({"int8_blocks": result["int8_blocks"]}), flush=True)
    return result


def replay_master(checkpoint: str, path: str, seed: int, every: int, quantize: str | None = None) -> dict:
    """One greedy game of the master as a GIF, one frame in ``every`` moves (and the last); with
    ``quantize`` (int8, float16) played by the weights as ``agentos publish --run --quantize`` ships them."""
    import tempfile

    from agentos.plugin_api import record_episodes
    from agentos.results import check_weights, dequantized
    from agentos.results import quantize as quantize_weights
    from agentos_env_2048 import Game2048Env
    from agentos_policy_ntuple import NTuplePolicy

    policy = NTuplePolicy()
    with tempfile.TemporaryDirectory() as work:
        if quantize:
            shipped = os.path.join(work, "weights.safetensors")
            quantize_weights(checkpoint, shipped, quantize)
            policy.load(dequantized(shipped, check_weights(shipped), work))
        else:
            policy.load(checkpoint)
    out = record_episodes(policy, Game2048Env(render_mode="rgb_array"), path, seed=seed, every=every)
    print(json.dumps(out), flush=True)
    return {**out, "seed": seed, "every": every, "checkpoint": checkpoint, "quantize": quantize}


def train_sarsa(agentos: str, directory: str, episodes: int) -> dict:
    folder = _agent(directory, "corridor-sarsa", SARSA_INI)
    return {"folder": folder, **_train(agentos, folder, [str(episodes), "--seed", "0"])}


def train_ppo(agentos: str, directory: str, steps: int) -> dict:
    folder = _agent(directory, "cartpole-ppo", PPO_INI)
    return {"folder": folder, **_train(agentos, folder, [str(steps), "--steps", "--seed", "0"])}


def _latest_master(directory: str) -> str:
    runs = os.path.join(directory, "2048-master", "runs")
    for run in sorted(os.listdir(runs), reverse=True):
        with open(os.path.join(runs, run, "run.json")) as handle:
            record = json.load(handle)
        if record.get("checkpoint") and record.get("status", "finished") == "finished":
            return os.path.join(runs, run, record["checkpoint"])
    raise SystemExit(f"no finished master run in {runs}")


def _machine() -> str:
    """This machine, as the figures of this run were measured on it: processor, cores, load before the run."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), model)
    except OSError:
        pass
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "unknown"
    return f"{model}, {os.cpu_count()} cores; load average before the run {load} (figures are wall times)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--only", nargs="+", default=["master", "sarsa", "ppo"],
                        choices=["master", "measure", "replay", "sarsa", "ppo"])
    parser.add_argument("--agentos", default=os.path.join(os.path.dirname(sys.executable), "agentos"))
    parser.add_argument("--master-stages", type=_stages, default=_stages("0.1:148813:1,0.1:60000:4,0.01:30000:5"),
                        metavar="ALPHA:GAMES:SEED,...")
    parser.add_argument("--test-seed", type=int, default=20260)
    parser.add_argument("--test-games", type=int, default=1000)
    parser.add_argument("--sarsa-episodes", type=int, default=500)
    parser.add_argument("--ppo-steps", type=int, default=100_000)
    parser.add_argument("--json", default="bench/results_runs.json")
    parser.add_argument("--checkpoint", default=None, help="measure/replay this master checkpoint (default: newest)")
    parser.add_argument("--gif", default="docs/img/2048-replay.gif")
    parser.add_argument("--gif-quantize", choices=["int8", "float16"], default=None,
                        help="replay with the weights quantized as the published package ships them")
    parser.add_argument("--gif-seed", type=int, default=1)
    parser.add_argument("--gif-every", type=int, default=16)
    args = parser.parse_args()
    os.makedirs(args.directory, exist_ok=True)
    agentos = shutil.which(args.agentos) or args.agentos
    result = {}
    if os.path.isfile(args.json):
        with open(args.json) as handle:
            result = json.load(handle)
    result["machine"] = _machine()

    def save():
        _write_atomic(args.json, json.dumps(result, indent=2) + "\n")

    if "master" in args.only:
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        result["master"] = {"started": started, **train_master(agentos, args.directory, args.master_stages)}
        save()
    if "master" in args.only or "measure" in args.only:
        checkpoint = args.checkpoint or _latest_master(args.directory)
        result.setdefault("master", {})["test"] = measure_master(checkpoint, args.test_seed, args.test_games)
        save()
    if "replay" in args.only:
        checkpoint = args.checkpoint or _latest_master(args.directory)
        result.setdefault("master", {})["replay"] = replay_master(checkpoint, args.gif, args.gif_seed, args.gif_every,
                                                                   args.gif_quantize)
        save()
    if "sarsa" in args.only:
        result["sarsa"] = train_sarsa(agentos, args.directory, args.sarsa_episodes)
        save()
    if "ppo" in args.only:
        result["ppo"] = train_ppo(agentos, args.directory, args.ppo_steps)
        save()


if __name__ == "__main__":
    main()

"""Steps/s of ``agentos train`` against the same SB3 algorithm and hyperparameters run directly.

For each pair (an ``agentos-preset-zoo`` preset and a step budget), two modes train the same settings
for the same steps, each in a process of its own with torch on one thread, alternated ``--repeats``
times (A B A B: a shared machine's drift falls on both):

- ``agentos``: ``agentos.api.train`` of an agent.ini whose default is the preset (what ``agentos install
  preset NAME --default`` writes), run record, trackers and checkpoint included;
- ``sb3``: stable-baselines3 (or sb3-contrib) directly, from the preset's settings read as data here (not
  through AgentOS's trainer): ``make_vec_env`` with ``n_envs`` (``VecNormalize`` when ``normalize``),
  ``lin_X`` schedules, ``policy_kwargs``, action noise, then ``learn(total_timesteps=steps)``.

Two figures, each as steps/s and the ratio agentos/sb3 of the medians (and of the fastest of each):
``whole_call``, the wall time of the process's training call (agentos: components built from agent.ini, the
run record written at the end, its returns.png among it; sb3: environments, model, ``learn``, ``save``), and
``training``, the model made and trained (agentos: the run's own ``seconds``, from its start to its summary;
sb3: the model's construction and ``learn``). Pairs whose task needs a package that is
missing (Box2D, ale-py) are reported as skipped with the reason.

``--eval EVERY:EPISODES`` adds two modes, each side evaluating during training: ``agentos+eval`` (agent.ini's
``[train] eval_every_steps = EVERY``, ``eval_episodes = EPISODES``, the best model kept) and ``sb3+eval``
(SB3's ``EvalCallback`` on an environment of its own, ``eval_freq = EVERY // n_envs``, the best model saved),
and reports ``evaluation_overhead``: each side's steps/s without evaluation over its steps/s with it
(medians; 1.10 means evaluating made training 10% slower).

    python bench/bench_sb3_speed.py [--pairs zoo_ppo_cartpole_v1:100000 zoo_dqn_atari:10000:learning_starts=1000 ...]
                                    [--repeats 3] [--eval 25000:5] [--json FILE]

The Atari pair is a short run of rl-zoo's DQN on PongNoFrameskip-v4 with learning from step 1,000 (rl-zoo's
100,000 would leave a short run without a single update); AgentOS's Atari settings are Gymnasium's
``AtariPreprocessing`` and frame stack, SB3's are its ``AtariWrapper`` and ``VecFrameStack``: the same
preprocessing, two implementations.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

#: PRESET:STEPS[:KEY=VALUE,...] (trainer settings overriding the preset's, in both modes)
PAIRS = ["zoo_ppo_cartpole_v1:100000", "zoo_sac_pendulum_v1:5000", "zoo_dqn_atari:10000:learning_starts=1000"]

AGENT_INI = ("[agentos]\nruns = {runs}\n\n[environment]\ndefault = {environment}\n\n[preset]\ndefault = {preset}\n\n"
             "[preset.{preset}]\npackage = agentos-preset-zoo\n{overrides}{train}")

CHILD = r"""
import json, os, sys, time
import torch
torch.set_num_threads(1)
mode, preset, steps, folder = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
sys.path.insert(0, os.path.dirname(sys.argv[5]))
overrides, evaluation = json.loads(sys.argv[6]), json.loads(sys.argv[7])
import bench_sb3_speed as bench
started = time.perf_counter()
side = bench.train_agentos if mode.startswith("agentos") else bench.train_sb3
loop = side(preset, steps, folder, overrides, evaluation if mode.endswith("+eval") else None)
print(json.dumps({"seconds": time.perf_counter() - started, "loop": loop}))
"""


def preset_settings(preset: str) -> tuple[str, dict, dict]:
    """The preset's task id, trainer settings and environment settings, as plain data."""
    from agentos.experiments import load_preset

    loaded = load_preset(preset)
    environment = dict(loaded.environments.get(loaded.environment, {}).get("environment", {}))
    trainer = dict(loaded.components["trainer"][1])
    return environment.pop("id"), trainer, environment


def train_agentos(preset: str, steps: int, folder: str, overrides: dict, evaluation: list | None = None) -> float:
    """Trains; returns the run's own seconds (its summary's: the model made and trained, from the run's start).

    ``evaluation`` ([every, episodes]) turns on agent.ini's evaluation during training."""
    from agentos import api
    from agentos.experiments import load_preset

    train = ""
    if evaluation:
        train = (f"\n[train]\neval_every_steps = {evaluation[0]}\neval_episodes = {evaluation[1]}\n"
                 "keep_best = true\n")
    path = os.path.join(folder, "agent.ini")
    with open(path, "w") as handle:
        handle.write(AGENT_INI.format(runs=os.path.join(folder, "runs"), preset=preset,
                                      environment=load_preset(preset).environment, train=train,
                                      overrides="".join(f"trainer.{k} = {v}\n" for k, v in overrides.items())))
    return api.train(path, steps=steps, seed=0)["seconds"]


def _schedule(value):
    if isinstance(value, str) and value.startswith("lin_"):
        initial = float(value[4:])
        return lambda progress: progress * initial
    return value


def _number(value):
    if isinstance(value, str):
        for kind in (int, float):
            try:
                return kind(value)
            except ValueError:
                pass
    return value


def train_sb3(preset: str, steps: int, folder: str, overrides: dict, evaluation: list | None = None) -> float:
    """Trains; returns the seconds of the model made and trained (as the run's own seconds count).

    ``evaluation`` ([every, episodes]) adds SB3's ``EvalCallback`` on an environment of its own."""
    import numpy as np
    from stable_baselines3.common.env_util import make_atari_env, make_vec_env
    from stable_baselines3.common.noise import NormalActionNoise
    from stable_baselines3.common.vec_env import VecFrameStack, VecNormalize

    task, settings, env_settings = preset_settings(preset)
    settings.update(overrides)
    algorithm = settings.pop("algorithm")
    network = settings.pop("network", "MlpPolicy")
    n_envs = int(settings.pop("n_envs", 1))
    normalize = settings.pop("normalize", False)
    frame_stack = env_settings.pop("frame_stack", None)
    kwargs = {key: _schedule(_number(value)) for key, value in settings.items()}
    if "policy_kwargs" in kwargs:
        kwargs["policy_kwargs"] = json.loads(kwargs["policy_kwargs"])
    def environments(count: int, seed: int, training: bool = True):
        if env_settings.get("atari_wrappers") or task.startswith("ALE/"):  # SB3's AtariWrapper, zoo's frame stack
            import ale_py
            import gymnasium

            gymnasium.register_envs(ale_py)
            made = VecFrameStack(make_atari_env(task, n_envs=count, seed=seed), int(frame_stack or 4))
        else:
            made = make_vec_env(task, n_envs=count, seed=seed)
        if normalize not in (False, "false", "False"):
            options = json.loads(normalize) if isinstance(normalize, str) and normalize.startswith("{") else {}
            made = VecNormalize(made, training=training, **({"gamma": kwargs["gamma"]} if "gamma" in kwargs else {}),
                                **options)
        return made

    env = environments(n_envs, 0)
    noise = kwargs.pop("action_noise", None)
    if noise:
        sigma = float(noise.split("_")[-1])
        shape = env.action_space.shape
        kwargs["action_noise"] = NormalActionNoise(np.zeros(shape), sigma * np.ones(shape))
    try:
        import stable_baselines3 as sb3

        cls = getattr(sb3, algorithm)
    except AttributeError:
        import sb3_contrib

        cls = getattr(sb3_contrib, algorithm)
    callback = None
    if evaluation:
        from stable_baselines3.common.callbacks import EvalCallback

        callback = EvalCallback(environments(1, 1_000_000, training=False), n_eval_episodes=int(evaluation[1]),
                                eval_freq=max(int(evaluation[0]) // n_envs, 1), best_model_save_path=folder,
                                verbose=0)
    started = time.perf_counter()
    model = cls(network, env, seed=0, device="cpu", verbose=0, **kwargs)
    model.learn(total_timesteps=steps, callback=callback)
    seconds = time.perf_counter() - started
    model.save(os.path.join(folder, "model.zip"))
    return seconds


def _missing(preset: str) -> str | None:
    """Why the pair cannot run here (its preset or its task's package is missing), else None."""
    try:
        task, _, env_settings = preset_settings(preset)
        import gymnasium

        if env_settings.get("atari_wrappers") or task.startswith("ALE/"):
            import ale_py

            gymnasium.register_envs(ale_py)
        gymnasium.make(task).close()
    except Exception as exc:  # noqa: BLE001 - reported, not raised: the other pairs still run
        return f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
    return None


def _child(mode: str, preset: str, steps: int, overrides: dict, evaluation: list | None) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "OMP_NUM_THREADS": "1", "PYGAME_HIDE_SUPPORT_PROMPT": "1"}
        done = subprocess.run([sys.executable, "-c", CHILD, mode, preset, str(steps), folder, __file__,
                               json.dumps(overrides), json.dumps(evaluation)],
                              capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise SystemExit(f"{mode} {preset} failed: {done.stderr.strip()[-2000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", nargs="+", default=PAIRS, help="PRESET:STEPS ...")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--eval", default=None, metavar="EVERY:EPISODES",
                        help="also train with evaluation during training on each side, and report its overhead")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    evaluation = [int(part) for part in args.eval.split(":")] if args.eval else None
    out = {"script": "bench/bench_sb3_speed.py", "command": " ".join(sys.argv), "machine": platform.node(),
           "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "threads": 1,
           "pairs": []}
    for pair in args.pairs:
        preset, steps, *rest = pair.split(":")
        steps = int(steps)
        overrides = dict(item.split("=", 1) for item in rest[0].split(",")) if rest and rest[0] else {}
        reason = _missing(preset)
        if reason:
            out["pairs"].append({"preset": preset, "steps": steps, "overrides": overrides, "skipped": reason})
            print(json.dumps(out["pairs"][-1]), flush=True)
            continue
        modes = ["agentos", "sb3"] + (["agentos+eval", "sb3+eval"] if evaluation else [])
        rates = {mode: [] for mode in modes}
        loops = {mode: [] for mode in modes}
        for _ in range(args.repeats):
            for mode in modes:
                timed = _child(mode, preset, steps, overrides, evaluation)
                rates[mode].append(steps / timed["seconds"])
                loops[mode].append(steps / timed["loop"])
        entry = {"preset": preset, "steps": steps, "overrides": overrides}
        for label, figures in (("whole_call", rates), ("training", loops)):
            median = {mode: statistics.median(values) for mode, values in figures.items()}
            entry[label] = {
                "steps_per_second": {mode: [round(v, 1) for v in values] for mode, values in figures.items()},
                "ratio_median": round(median["agentos"] / median["sb3"], 3),
                "ratio_best": round(max(figures["agentos"]) / max(figures["sb3"]), 3),
            }
        if evaluation:
            entry["evaluation"] = {"every_steps": evaluation[0], "episodes": evaluation[1]}
            entry["evaluation_overhead"] = {
                side: round(statistics.median(rates[side]) / statistics.median(rates[f"{side}+eval"]), 3)
                for side in ("agentos", "sb3")}
        out["pairs"].append(entry)
        print(json.dumps(out["pairs"][-1]), flush=True)
    if args.json:
        tmp = f"{args.json}.tmp{os.getpid()}"
        with open(tmp, "w") as handle:
            json.dump(out, handle, indent=2)
        os.replace(tmp, args.json)
    else:
        print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

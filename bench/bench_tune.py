"""Does ``agentos tune`` earn its keep? A search from rl-zoo's default PPO ranges against the zoo's tuned preset.

On CartPole-v1 with SB3 PPO (``zoo_ppo_cartpole_v1``: rl-zoo's tuned settings, 8 environments), every
trial trains ``--seeds`` seeds for ``--steps`` steps and tests ``--test-episodes`` episodes. The search
space is rl-zoo's ``sample_ppo_params`` (``rl_zoo3/hyperparams_opt.py``) in the experiment file's terms:
its powers of two as choices, ``1 - gamma`` and ``1 - gae_lambda`` as the values they give (log ranges
become the same ranges of gamma and gae_lambda, sampled uniformly); the network's size and activation and
``max_grad_norm`` stay at the preset's (a preset's settings are the ones it names). Two tunes of
``--trials`` trials with the same sampler seed, two at a time:

- ``pruned``: the median pruner, 4 reports per seed while it trains (``[tune] reports = 4``); with several
  ``--pruner`` names, one pruned tune each (``pruned`` is the first, the others under ``other_pruners``);
- ``unpruned``: ``pruner = none``.

Reported: each tune's wall time and best trial, and the ratio of the wall times. TPE learns from the scores,
so the two tunes sample different trials after the first ones (and slow settings, small batches with many
epochs, cost several times fast ones). ``--same-trials`` isolates what pruning saves: ``--trials`` settings
are drawn once (uniformly from the space, log ranges on a log scale, seeded by ``--draw-seed``) and both tunes
are given them to try, in the same order (``tune(..., enqueue=...)``). ``--pruner`` names the pruned tunes'
pruners (median, median-time, successive-halving, hyperband). Then the best settings of
each tune and the preset as it is are trained again on ``--check-seeds`` new seeds (100, 101, ...) for the
same steps, and their test returns compared: IQM over seeds with its 95% interval (``agentos.stats``).

    python bench/bench_tune.py DIR [--trials 30] [--steps 20000] [--seeds 2] [--check-seeds 5]
                               [--sampler tpe|random] [--pruner median ...] [--same-trials] [--draw-seed 0]
                               [--no-check] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import time

PRESET = "zoo_ppo_cartpole_v1"

TUNE_INI = """\
[experiment]
name = {name}
agents = {preset}
environments = gymnasium
seeds = {seeds}
steps = {steps}
test-episodes = {test_episodes}

[search]
trainer.batch_size = [choice, 8, 16, 32, 64, 128, 256, 512, 1024]
trainer.n_steps = [choice, 32, 64, 128, 256, 512, 1024, 2048, 4096]
trainer.gamma = [float, 0.97, 0.9999]
trainer.gae_lambda = [float, 0.9, 0.9999]
trainer.learning_rate = [float, 0.00001, 0.002, log]
trainer.ent_coef = [float, 0.00000001, 0.1, log]
trainer.clip_range = [choice, 0.1, 0.2, 0.3, 0.4]
trainer.n_epochs = [choice, 1, 5, 10, 20]

[tune]
trials = {trials}
sampler = {sampler}
pruner = {pruner}
reports = {reports}
parallel = {parallel}
seed = 0
"""


def draw_trials(path: str, count: int, seed: int) -> list[dict]:
    """``count`` settings drawn uniformly from the file's [search] space (log ranges on a log scale)."""
    import math
    import random

    from agentos.tuning import read_search

    rng = random.Random(seed)
    params = read_search(path).params
    drawn = []
    for _ in range(count):
        values = {}
        for param in params:
            if param.kind == "choice":
                values[param.name] = rng.choice(param.choices)
            elif param.log:
                values[param.name] = math.exp(rng.uniform(math.log(param.low), math.log(param.high)))
            else:
                values[param.name] = rng.uniform(param.low, param.high)
        drawn.append(values)
    return drawn


def run_tune(directory: str, name: str, pruner: str, args) -> dict:
    from agentos.tuning import best_trials, tune

    path = os.path.join(directory, f"{name}.ini")
    with open(path, "w") as handle:
        handle.write(TUNE_INI.format(name=name, preset=PRESET, seeds=args.seeds, steps=args.steps,
                                     test_episodes=args.test_episodes, trials=args.trials, pruner=pruner,
                                     sampler=args.sampler,
                                     reports=4 if pruner != "none" else 0, parallel=args.workers))
    enqueue = draw_trials(path, args.trials, args.draw_seed) if args.same_trials else None
    started = time.perf_counter()
    study = tune(path, workers=args.workers, quiet=True, enqueue=enqueue)
    seconds = time.perf_counter() - started
    states = {}
    for trial in study.trials:
        states[trial.state.name.lower()] = states.get(trial.state.name.lower(), 0) + 1
    report = best_trials(os.path.join(directory, "experiments", name), top=1)
    best = report["best"][0] if report["best"] else None
    per_trial = [{"number": t.number, "state": t.state.name.lower(), "value": t.value,
                  "seconds": round((t.datetime_complete - t.datetime_start).total_seconds(), 1)
                  if t.datetime_complete and t.datetime_start else None} for t in study.trials]
    return {"pruner": pruner, "seconds": round(seconds, 1), "trials": states, "per_trial": per_trial,
            "best": best and {"value": best["value"], "params": best["params"]}}


def check(directory: str, name: str, settings: dict, args) -> dict:
    """The settings trained again on new seeds: the IQM of their test returns over seeds."""
    from agentos import stats
    from agentos.experiments import run_experiment

    seeds = list(range(100, 100 + args.check_seeds))
    result_folder = os.path.join(directory, "experiments", f"check-{name}")
    run_experiment([PRESET], ["gymnasium"], seeds=seeds, steps=args.steps, test_episodes=args.test_episodes,
                   settings={f"trainer.{k.split('.', 1)[-1]}": v for k, v in settings.items()},
                   folder=result_folder, workers=args.workers)
    with open(os.path.join(result_folder, "summary.json")) as handle:
        rows = json.load(handle)["trials"]
    scores = [float(t["test_return"]) for t in rows if t.get("status") == "finished"]
    summary = stats.summarize(scores)
    return {"settings": settings, "seeds": seeds, "test_returns": scores,
            "iqm": round(summary["iqm"], 2), "interval": [round(x, 2) for x in summary["interval"] or []]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--test-episodes", type=int, default=10)
    parser.add_argument("--check-seeds", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sampler", choices=["tpe", "random"], default="tpe",
                        help="random: both tunes sample the same trials (the sampler does not learn from the scores)")
    parser.add_argument("--pruner", nargs="+", choices=["median", "median-time", "successive-halving", "hyperband"],
                        default=["median"], help="the pruned tunes' pruners (one tune each)")
    parser.add_argument("--same-trials", action="store_true",
                        help="both tunes try the same drawn settings, in the same order")
    parser.add_argument("--draw-seed", type=int, default=0, help="--same-trials: the seed of the draw")
    parser.add_argument("--no-check", action="store_true", help="skip the checks on new seeds")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    directory = os.path.abspath(args.directory)
    shutil.rmtree(os.path.join(directory, "experiments"), ignore_errors=True)
    os.makedirs(directory, exist_ok=True)
    os.chdir(directory)  # tune's experiment folders are relative to the working directory
    out = {"script": "bench/bench_tune.py", "command": " ".join(sys.argv), "machine": platform.node(),
           "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "preset": PRESET,
           "steps": args.steps, "seeds": args.seeds, "trials": args.trials, "workers": args.workers}
    out["pruned"] = run_tune(directory, "pruned", args.pruner[0], args)
    others = {name: run_tune(directory, f"pruned-{name}", name, args) for name in args.pruner[1:]}
    out["unpruned"] = run_tune(directory, "unpruned", "none", args)
    out["wall_time_ratio"] = round(out["unpruned"]["seconds"] / out["pruned"]["seconds"], 2)
    if others:
        unpruned = out["unpruned"]["seconds"]
        out["other_pruners"] = {name: tuned | {"wall_time_ratio": round(unpruned / tuned["seconds"], 2)}
                                for name, tuned in others.items()}
    out["sampler"] = args.sampler
    out["same_trials"] = {"draw_seed": args.draw_seed} if args.same_trials else None
    out["check"] = {} if args.no_check else {"preset": check(directory, "preset", {}, args)}
    for name in () if args.no_check else ("pruned", "unpruned"):
        if out[name]["best"]:
            out["check"][name] = check(directory, name, out[name]["best"]["params"], args)
    for name, tuned in () if args.no_check else others.items():
        if tuned["best"]:
            out["check"][f"pruned-{name}"] = check(directory, f"pruned-{name}", tuned["best"]["params"], args)
    text = json.dumps(out, indent=2)
    if args.json:
        tmp = f"{args.json}.tmp{os.getpid()}"
        with open(tmp, "w") as handle:
            handle.write(text)
        os.replace(tmp, args.json)
    print(text)


if __name__ == "__main__":
    main()

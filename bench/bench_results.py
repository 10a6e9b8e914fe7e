"""Results benchmarks: evaluate, publish and install of a trained-policy package.

(a) ``agentos evaluate`` of 1,000 2048 games with an n-tuple network policy (its run's checkpoint)
    versus the same games (same seeds, same tile draws) played by the policy's own compiled kernel
    (``agentos_policy_ntuple.network.play_games``) in-process; the returns must be identical.
    Target: at most 1.2x. With ``--isolated``, the same evaluation of the published package in a
    fresh venv, its set-up (venv, installs) timed apart from the episodes.
(b) publishing the trained package (the wheel ``agentos publish --run`` builds) into an index of
    5,000 projects versus publishing a plain component's wheel into the same index. Target: 1.5x.
(c) ``agentos install policy NAME`` of the trained package versus ``pip install`` of the same
    wheel, each into a fresh copy of one venv that holds its requirements. Target: 1.2x.

No 2048 master network exists yet: the policy is a small network (eight 4-tuples: rows and
columns, 524,288 weights) trained here by ``agentos train`` with the td trainer for ``--train``
games; its games are shorter than a master's (so per-step overhead weighs more in (a)).

    python bench/bench_results.py [--reps 5] [--games 1000] [--train 3000] [--projects 5000] [--isolated] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
TUPLES = "0 1 2 3; 4 5 6 7; 8 9 10 11; 12 13 14 15; 0 4 8 12; 1 5 9 13; 2 6 10 14; 3 7 11 15"
AGENT = f"""[environment]
default = 2048
[policy]
default = ntuple
[trainer]
default = td
[environment.2048]
package = agentos-env-2048
[policy.ntuple]
package = agentos-policy-ntuple
tuples = "{TUPLES}"
[trainer.td]
package = agentos-trainer-td
"""
NAME = "bench_ntuple"


def _run(cmd, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(map(str, cmd))}\n{proc.stderr[-2000:]}")
    return proc


def _timed(cmd, **kw) -> float:
    start = time.perf_counter()
    _run(cmd, **kw)
    return time.perf_counter() - start


def train(work: str, games: int) -> tuple[str, str]:
    agent = os.path.join(work, "agent")
    os.makedirs(agent)
    with open(os.path.join(agent, "agent.ini"), "w") as f:
        f.write(AGENT)
    _run([sys.executable, "-m", "agentos", "train", str(games), "--seed", "1"], cwd=agent)
    run = next(r for r in sorted(os.listdir(os.path.join(agent, "runs"))) if "-train-" in r)
    return agent, run


def bench_evaluate(agent: str, run: str, games: int, reps: int) -> dict:
    import numpy as np
    from agentos.api import evaluate
    from agentos_env_2048.kernels import move_tables, seed_states
    from agentos_policy_ntuple import NTuplePolicy
    from agentos_policy_ntuple.network import play_games
    from gymnasium import spaces

    def kernel() -> list[float]:
        policy = NTuplePolicy(spaces.Box(0, 17, (4, 4), np.uint8), spaces.Discrete(4), tuples=TUPLES)
        policy.load(os.path.join(agent, "runs", run, "checkpoint.safetensors"))
        states = np.array([seed_states(s, 1)[0] for s in range(games)], dtype=np.uint64)
        scores, tiles = np.zeros(games, np.int64), np.zeros(games, np.int64)
        play_games(states, 1, policy.network, move_tables(), scores, tiles)
        return [float(s) for s in scores]

    ini = os.path.join(agent, "agent.ini")
    ours, theirs = [], []
    record = evaluate(run=run, agent_ini=ini, episodes=games, seed=0)  # warm: numba caches loaded
    expected = kernel()
    if record["returns"] != expected:
        raise SystemExit("evaluate played other games than the kernel")
    for rep in range(reps):
        order = [("ours", lambda: evaluate(run=run, agent_ini=ini, episodes=games, seed=0)), ("kernel", kernel)]
        for label, fn in order if rep % 2 == 0 else order[::-1]:
            start = time.perf_counter()
            fn()
            (ours if label == "ours" else theirs).append(time.perf_counter() - start)
    cli_start = time.perf_counter()
    _run([sys.executable, "-m", "agentos", "evaluate", "--run", run, "-n", str(games), "--json"], cwd=agent)
    cli = time.perf_counter() - cli_start
    o, t = statistics.median(ours), statistics.median(theirs)
    return {"games": games, "moves": int(sum(record["lengths"])), "mean_score": record["mean"],
            "metrics": record["metrics"], "evaluate_s": ours, "kernel_s": theirs, "median_evaluate_s": o,
            "median_kernel_s": t, "ratio": o / t, "target": 1.2, "cli_evaluate_s": cli}


def _wheelhouse(work: str) -> str:
    out = os.path.join(work, "wheelhouse")
    dirs = [os.path.join(ROOT, "agentos-core")] + [os.path.join(ROOT, "plugins", p) for p in (
        "agentos-env-2048", "agentos-policy-ntuple", "agentos-trainer-td", "agentos-policy-random",
        "agentos-env-corridor")]
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", out, *dirs])
    return out


def publish_trained(agent: str, run: str, index: str, keep: str) -> str:
    _run([sys.executable, "-m", "agentos", "publish", "--run", run, "--name", NAME, "--index", index,
          "--episodes", "100", "--keep", keep], cwd=agent)
    return next(os.path.join(keep, f) for f in os.listdir(keep) if f.endswith(".whl"))


def bench_publish(trained_wheel: str, projects: int, reps: int, work: str) -> dict:
    from agentos.registry import publish_files
    from bench_registry import _wheel

    wheels = os.path.join(work, "plain-wheels")
    os.makedirs(wheels)
    index = os.path.join(work, "big-index")
    start = time.perf_counter()
    publish_files([_wheel(wheels, i) for i in range(projects)], index)
    initial = time.perf_counter() - start
    trained, plain = [], []
    for rep in range(reps):
        renamed = os.path.join(work, f"t{rep}")
        os.makedirs(renamed)
        # the same trained wheel under a new version each time (versions are immutable)
        copy = _reversion(trained_wheel, f"1.0.{rep + 1}", renamed)
        new_plain = _wheel(wheels, projects + rep)
        for label, path in ([("trained", copy), ("plain", new_plain)] if rep % 2 == 0
                            else [("plain", new_plain), ("trained", copy)]):
            start = time.perf_counter()
            publish_files([path], index)
            (trained if label == "trained" else plain).append(time.perf_counter() - start)
    t, p = statistics.median(trained), statistics.median(plain)
    return {"projects": projects, "initial_s": initial, "trained_s": trained, "plain_s": plain,
            "median_trained_s": t, "median_plain_s": p, "ratio": t / p, "target": 1.5,
            "trained_wheel_bytes": os.path.getsize(trained_wheel)}


def _reversion(wheel: str, version: str, folder: str) -> str:
    """The wheel with another version (its dist-info renamed, METADATA and RECORD rewritten)."""
    import base64
    import hashlib
    import zipfile

    name = os.path.basename(wheel)
    dist, old = name.split("-")[:2]
    out = os.path.join(folder, name.replace(f"-{old}-", f"-{version}-"))
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        records = []
        for info in src.infolist():
            if info.filename.endswith("/RECORD"):
                continue
            data = src.read(info)
            arc = info.filename.replace(f"{dist}-{old}.dist-info", f"{dist}-{version}.dist-info")
            if arc.endswith("/METADATA"):
                data = data.replace(f"Version: {old}\n".encode(), f"Version: {version}\n".encode(), 1)
            if arc.endswith("/results.json"):  # the record names its package's version
                record = json.loads(data)
                record["policy"]["version"] = version
                data = json.dumps(record).encode()
            dst.writestr(zipfile.ZipInfo(arc, info.date_time), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            records.append(f"{arc},sha256={digest},{len(data)}")
        info = f"{dist}-{version}.dist-info"
        dst.writestr(f"{info}/RECORD", "\n".join([*records, f"{info}/RECORD,,"]))
    return out


def _site_farm(work: str) -> str:
    """This interpreter's third-party packages (no AgentOS ones), for venvs to see through a .pth."""
    site = sysconfig.get_paths()["purelib"]
    out = os.path.join(work, "site-farm")
    os.makedirs(out)
    for entry in os.listdir(site):
        low = entry.lower()
        if not low.startswith(("agentos", "_agentos", "__editable__", "acr", "_acr")) and not low.endswith(".pth"):
            os.symlink(os.path.join(site, entry), os.path.join(out, entry))
    return out


def bench_install(trained_wheel: str, index: str, wheelhouse: str, reps: int, work: str) -> dict:
    template = os.path.join(work, "template")
    _run([sys.executable, "-m", "venv", template])
    py = os.path.join(template, "bin", "python")
    purelib = _run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    with open(os.path.join(purelib, "_bench_site.pth"), "w") as f:
        f.write(_site_farm(work) + "\n")
    ours_wheels = [os.path.join(wheelhouse, f) for f in os.listdir(wheelhouse)
                   if f.startswith(("agentos_core", "agentos_env_2048", "agentos_policy_ntuple"))]
    _run([py, "-m", "pip", "install", "-q", "--no-deps", *ours_wheels])
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "AGENTOS_CACHE_DIR": os.path.join(work, "cache")}
    env.pop("AGENTOS_AGENT_INI", None)
    ours, theirs = [], []
    for rep in range(reps):
        a, b = os.path.join(work, f"ours-{rep}"), os.path.join(work, f"pip-{rep}")
        shutil.copytree(template, a, symlinks=True)
        shutil.copytree(template, b, symlinks=True)
        for venv in (a, b):  # the copies' own site-packages (venv paths are absolute in pyvenv.cfg)
            with open(os.path.join(venv, "pyvenv.cfg")) as f:
                text = f.read()
            with open(os.path.join(venv, "pyvenv.cfg"), "w") as f:
                f.write(text.replace(template, venv))
        agent = os.path.join(work, f"agent-{rep}")
        os.makedirs(agent)
        with open(os.path.join(agent, "agent.ini"), "w") as f:
            f.write("[environment]\ndefault = 2048\n")
        run_ours = [f"{a}/bin/python", "-m", "agentos", "install", "policy", NAME, "--agent", agent,
                    "--index-url", index]
        run_pip = [f"{b}/bin/python", "-m", "pip", "install", trained_wheel]
        pairs = [(ours, run_ours), (theirs, run_pip)]
        for bucket, cmd in pairs if rep % 2 == 0 else pairs[::-1]:
            bucket.append(_timed(cmd, env=env))
        shutil.rmtree(a)
        shutil.rmtree(b)
    o, t = statistics.median(ours), statistics.median(theirs)
    return {"agentos_install_s": ours, "pip_install_s": theirs, "median_agentos_s": o, "median_pip_s": t,
            "ratio": o / t, "target": 1.2}


def bench_isolated(index: str, games: int) -> dict:
    """``agentos evaluate --isolated``: the fresh venv's setup (until it says it is ready), then the games."""
    from agentos.results import evaluate

    ready = []

    def echo(line: str) -> None:
        if line.startswith("fresh venv ready"):
            ready.append(time.perf_counter())

    started = time.perf_counter()
    record = evaluate(NAME, environment="2048", episodes=games, seed=0, index_url=index, isolated=True, echo=echo)
    setup = ready[0] - started
    return {"setup_s": setup, "evaluate_s": time.perf_counter() - started - setup, "mean_score": record["mean"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--train", type=int, default=3000, help="training games of the small network")
    parser.add_argument("--projects", type=int, default=5000)
    parser.add_argument("--isolated", action="store_true", help="also evaluate the package in a fresh venv")
    parser.add_argument("--only", choices=["evaluate", "publish", "install"])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--out", metavar="FILE", help="also write the figures as JSON to FILE")
    args = parser.parse_args()
    results = {"machine": f"{os.cpu_count()} cores (shared with other jobs)", "date": time.strftime("%Y-%m-%d")}
    with tempfile.TemporaryDirectory(prefix="agentos-bench-results-") as work:
        start = time.perf_counter()
        agent, run = train(work, args.train)
        results["train_s"] = time.perf_counter() - start
        if args.only in (None, "evaluate"):
            results["evaluate"] = bench_evaluate(agent, run, args.games, args.reps)
        if args.only in (None, "publish", "install") or args.isolated:
            from agentos.registry import publish_files

            wheelhouse = _wheelhouse(work)
            index = os.path.join(work, "index")
            publish_files([os.path.join(wheelhouse, f) for f in sorted(os.listdir(wheelhouse))], index, library=True)
            start = time.perf_counter()
            trained_wheel = publish_trained(agent, run, index, os.path.join(work, "kept"))
            results["publish_run_s"] = time.perf_counter() - start
            if args.only in (None, "publish"):
                results["publish"] = bench_publish(trained_wheel, args.projects, max(3, args.reps), work)
            if args.only in (None, "install"):
                results["install"] = bench_install(trained_wheel, index, wheelhouse, args.reps, work)
            if args.isolated:
                results["isolated"] = bench_isolated(index, args.games)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=2)
    if args.json:
        json.dump(results, sys.stdout, indent=2)
        print()
        return 0
    if "evaluate" in results:
        r = results["evaluate"]
        print(f"evaluate {r['games']} games ({r['moves']:,} moves, mean score {r['mean_score']:,.0f}): "
              f"{r['median_evaluate_s']:.2f} s vs kernel {r['median_kernel_s']:.2f} s: ratio {r['ratio']:.2f}x "
              f"(target <= 1.2x); CLI wall {r['cli_evaluate_s']:.2f} s")
    if "publish" in results:
        r = results["publish"]
        print(f"publish into {r['projects']} projects: trained {r['median_trained_s'] * 1000:.0f} ms vs plain "
              f"{r['median_plain_s'] * 1000:.0f} ms: ratio {r['ratio']:.2f}x (target <= 1.5x)")
    if "install" in results:
        r = results["install"]
        print(f"install trained package: agentos {r['median_agentos_s']:.2f} s vs pip {r['median_pip_s']:.2f} s: "
              f"ratio {r['ratio']:.2f}x (target <= 1.2x)")
    if "isolated" in results:
        r = results["isolated"]
        print(f"fresh venv: set-up {r['setup_s']:.1f} s (apart), evaluation {r['evaluate_s']:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

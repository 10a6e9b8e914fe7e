"""Sandboxed evaluation against in-process evaluation: the same games, the same returns, the time each takes.

Cases (public names from the project's own index, ``index/files``): 1,000 games of 2048 by
``2048_master`` (an n-tuple network deciding in batches) and 100 CartPole-v1 episodes by
``cartpole_ppo`` (an sb3 PPO policy deciding one observation at a time, played 64 at a time). Each is
evaluated in process (``agentos.results.evaluate``) and with the policy in bubblewrap
(``agentos.sandbox.play_job``: environment, seeds and recorder here, actions over the pipe); the
sandboxed time includes starting the sandbox and building the policy there. The two records' returns
must be identical.

    python bench/bench_sandbox.py                      # full size, writes bench/sandbox_overhead.json
    python bench/bench_sandbox.py --smoke --out X.json # a few games (the tests run this)
    python bench/bench_sandbox.py --case cartpole_ppo  # one case
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WHEELS = ["agentos-policy-2048-master/agentos_policy_2048_master-2.0.0-py3-none-any.whl",
          "agentos-policy-ntuple/agentos_policy_ntuple-1.2.0-py3-none-any.whl",  # what 2048_master 2.0.0 pins
          "agentos-policy-cartpole-ppo/agentos_policy_cartpole_ppo-1.0.0-py3-none-any.whl",
          "agentos-policy-sb3/agentos_policy_sb3-1.2.0-py3-none-any.whl"]  # what cartpole_ppo 1.0.0 pins
CASES = [("2048", "2048_master", 1000, 2), ("gymnasium", "cartpole_ppo", 100, 3)]  # env, policy, full, smoke


def _dev_paths() -> list[str]:
    mine = (os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix))
    return [p for p in map(os.path.realpath, filter(os.path.isdir, sys.path)) if not p.startswith(mine)]


def child(smoke: bool, only: str | None = None, episodes: int | None = None) -> list[dict]:
    from agentos.results import evaluate
    from agentos.sandbox import play_job

    rows = []
    for env, policy, full, small in CASES:
        if only and policy != only:
            continue
        n = episodes or (small if smoke else full)
        started = time.perf_counter()
        here = evaluate(policy, environment=env, episodes=n, seed=1000)
        in_process = time.perf_counter() - started
        job = {"environment": env, "policy": here["policy"], "seeds": list(range(1000, 1000 + n)),
               "policy_python": sys.executable, "policy_venv": sys.prefix, "pythonpath": _dev_paths()}
        started = time.perf_counter()
        boxed = play_job(job)
        sandboxed = time.perf_counter() - started
        assert boxed["returns"] == here["returns"], f"{policy}: the sandboxed returns differ"
        rows.append({"environment": env, "policy": policy, "episodes": n, "in_process_s": round(in_process, 3),
                     "sandboxed_s": round(sandboxed, 3), "ratio": round(sandboxed / in_process, 3),
                     "iqm": here["iqm"], "same_returns": True})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--out", default=str(ROOT / "bench" / "sandbox_overhead.json"))
    parser.add_argument("--case", choices=[c[1] for c in CASES], help="only this policy's case")
    parser.add_argument("--episodes", type=int, help="episodes of each case (default: the full size)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print("ROWS " + json.dumps(child(args.smoke, args.case, args.episodes)))
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as folder:
        wheels = [str(ROOT / "index" / "files" / w) for w in WHEELS]
        pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--disable-pip-version-check"]
        subprocess.run([*pip, "--target", folder, *wheels], check=True)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [folder, os.environ.get("PYTHONPATH")]))}
        cmd = [sys.executable, __file__, "--child", *(["--smoke"] if args.smoke else []),
               *(["--case", args.case] if args.case else []),
               *(["--episodes", str(args.episodes)] if args.episodes else [])]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=folder)
        if done.returncode != 0:
            print(done.stderr[-3000:], file=sys.stderr)
            return 1
    rows = json.loads(next(ln for ln in done.stdout.splitlines() if ln.startswith("ROWS "))[5:])
    result = {"bench": "bench/bench_sandbox.py", "smoke": args.smoke, "cases": rows,
              "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}",
              "date": time.strftime("%Y-%m-%d", time.gmtime())}
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    for row in rows:
        print(f"{row['policy']} on {row['environment']}: {row['episodes']} episodes, in process "
              f"{row['in_process_s']:.2f} s, sandboxed {row['sandboxed_s']:.2f} s ({row['ratio']:.2f}x), same returns")
    return 0


if __name__ == "__main__":
    sys.exit(main())

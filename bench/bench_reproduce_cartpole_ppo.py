"""``agentos reproduce --package cartpole_ppo`` from the embedded index: wall time and verdict, per thread setting
(``--package`` names another trained package).

Each repeat runs the real command (a fresh venv from the package's lock, by hash from ``index/`` over
file://; torch and SB3 from pip's configured index; 100,000 PPO steps retrained) with
``OMP_NUM_THREADS`` set as given (``default``: unset), then compares the new curve with the recorded one
and with the first repeat's: the first episode (1-based) whose return or length differs, or None.

    python bench/bench_reproduce_cartpole_ppo.py [--threads default 1 1] [--json bench/reproduce_cartpole_ppo.json]
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import glob
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _curve(path: str) -> list[tuple[str, str]]:
    with open(path) as handle:
        return [(row["return"], row["length"]) for row in csv.DictReader(handle)]


def _first_difference(a, b) -> int | None:
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return index + 1
    return None if len(a) == len(b) else min(len(a), len(b)) + 1


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", nargs="+", default=["default", "1", "1"])
    parser.add_argument("--package", default="cartpole_ppo",
                        help="another trained package of the index (the smoke run takes corridor_sarsa: seconds)")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    index = "file://" + os.path.join(ROOT, "index")
    repeats, first_curve = [], None
    for threads in args.threads:
        work = tempfile.mkdtemp(prefix="reproduce-cartpole-")
        env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
        if threads != "default":
            env["OMP_NUM_THREADS"] = threads
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "agentos", "reproduce", "--package", args.package,
                               "--index-url", index, "--workdir", os.path.join(work, "w")],
                              env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - started
        recorded = _curve(glob.glob(os.path.join(work, "w", "package", "*", "returns.csv"))[0])
        new = _curve(glob.glob(os.path.join(work, "w", "agent", "runs", "*", "returns.csv"))[0])
        first_curve = first_curve or new
        repeats.append({"threads": threads, "seconds": round(seconds, 1), "exit_code": proc.returncode,
                        "verdict": (proc.stdout.strip().splitlines() or [proc.stderr.strip()])[-1],
                        "episodes": [len(recorded), len(new)],
                        "first_difference_from_recorded": _first_difference(recorded, new),
                        "first_difference_from_first_repeat": _first_difference(first_curve, new)})
        print(json.dumps(repeats[-1]), flush=True)
    result = {"command": f"agentos reproduce --package {args.package} --index-url file://<repo>/index",
              "date": dt.date.today().isoformat(), "machine": f"{platform.processor() or platform.machine()}, "
              f"{os.cpu_count()} cores, {platform.system()} {platform.release()}", "repeats": repeats}
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(result, handle, indent=2)
            handle.write("\n")


if __name__ == "__main__":
    main()

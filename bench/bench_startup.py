"""Startup time of ``agentos --help`` and ``agentos list`` against ``import pluggy, importlib.metadata``.

Runs each command many times, interleaved, and reports the median wall time and the ratio to the
baseline (target: at most 1.3x). Also checks that neither command imports torch, gymnasium or any
plugin module. Run it in an environment with all first-party plugins installed:

    python bench/bench_startup.py [--runs 30] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HEAVY = ("torch", "gymnasium", "numpy", "stable_baselines3", "rich")


def command_lines() -> dict[str, list[str]]:
    agentos = shutil.which("agentos", path=os.path.dirname(sys.executable)) or "agentos"
    return {
        "baseline: python -c 'import pluggy, importlib.metadata'": [
            sys.executable,
            "-c",
            "import pluggy, importlib.metadata",
        ],
        "agentos --help": [agentos, "--help"],
        "agentos list": [agentos, "list"],
    }


def time_once(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def imported_modules(args: list[str]) -> set[str]:
    code = (
        "import sys, io, contextlib\nfrom agentos.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    try:\n        main({args!r})\n    except SystemExit:\n        pass\n"
        "print('\\n'.join(sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(out.split())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-targets", action="store_true",
                        help="exit 0 even when a ratio misses its target (smoke runs: one short round is noise)")
    args = parser.parse_args()
    commands = command_lines()
    for cmd in commands.values():  # warm the OS cache and agentos' component cache
        time_once(cmd)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, cmd in commands.items():
            times[name].append(time_once(cmd))
    medians = {name: statistics.median(t) for name, t in times.items()}
    baseline = medians[next(iter(commands))]
    plugin_modules = set()
    from importlib.metadata import entry_points

    for group in ("agentos.environment", "agentos.policy", "agentos.trainer", "agentos.agent"):
        plugin_modules |= {ep.value.split(":")[0].split(".")[0] for ep in entry_points(group=group)}
    leaks = {}
    for name, argv in (("agentos --help", ["--help"]), ("agentos list", ["list"])):
        mods = imported_modules(argv)
        leaks[name] = sorted(m for m in mods if m.split(".")[0] in set(HEAVY) | plugin_modules)
    result = {
        "runs": args.runs,
        "median_seconds": medians,
        "ratio_to_baseline": {name: m / baseline for name, m in medians.items()},
        "heavy_or_plugin_modules_imported": leaks,
        "plugins_installed": sorted(plugin_modules),
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for name, m in medians.items():
            print(f"{name:<58} {m * 1000:7.1f} ms  {m / baseline:5.2f}x")
        for name, mods in leaks.items():
            print(f"{name}: imports {', '.join(mods) if mods else 'no heavy or plugin module'}")
    ok = all(r <= 1.3 for r in result["ratio_to_baseline"].values()) and not any(leaks.values())
    return 0 if ok or args.no_targets else 1


if __name__ == "__main__":
    sys.exit(main())

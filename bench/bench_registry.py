"""Registry benchmarks.

(a) ``agentos install environment 2048`` from the local index versus ``python -m pip install`` of
    the same wheel file, side by side: every repetition starts from two fresh copies of one venv
    holding agentos-core (and so the 2048 environment's requirements); the order alternates.
    Target: at most 1.2x.
(b) one ``publish`` of a new project into an index of 5,000 projects versus rebuilding that whole
    index (re-reading every file, rewriting every page). Target: at most 1/10.
(c) peak memory (max RSS) of a process publishing a 0.2 MB wheel whose METADATA inflates to 200 MiB
    (refused as a zip bomb), next to the same process importing the registry and doing nothing.

agentos-core is installed from a wheel built from this checkout, so the code measured is the code here.

    python bench/bench_registry.py [--reps 5] [--projects 5000] [--json]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INDEX = os.path.join(ROOT, "index")


def _timed(cmd: list[str], **kw) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stderr}")
    return elapsed


def bench_install(reps: int, work: str) -> dict:
    template = os.path.join(work, "template")
    subprocess.run([sys.executable, "-m", "venv", template], check=True)
    built = os.path.join(work, "core-wheel")
    cmd = [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", built]
    subprocess.run([*cmd, os.path.join(ROOT, "agentos-core")], check=True, capture_output=True)
    core = os.path.join(built, next(f for f in os.listdir(built) if f.endswith(".whl")))
    py = os.path.join(template, "bin", "python")
    subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", core], check=True)
    wheel_dir = os.path.join(INDEX, "files", "agentos-env-2048")
    wheel = next(os.path.join(wheel_dir, f) for f in os.listdir(wheel_dir) if f.endswith(".whl"))
    ours, theirs = [], []
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "AGENTOS_CACHE_DIR": os.path.join(work, "cache")}
    env.pop("AGENTOS_AGENT_INI", None)
    for rep in range(reps):
        a, b = os.path.join(work, f"ours-{rep}"), os.path.join(work, f"pip-{rep}")
        shutil.copytree(template, a, symlinks=True)
        shutil.copytree(template, b, symlinks=True)
        agent = os.path.join(work, f"agent-{rep}")
        subprocess.run([f"{a}/bin/python", "-m", "agentos", "init", agent], check=True, capture_output=True, env=env)
        run_ours = [f"{a}/bin/python", "-m", "agentos", "install", "environment", "2048", "--agent", agent,
                    "--index-url", INDEX]  # fmt: skip
        run_pip = [f"{b}/bin/python", "-m", "pip", "install", wheel]
        if rep % 2:
            theirs.append(_timed(run_pip, env=env))
            ours.append(_timed(run_ours, env=env))
        else:
            ours.append(_timed(run_ours, env=env))
            theirs.append(_timed(run_pip, env=env))
        shutil.rmtree(a)
        shutil.rmtree(b)
    o, t = statistics.median(ours), statistics.median(theirs)
    return {"agentos_install_s": ours, "pip_install_s": theirs, "median_agentos_s": o, "median_pip_s": t,
            "ratio": o / t, "target": 1.2}  # fmt: skip


def _wheel(folder: str, i: int, version: str = "1.0") -> str:
    name = f"agentos-env-bench{i}"
    dist = name.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    files = {
        f"{dist}/__init__.py": "class Env:\n    pass\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        f"Summary: synthetic environment {i}\nRequires-Python: >=3.8\nRequires-Dist: gymnasium>=1.0\n\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{info}/entry_points.txt": f"[agentos.environment]\nbench{i} = {dist}:Env\n",
    }
    record = [
        f"{p},sha256={base64.urlsafe_b64encode(hashlib.sha256(t.encode()).digest()).rstrip(b'=').decode()},{len(t)}"
        for p, t in files.items()
    ]
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    path = os.path.join(folder, f"{dist}-{version}-py3-none-any.whl")
    with zipfile.ZipFile(path, "w") as zf:
        for p, t in files.items():
            zf.writestr(zipfile.ZipInfo(p, (2020, 2, 2, 0, 0, 0)), t)
    return path


def bench_publish(projects: int, reps: int, work: str) -> dict:
    from agentos.registry import LocalIndex, publish

    wheels = os.path.join(work, "wheels")
    os.makedirs(wheels)
    paths = [_wheel(wheels, i) for i in range(projects)]
    index = os.path.join(work, "big-index")
    start = time.perf_counter()
    publish(paths, index)
    initial = time.perf_counter() - start
    rebuilds, publishes = [], []
    for rep in range(reps):
        start = time.perf_counter()
        LocalIndex(index).rebuild()
        rebuilds.append(time.perf_counter() - start)
        new = _wheel(wheels, projects + rep)
        start = time.perf_counter()
        publish([new], index)
        publishes.append(time.perf_counter() - start)
    r, p = statistics.median(rebuilds), statistics.median(publishes)
    return {"projects": projects, "initial_publish_all_s": initial, "rebuild_s": rebuilds, "publish_one_s": publishes,
            "median_rebuild_s": r, "median_publish_one_s": p, "ratio": p / r, "target": 0.1}  # fmt: skip


_BOMB = """
import resource, sys, zipfile
from agentos.registry import PublishError, publish
wheel, index, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
if size:
    try:
        publish([wheel], index)
    except PublishError as exc:
        print(exc, file=sys.stderr)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def bench_zip_bomb(work: str, size: int = 200 << 20) -> dict:
    """Peak RSS (MiB) of publishing a zip bomb, and of the same process without it."""
    name = "agentos_env_bomb-1.0"
    path = os.path.join(work, f"{name}-py3-none-any.whl")
    info = f"{name}.dist-info"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{info}/RECORD", "")
        with zf.open(f"{info}/METADATA", "w", force_zip64=True) as f:
            f.write(b"Metadata-Version: 2.1\nName: agentos-env-bomb\nVersion: 1.0\n\n")
            for _ in range(size >> 20):
                f.write(b"A" * (1 << 20))
    peaks = {}
    for label, n in (("publish_bomb_mib", size), ("baseline_mib", 0)):
        proc = subprocess.run([sys.executable, "-c", _BOMB, path, os.path.join(work, "bomb-index"), str(n)],
                              capture_output=True, text=True, check=True)  # fmt: skip
        peaks[label] = int(proc.stdout.strip().splitlines()[-1])
        if n:
            peaks["message"] = proc.stderr.strip()
    return {"wheel_bytes": os.path.getsize(path), "metadata_bytes": size, **peaks}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--projects", type=int, default=5000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--only", choices=["install", "publish", "bomb"])
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="agentos-bench-registry-") as work:
        if args.only in (None, "install"):
            results["install"] = bench_install(args.reps, work)
        if args.only in (None, "publish"):
            results["publish"] = bench_publish(args.projects, max(3, args.reps // 2), work)
        if args.only in (None, "bomb"):
            results["bomb"] = bench_zip_bomb(work)
    if args.json:
        json.dump(results, sys.stdout, indent=2)
        print()
        return 0
    if "install" in results:
        r = results["install"]
        print(f"install 2048: agentos {r['median_agentos_s']:.2f} s, pip {r['median_pip_s']:.2f} s "
              f"(medians of {len(r['pip_install_s'])}): ratio {r['ratio']:.2f}x (target <= 1.2x)")  # fmt: skip
    if "publish" in results:
        r = results["publish"]
        print(f"publish into {r['projects']} projects: {r['median_publish_one_s'] * 1000:.0f} ms; full rebuild "
              f"{r['median_rebuild_s']:.2f} s: ratio {r['ratio']:.3f} (target <= 0.1)")  # fmt: skip
    if "bomb" in results:
        r = results["bomb"]
        print(f"zip bomb ({r['wheel_bytes'] / 1e6:.1f} MB wheel, {r['metadata_bytes'] >> 20} MiB METADATA): peak "
              f"{r['publish_bomb_mib']} MiB vs {r['baseline_mib']} MiB idle; {r['message']}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

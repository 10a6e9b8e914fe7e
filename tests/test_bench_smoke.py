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
    "bench_loop.py": ["--episodes", "20", "--rounds", "1", "--json"],
    "bench_startup.py": ["--runs", "1", "--json"],
    "bench_multiagent_loop.py": ["--episodes", "10", "--rounds", "1", "--json"],
    "bench_corridor_sarsa.py": ["--seeds", "0", "--episodes", "5", "--json"],
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
}


def scripts() -> list[str]:
    return sorted(path.name for path in BENCH.glob("*.py"))


def test_every_bench_script_has_a_smoke_run():
    assert len(scripts()) > 20
    missing = sorted(set(scripts()) - set(SMOKE))
    assert not missing, f"bench scripts without a smoke run (add them to SMOKE in {__file__}): {missing}"


def run_smoke(script: str, folder: pathlib.Path) -> dict:
    """Run ``script`` at its smoke size in ``folder``; the JSON it wrote (or printed)."""
    out = folder / "out.json"
    args = [arg.replace("{out}", str(out)) for arg in SMOKE[script]]
    env = {**os.environ, "PYGAME_HIDE_SUPPORT_PROMPT": "1", "MPLBACKEND": "Agg"}
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, str(BENCH / script), *args], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=300)
    seconds = time.perf_counter() - started
    assert proc.returncode == 0, f"{script} failed in {seconds:.1f} s:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    text = out.read_text() if "{out}" in SMOKE[script] else proc.stdout
    print(f"{script}: {seconds:.1f} s")
    return json.loads(text)


@pytest.mark.parametrize("script", scripts())
def test_bench_script_runs_at_smoke_size(script, tmp_path):
    committed = {path: path.stat().st_mtime_ns for path in BENCH.glob("*.json")}
    if script not in SMOKE:
        pytest.fail(f"{script} has no smoke run: add its smoke arguments to SMOKE")
    result = run_smoke(script, tmp_path)
    assert isinstance(result, dict | list) and result, f"{script} wrote no figures"
    assert {path: path.stat().st_mtime_ns for path in BENCH.glob("*.json")} == committed

"""bench/bench_sandbox.py at smoke size: the sandboxed games are the in-process games (same returns)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_sandbox_bench_plays_the_same_games_as_in_process(tmp_path):
    out = tmp_path / "smoke.json"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_sandbox.py"), "--smoke", "--out", str(out)],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(out.read_text())
    assert [(c["policy"], c["episodes"]) for c in result["cases"]] == [("2048_master", 2), ("cartpole_ppo", 3)]
    assert all(c["same_returns"] and c["sandboxed_s"] > 0 for c in result["cases"])
    assert result["cases"][1]["iqm"] == 500.0  # the trained PPO balances the pole for all 500 steps

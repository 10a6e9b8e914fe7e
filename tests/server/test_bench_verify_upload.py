"""bench/bench_verify_upload.py at smoke size: the embedded index's corridor_sarsa uploaded to a real
server is verified with no maintainer command, and the bench's JSON holds the times it reports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_verify_upload_smoke(tmp_path):
    out = tmp_path / "verify_upload.json"
    cmd = [sys.executable, str(ROOT / "bench" / "bench_verify_upload.py"), "--smoke", "--timeout", "600"]
    done = subprocess.run([*cmd, "--out", str(out)], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (row,) = json.loads(out.read_text())["rows"]
    assert row["project"] == "agentos-policy-corridor-sarsa" and row["status"] == row["board_status"] == "verified"
    assert "the intervals agree" in row["reason"]
    assert 0 < row["venv_setup_s"] < row["verified_after_s"] and row["upload_s"] < row["verified_after_s"]

"""Training tools: rows written as the run goes (and kept by a killed run), curves by timesteps."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from learning._helpers import CORRIDOR_SARSA, make_agent, only_run


def _rows(run) -> list[dict]:
    with open(run / "returns.csv", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_every_episode_row_is_on_disk_when_the_episode_ends(tmp_path):
    from agentos.api import train

    agent = make_agent(tmp_path, CORRIDOR_SARSA)
    seen = []

    def on_episode(run, result):
        rows = _rows(Path(run.extra["record"].directory))
        seen.append((len(run.episodes), len(rows), int(rows[-1]["frame"]), run.steps))

    summary = train(str(agent / "agent.ini"), episodes=40, seed=0, on_episode=on_episode)
    assert [n for n, _, _, _ in seen] == list(range(1, 41))
    assert all(on_disk == n and frame == steps for n, on_disk, frame, steps in seen)  # timesteps, as it goes
    assert summary["status"] == "finished" and len(_rows(only_run(agent, "train"))) == 40


def test_a_killed_run_keeps_its_rows_and_reads_as_unfinished(tmp_path):
    from agentos.reproduce._compare import read_curve
    from agentos.trackers import read_returns

    agent = make_agent(tmp_path, CORRIDOR_SARSA)
    proc = subprocess.Popen([sys.executable, "-m", "agentos", "train", "10000000", "--seed", "1"], cwd=agent,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            runs = list((agent / "runs").glob("*/returns.csv")) if (agent / "runs").exists() else []
            if runs and runs[0].stat().st_size > 20_000:
                break
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.05)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    run = only_run(agent, "train")
    rows = _rows(run)
    frames, returns = read_returns(str(run))
    curve = read_curve(str(run / "returns.csv"))
    assert len(rows) >= len(frames) == len(curve) >= 200  # whole rows only: a cut last row is left out
    assert [int(r["episode"]) for r in rows[: len(frames)]] == list(range(1, len(frames) + 1))
    assert frames == sorted(frames) and frames[-1] == sum(length for _, length in curve)
    assert json.loads((run / "run.json").read_text())["status"] == "running"  # never finished: says so
    listed = subprocess.run([sys.executable, "-m", "agentos", "runs"], cwd=agent, capture_output=True, text=True,
                            timeout=60)
    assert listed.returncode == 0 and "running" in listed.stdout, listed.stderr
    again = subprocess.run([sys.executable, "-m", "agentos", "reproduce", run.name], cwd=agent, capture_output=True,
                           text=True, timeout=60)
    assert again.returncode != 0 and "did not finish" in again.stderr and "Traceback" not in again.stderr


def test_a_row_cut_by_a_killed_writer_is_left_out(tmp_path):
    from agentos.reproduce._compare import read_curve
    from agentos.trackers import read_metric_columns, read_returns

    whole = "episode,frame,return,length,seconds,best\n1,5,1.5,5,0.1,4\n2,12,2.5,7,0.2,8\n"
    for text, episodes in ((whole, 2), (whole + "3,20,3.", 2)):
        (tmp_path / "returns.csv").write_text(text)
        assert read_returns(str(tmp_path)) == ([5, 12][:episodes], [1.5, 2.5][:episodes])
        assert read_curve(str(tmp_path / "returns.csv")) == [(1.5, 5), (2.5, 7)]
        assert read_metric_columns(str(tmp_path), ["best"]) == {"best": [4.0, 8.0]}

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

import pytest
from learning._helpers import CORRIDOR_SARSA, make_agent, only_run


def _rows(run) -> list[dict]:
    with open(run / "returns.csv", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_every_episode_row_is_on_disk_when_the_episode_ends(tmp_path):
    from agentos.api import list_runs, train

    agent = make_agent(tmp_path, CORRIDOR_SARSA)
    seen = []

    def on_episode(run, result):
        rows = _rows(Path(run.extra["record"].directory))
        seen.append((len(run.episodes), len(rows), int(rows[-1]["frame"]), run.steps))
        if len(run.episodes) == 20:  # agentos runs, meanwhile: running, with the episodes so far
            (row,) = list_runs(str(agent / "agent.ini"))
            listed.append((row["status"], row["episodes"], row["steps"], run.steps))

    listed = []
    summary = train(str(agent / "agent.ini"), episodes=40, seed=0, on_episode=on_episode)
    assert [n for n, _, _, _ in seen] == list(range(1, 41))
    assert all(on_disk == n and frame == steps for n, on_disk, frame, steps in seen)  # timesteps, as it goes
    assert summary["status"] == "finished" and len(_rows(only_run(agent, "train"))) == 40
    assert [(status, episodes) for status, episodes, _, _ in listed] == [("running", 20)]
    assert listed[0][2] == listed[0][3]


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
    listed = subprocess.run([sys.executable, "-m", "agentos", "runs", "--json"], cwd=agent, capture_output=True,
                            text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)  # its process is gone: unfinished, with the rows it wrote
    assert row["status"] == "unfinished" and row["episodes"] == len(frames) and row["steps"] == frames[-1]
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


def _with_train(tmp_path, section: str, name: str = "agent"):
    return make_agent(tmp_path, CORRIDOR_SARSA + "\n[train]\n" + section, name)


def _agentos(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentos", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_periodic_evaluation_on_seeds_of_its_own_keeps_the_best_beside_the_last(tmp_path):
    from agentos.api import train

    agent = _with_train(tmp_path, "eval_every_episodes = 10\neval_episodes = 3\n")
    summary = train(str(agent / "agent.ini"), episodes=50, seed=7)
    run = Path(summary["run_dir"])
    evaluation = json.loads((run / "run.json").read_text())["evaluation"]
    assert evaluation["seeds"] == [1_000_007, 1_000_008, 1_000_009] and evaluation["evaluations"] == 5
    with open(run / "evaluations.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    frames = {int(r["episode"]): int(r["frame"]) for r in _rows(run)}
    assert [int(r["episodes"]) for r in rows] == [10, 20, 30, 40, 50]
    assert [int(r["steps"]) for r in rows] == [frames[n] for n in (10, 20, 30, 40, 50)]  # steps of that episode
    means = [float(r["mean_return"]) for r in rows]
    best = evaluation["best"]
    assert best["mean_return"] == max(means) and best["steps"] == int(rows[means.index(max(means))]["steps"])
    meta = json.loads((run / "run.json").read_text())
    assert meta["best_checkpoint"] == best["checkpoint"] == "best.safetensors" and (run / "best.safetensors").is_file()
    assert meta["checkpoint"] == "checkpoint.safetensors" and summary["evaluation"]["stopped"] is None
    with open(run / "metrics.csv", encoding="utf-8") as f:
        scalars = [r for r in csv.DictReader(f) if r["name"] == "eval/mean_return"]
    expected = [(int(r["steps"]), m) for r, m in zip(rows, means, strict=True)]
    assert [(int(r["step"]), float(r["value"])) for r in scalars] == expected
    played = _agentos("run", "--from-run", f"{run.name}@best", "--episodes", "2", "--seed", "1", cwd=agent)
    assert played.returncode == 0 and "finished: 2 episodes" in played.stdout, played.stderr
    evaluated = _agentos("evaluate", "--run", f"{run.name}@best", "--episodes", "2", cwd=agent)
    assert evaluated.returncode == 0 and "2 episodes, seeds 0-1" in evaluated.stdout, evaluated.stderr


def test_training_stops_at_the_reward_threshold(tmp_path):
    agent = _with_train(tmp_path, "eval_every_steps = 100\neval_episodes = 2\nreward_threshold = -1000\n")
    result = _agentos("train", "--steps", "100000", "--seed", "1", cwd=agent)
    assert result.returncode == 0, result.stderr
    assert "evaluation: 1 evaluations of 2 episodes" in result.stdout
    assert "stopped at the reward threshold" in result.stdout
    meta = json.loads((only_run(agent, "train") / "run.json").read_text())
    stopped = meta["evaluation"]["stopped"]
    assert meta["status"] == "finished" and stopped["reason"] == "reward_threshold"
    assert 100 <= stopped["steps"] == meta["summary"]["steps"] < 100_000
    again = _agentos("reproduce", "latest", cwd=agent)  # said as it is, not "the record was altered"
    assert again.returncode != 0 and "stopped at its reward threshold after" in again.stderr, again.stderr


def test_a_run_without_evaluation_has_no_best_checkpoint_and_a_best_outside_the_run_is_refused(tmp_path):
    agent = make_agent(tmp_path, CORRIDOR_SARSA)
    assert _agentos("train", "5", "--seed", "1", cwd=agent).returncode == 0
    result = _agentos("run", "--from-run", "latest@best", "--episodes", "1", cwd=agent)
    assert result.returncode != 0 and "has no best checkpoint" in result.stderr and "Traceback" not in result.stderr
    run = only_run(agent, "train")
    meta = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**meta, "best_checkpoint": "../../agent.ini"}))
    result = _agentos("run", "--from-run", "latest@best", "--episodes", "1", cwd=agent)
    assert result.returncode != 0 and "is not a file name inside the run folder" in result.stderr, result.stderr
    (run / "run.json").write_text(json.dumps({**meta, "best_checkpoint": meta["checkpoint"]}))  # the valid twin
    result = _agentos("run", "--from-run", "latest@best", "--episodes", "1", cwd=agent)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(("section", "said"), [
    ("eval_every_steps = 0\n", "eval_every_steps must be a whole number of at least 1"),
    ("reward_threshold = 10\n", "needs eval_every_steps or eval_every_episodes"),
    ("eval_every_episodes = 5\neval_seed = 0\neval_episodes = 3\n", "include the training seed 1"),
    ("eval_every_episodes = 5\nreward_threshold = \"high\"\n", "reward_threshold must be a number"),
    ("eval_every_episodes = 5\nkeep_best = 3\n", "keep_best must be true or false"),
    ("eval_evry_steps = 5\n", "unknown key 'eval_evry_steps' in [train]"),
])
def test_malformed_train_settings_are_one_line_and_no_record(tmp_path, section, said):
    agent = _with_train(tmp_path, section)
    result = _agentos("train", "5", "--seed", "1", cwd=agent)
    assert result.returncode != 0 and said in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and not list(agent.glob("runs/*"))


def test_valid_train_settings_twin_trains(tmp_path):
    agent = _with_train(tmp_path, "eval_every_episodes = 5\neval_seed = 10\neval_episodes = 3\nkeep_best = false\n")
    result = _agentos("train", "5", "--seed", "1", cwd=agent)
    assert result.returncode == 0 and "(seeds 10..12)" in result.stdout, result.stderr
    assert not list(agent.glob("runs/*/best.*"))


def test_publish_run_at_best_ships_the_best_checkpoint_and_refuses_a_changed_one(tmp_path):
    import zipfile

    from agentos.api import train
    from agentos.errors import UsageError
    from agentos.results import publish_run

    agent = _with_train(tmp_path, "eval_every_episodes = 10\neval_episodes = 2\n")
    run = Path(train(str(agent / "agent.ini"), episodes=30, seed=2)["run_dir"])
    common = {"index": str(tmp_path / "index"), "agent_ini": str(agent / "agent.ini"), "episodes": 2,
              "record_replay": False}
    done = publish_run(f"{run.name}@best", "corridor_best", keep=str(tmp_path / "kept"), **common)
    assert done["published"][0]["status"] == "published"
    with zipfile.ZipFile(tmp_path / "kept" / done["wheel"]) as zf:
        assert zf.read("agentos_policy_corridor_best/weights.safetensors") == (run / "best.safetensors").read_bytes()
    (run / "best.safetensors").write_bytes((run / "checkpoint.safetensors").read_bytes() + b" ")
    with pytest.raises(UsageError, match="changed after training"):
        publish_run(f"{run.name}@best", "corridor_changed", **common)
    meta = json.loads((run / "run.json").read_text())  # the hash deleted with it: the two came in one release
    del meta["best_checkpoint_sha256"]
    (run / "run.json").write_text(json.dumps(meta))
    with pytest.raises(UsageError, match="best checkpoint without its sha256"):
        publish_run(f"{run.name}@best", "corridor_unhashed", **common)


def test_a_run_file_that_is_a_link_or_a_fifo_is_not_read_and_a_long_row_ends_the_reading(tmp_path):
    """A run folder may come from someone else: returns.csv linked to /dev/zero or to a file elsewhere, or a
    FIFO, is refused at once (no unbounded read, no hang); `agentos runs` still lists the run."""
    import os

    from agentos.reproduce._compare import CurveError, read_curve
    from agentos.trackers import read_returns

    outside = tmp_path / "secret.csv"
    outside.write_text("episode,frame,return,length,seconds\n1,5,4242.0,5,0.1\n")
    for name, make in (("linked", lambda p: p.symlink_to(outside)), ("zero", lambda p: p.symlink_to("/dev/zero")),
                       ("fifo", lambda p: os.mkfifo(p))):
        folder = tmp_path / name
        folder.mkdir()
        make(folder / "returns.csv")
        with pytest.raises(ValueError, match="link|regular file"):
            read_returns(str(folder))
        with pytest.raises(CurveError):
            read_curve(str(folder / "returns.csv"))
    long_row = tmp_path / "long"
    long_row.mkdir()
    (long_row / "returns.csv").write_text("episode,frame,return,length,seconds\n1,5,1.5,5,0.1\n"
                                          + "2,9," + "9" * 200_000 + ",4,0.1\n3,12,2.0,3,0.1\n")
    assert read_returns(str(long_row)) == ([5], [1.5])  # the rows before the over-long one
    (long_row / "returns.csv").write_text("episode,frame,return,length,seconds\n1,5," + "1" * 200_000 + ",5,0.1\n")
    with pytest.raises(CurveError, match="line 2"):  # over csv's field limit: the file and line, one line
        read_curve(str(long_row / "returns.csv"))


def test_report_metrics_passes_checked_names_and_finite_numbers_and_is_silent_outside_a_run():
    from agentos import hookimpl
    from agentos.core._runner import Run
    from agentos.plugin_api import report_metrics
    from agentos.plugins import get_plugin_manager
    from agentos.trackers._scalars import reporting_to

    seen = []

    class Catch:
        @hookimpl
        def agentos_metrics(self, run, step, values):
            seen.append((run, step, values))

    pm = get_plugin_manager()
    catch = Catch()
    pm.register(catch, name="test-catch-metrics")
    try:
        report_metrics({"train/loss": 1.0})  # no run in progress: nothing, no error
        assert seen == []
        run = Run(agent=None, mode="train")
        with reporting_to(run):
            report_metrics({"train/loss": 0.5, "time/fps": 120, "bad name": 1.0, "x\ny": 2.0, "nan": float("nan"),
                            "text": "high", "flag": True, "a" * 101: 3.0}, step=64)
            report_metrics({"only\tbad": 1.0}, step=65)  # nothing left: no call
        report_metrics({"train/loss": 0.1}, step=66)  # the run is over
    finally:
        pm.unregister(catch)
    assert seen == [(run, 64, {"train/loss": 0.5, "time/fps": 120.0})]

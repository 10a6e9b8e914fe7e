"""SIGTERM stops ``agentos experiment run`` like Ctrl-C; after SIGKILL no process of it remains.

Real processes: the CLI in a session of its own, its fork server, resource tracker and workers
(all in the CLI's process group, which the test scans in /proc).
"""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time

import pytest

EXPERIMENT = """[experiment]
agents = [random, sarsa_table]
environments = [corridor]
seeds = 1
episodes = 100000000
test-episodes = 1
workers = 2
"""


def _group(pgid: int) -> list[int]:
    """The live (not zombie) processes of process group ``pgid``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(entry))
    return found


def _wait(condition, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


@pytest.fixture
def running(tmp_path):
    """The CLI running an endless trial (sarsa_table) after a quick one (random) finished."""
    path = tmp_path / "long.ini"
    path.write_text(EXPERIMENT)
    proc = subprocess.Popen([sys.executable, "-m", "agentos", "experiment", "run", str(path), "-q"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    folder = tmp_path / "experiments" / "long"
    try:
        assert _wait(lambda: list(folder.glob("trials/*/trial.json")) and len(_group(proc.pid)) >= 4, 90), \
            _group(proc.pid)
        yield proc, folder
    finally:
        for pid in _group(proc.pid):  # whatever the test left: only this test's process group
            os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=30)


def test_sigterm_stops_like_ctrl_c_with_a_summary_and_no_process_left(running):
    proc, folder = running
    pgid = proc.pid
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, out + err
    assert "stopped by signal 15" in err and "Traceback" not in err, err
    with open(folder / "summary.csv") as f:
        rows = list(csv.DictReader(f))
    assert [row["agent"] for row in rows] == ["random"]  # the finished trial is in the summary
    assert _wait(lambda: not _group(pgid), 20), _group(pgid)


def test_sigkill_of_the_client_leaves_no_worker_fork_server_or_tracker(running):
    proc, _ = running
    pgid = proc.pid
    assert len(_group(pgid)) >= 4  # client, fork server, resource tracker, workers
    proc.kill()
    proc.wait(timeout=30)
    assert _wait(lambda: not _group(pgid), 20), [open(f"/proc/{p}/cmdline").read()[:80] for p in _group(pgid)]


HALF_SENT = """
import multiprocessing, os, struct, sys, time
from agentos.experiments import ProcessPool


def half_sent(marker):
    results = multiprocessing.current_process()._args[1]  # the pool's result queue, as CPython hands it over
    os.write(results._writer.fileno(), struct.pack("!i", 1 << 20) + b"x" * 100)  # 100 bytes of a 1 MiB result
    open(marker, "w").close()
    time.sleep(600)


if __name__ == "__main__":
    pool = ProcessPool(1)
    pool.submit(half_sent, sys.argv[1])
    while not os.path.exists(sys.argv[1]):
        time.sleep(0.05)
    time.sleep(0.5)  # the pool's manager thread is now reading the rest, which never comes
    pool.stop_workers()
    pool.shutdown(wait=False, cancel_futures=True)
    print("stopped", flush=True)
"""


def test_stopping_workers_ends_even_when_one_was_stopped_half_way_through_sending_its_result(tmp_path):
    # A worker stopped while it sent its result left half a message in the pipe; the pool's manager thread
    # waited for the rest for ever and the interpreter's exit joined it (a SIGTERM-ed tune hung after its
    # "stopped by signal 15" line, 1 run in 2 here).
    script = tmp_path / "half_sent.py"
    script.write_text(HALF_SENT)
    proc = subprocess.run([sys.executable, str(script), str(tmp_path / "sent")], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout == "stopped\n", proc.stderr

"""Free-running threads: results arrive as chunks end, stops are prompt, failures are raised."""

from __future__ import annotations

import threading
import time

import pytest
from agentos_trainer_td._parallel import free_running


def test_threads_run_without_waiting_for_each_other_and_stop_when_told():
    # thread 0's chunks take 10x longer than thread 1's: thread 1 goes on meanwhile, no barrier
    counts = [0, 0]
    lock = threading.Lock()

    def chunk(thread):
        time.sleep(0.05 if thread == 0 else 0.005)
        with lock:
            counts[thread] += 1
        return (1, thread)

    started = time.monotonic()
    seen = [0, 0]
    for thread, result in free_running(2, chunk, lambda: time.monotonic() - started < 0.5):
        assert result == (1, thread)
        seen[thread] += 1
    assert seen == counts  # every chunk that ran was handed over, after the stop too
    assert counts[1] > 4 * counts[0] > 0


def test_a_failing_chunk_is_raised_and_the_other_threads_stop():
    stopped = threading.Event()

    def chunk(thread):
        if thread == 1:
            raise RuntimeError("chunk failed")
        time.sleep(0.01)
        return (1,)

    with pytest.raises(RuntimeError, match="chunk failed"):
        for _ in free_running(2, chunk, lambda: not stopped.is_set()):
            pass
    assert [t.name for t in threading.enumerate() if t.name.startswith("td-")] == []


def test_a_negative_result_ends_that_thread_and_a_consumer_that_stops_ends_all():
    def chunk(thread):
        time.sleep(0.002)
        return (-1,) if thread == 0 else (5,)

    results = []
    for thread, result in free_running(2, chunk, lambda: True):
        results.append((thread, result))
        if len(results) == 20:
            break
    assert results.count((0, (-1,))) == 1  # thread 0 stopped after its failed chunk; thread 1 went on
    assert [t.name for t in threading.enumerate() if t.name.startswith("td-")] == []

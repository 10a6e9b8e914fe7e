"""Live progress of trials running in other processes: "started" and "latest return" messages.

A worker sends small tuples on a *channel*; the client drains them between waits:

- process pool: a ``multiprocessing.SimpleQueue`` handed to each worker at start (``initargs``); a put
  is one small pipe write, done before training starts, so a "started" message is never lost. Every
  pool gets a new queue, so a worker killed in the middle of a write cannot block the next pool.
- Dask: ``Worker.log_event(topic, ...)``, received by ``Client.subscribe_topic``; it travels over
  Dask's own connections, so it works for workers on other machines.
- any other executor: no channel; trials count as running from their submission.

Messages: ``("start", trial_id, pid)`` and ``("return", trial_id, episodes, return100, phase)``
(phase ``train`` or ``test``), at most one return per trial every :data:`REPORT_SECONDS`.
"""

from __future__ import annotations

import collections
import queue as queue_module
import time

REPORT_SECONDS = 1.0

_pool_queue = None  # set in pool workers by init_worker


def set_pool_queue(queue) -> None:
    global _pool_queue
    _pool_queue = queue


class DaskChannel:
    """Send through the Dask worker that runs the trial (``topic`` is the experiment's)."""

    def __init__(self, topic: str):
        self.topic = topic

    def send(self, message: tuple) -> None:
        from distributed import get_worker

        get_worker().log_event(self.topic, list(message))


class PoolChannel:
    """Send through the queue this pool worker was started with."""

    def send(self, message: tuple) -> None:
        if _pool_queue is not None:
            _pool_queue.put(message)


class Reporter:
    """Worker side: ``started()`` once, then ``on_episode`` as ``api.train``'s callback."""

    def __init__(self, channel, trial_id: str):
        self.channel, self.trial_id = channel, trial_id
        self.returns: collections.deque = collections.deque(maxlen=100)
        self.episodes, self.last, self.phase = 0, 0.0, "train"

    def _send(self, message: tuple) -> None:
        try:
            self.channel.send(message)
        except Exception:  # progress is a nicety: it never fails a trial
            self.channel = None

    def started(self, pid: int) -> None:
        if self.channel is not None:
            self._send(("start", self.trial_id, pid))

    def testing(self) -> None:
        """From now on the episodes are test episodes (counted from zero)."""
        self.phase, self.episodes, self.last = "test", 0, 0.0
        self.returns.clear()

    def on_episode(self, run, result) -> None:
        self.episodes += 1
        self.returns.append(result.episode_return)
        now = time.monotonic()
        if self.channel is not None and now - self.last >= REPORT_SECONDS:
            self.last = now
            self._send(("return", self.trial_id, self.episodes, sum(self.returns) / len(self.returns), self.phase))


class LiveTrials:
    """Client side: which trials started, and their latest return; fed by a pool queue or Dask events."""

    def __init__(self):
        self._inbox: queue_module.SimpleQueue = queue_module.SimpleQueue()
        self.started: set[str] = set()
        self.latest: dict[str, tuple[int, float, str]] = {}
        self.pool_queue = None

    def new_pool_queue(self, context):
        """A fresh queue for a new process pool (the old one may be held by a killed worker)."""
        self.drain()
        self.pool_queue = context.SimpleQueue()
        return self.pool_queue

    def on_dask_event(self, event) -> None:
        """``Client.subscribe_topic`` handler (runs in the client's event-loop thread)."""
        self._inbox.put(tuple(event[1]))

    def drain(self) -> list[str]:
        """Take the messages that arrived; returns the ids of trials that started since the last call."""
        messages = []
        while True:
            try:
                messages.append(self._inbox.get_nowait())
            except queue_module.Empty:
                break
        pool = self.pool_queue
        while pool is not None:
            try:
                if pool.empty():
                    break
                messages.append(pool.get())
            except (OSError, EOFError):
                break
        return [trial_id for message in messages if (trial_id := self._take(message))]

    def _take(self, message) -> str | None:
        if not isinstance(message, (tuple, list)) or len(message) < 3 or not isinstance(message[1], str):
            return None
        if message[0] == "start":
            self.started.add(message[1])
            return message[1]
        if message[0] == "return" and len(message) == 5:
            self.started.add(message[1])
            try:
                self.latest[message[1]] = (int(message[2]), float(message[3]), str(message[4])[:5])
            except (TypeError, ValueError):
                pass
        return None

    def forget(self, trial_id: str) -> None:
        self.started.discard(trial_id)
        self.latest.pop(trial_id, None)

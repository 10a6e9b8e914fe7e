"""Lock-free TD on several cores: Python threads, each running the one-thread kernel on its own games.

Each of ``threads`` threads calls a kernel compiled without the GIL (:func:`agentos_trainer_td._td.train_games`,
online TD(0), or :func:`agentos_trainer_td._episodes.train_episodes`, the episode learner with every option)
on its own rng, over and over, in chunks of games of about ``chunk`` moves, and writes its updates
straight into the shared float32 weights (and TC's sums), with no lock (Hogwild!, Recht et al. 2011;
Jaśkowski 2018 and ziap/2048-tdl train 2048 so).  The threads never wait for each other: each hands a
chunk's results to the trainer's thread and goes on.  (Until trainer-td 1.4 one ``numba.prange`` call
ran the threads together and returned when the slowest was done; waiting so left each core about
12% idle in the preset's hour.)

How updates race, and why that is safe: an update is a read-modify-write of 32 of the network's
67 M weights (4x6-tuples).  When two threads touch the same weight at once, one of the two steps
can be lost, or a thread can value a board with a weight another thread is changing; an aligned
32-bit store is atomic on the CPUs numba targets, so a weight is always one of the values some
thread wrote (never torn), and the loss is one small TD step out of millions.  Collisions are rare
(the positions of different games overlap little after their first moves), so learning follows the
single-thread dynamics closely -- but which step wins depends on thread timing, so parallel runs
are not bit-reproducible from their seed.  TC's two sums per weight race the same way: a lost
increment of ``E`` or ``A`` shifts one weight's rate ``|E|/A`` a little; a race can make ``|E|``
exceed ``A`` (which one thread alone never does), so the learner clamps the rate to 1 and no race
can make a step larger than alpha's.

Each thread draws from its own rng array of 8 words (a cache line of its own): rng states 8 bytes
apart, one written every move, made two threads no faster than one (the line moved between cores).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator

import numpy as np

_DONE = object()


def thread_rng(states: np.ndarray, thread: int) -> np.ndarray:
    """Thread ``thread``'s rng: slot 0 of a fresh 8-word array holding ``states[thread]``."""
    rng = np.zeros(8, dtype=np.uint64)
    rng[0] = states[thread]
    return rng


def free_running(threads: int, play_chunk: Callable[[int], tuple], keep_going: Callable[[], bool]) -> Iterator[tuple]:
    """Call ``play_chunk(thread)`` over and over on ``threads`` threads; yield ``(thread, result)`` in the
    calling thread as each chunk ends.

    A thread starts its next chunk once its last result has been taken (the consumer asked for the
    next one): threads never wait for each other, only for the consumer, so a consumer that is slow
    holds them back rather than piling up results, and a stop it decides on is heard after at most
    the chunks under way.  A thread stops before its next chunk once ``keep_going()`` is false,
    after a chunk whose result starts with a negative number (the weights diverged), or when the
    consumer stops iterating; the chunks under way then finish, and their results are still yielded
    unless the consumer stopped.
    An exception in a thread is raised here.
    """
    results: queue.SimpleQueue = queue.SimpleQueue()
    stop = threading.Event()
    taken = [threading.Event() for _ in range(threads)]

    def work(thread: int) -> None:
        try:
            while not stop.is_set() and keep_going():
                result = play_chunk(thread)
                taken[thread].clear()
                results.put((thread, result))
                if result[0] < 0:
                    break
                while not taken[thread].wait(0.1) and not stop.is_set():
                    pass
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, which raises it
            results.put((thread, exc))
        finally:
            results.put((thread, _DONE))

    workers = [threading.Thread(target=work, args=(t,), name=f"td-{t}", daemon=True) for t in range(threads)]
    for worker in workers:
        worker.start()
    running = threads
    try:
        while running:
            try:
                thread, result = results.get(timeout=0.2)  # a timeout keeps Ctrl-C prompt
            except queue.Empty:
                continue
            if result is _DONE:
                running -= 1
            elif isinstance(result, BaseException):
                raise result
            else:
                yield thread, result
                taken[thread].set()
    finally:
        stop.set()
        for event in taken:
            event.set()
        for worker in workers:
            worker.join()

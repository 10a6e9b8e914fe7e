"""Where trials run: a process pool (default) or a Dask distributed cluster; any Executor works."""

from __future__ import annotations

import os
from concurrent.futures import Executor


def default_workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


#: Imported once by the fork server, so every worker starts with them (what every trial needs).
PRELOAD = [
    "__main__", "agentos.experiments._trial", "agentos.api", "agentos.learning._commands", "agentos.core._context",
    "gymnasium",
]


def process_pool(workers: int, live=None):
    """Worker processes started by ``forkserver`` (``spawn`` where there is none), one math thread each.

    The fork server imports the trial code once (:data:`PRELOAD`); workers live as long as the pool,
    so each imports a trial's components once. Workers are not daemons, so a trial may start
    subprocesses (vectorised environments). ``live`` (a ``LiveTrials``) gets a new progress queue.
    """
    import multiprocessing
    import sys
    from concurrent.futures import ProcessPoolExecutor

    from ._trial import init_worker

    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    if main and not os.path.isfile(main) and "fork" in multiprocessing.get_all_start_methods():
        method = "fork"  # a script read from stdin cannot be re-imported by new workers
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        context.set_forkserver_preload(PRELOAD)  # no effect once the fork server runs
    queue = live.new_pool_queue(context) if live is not None else None
    return ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=init_worker,
                               initargs=(queue, os.getpid()))


class ProcessPool(Executor):
    """A pool of :func:`process_pool` workers that reports progress and replaces itself when a worker
    dies (a dead process breaks a ``ProcessPoolExecutor`` for good). Reuse one for several experiments
    and its workers stay warm (components imported once)."""

    def __init__(self, workers: int | None = None):
        from ._progress import LiveTrials, PoolChannel

        self.workers = workers or default_workers()
        self.live, self.channel = LiveTrials(), PoolChannel()
        self._pool = process_pool(self.workers, self.live)

    def slots(self) -> int:
        """How many trials run at once (the number of workers)."""
        return self.workers

    def submit(self, fn, /, *args, **kwargs):
        return self._pool.submit(fn, *args, **kwargs)

    def restart(self) -> None:
        """A new pool (and progress queue) after a worker died; queued work is cancelled."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool = process_pool(self.workers, self.live)

    def stop_workers(self) -> None:
        """Stop the workers now (Ctrl-C): running trials are abandoned, not awaited."""
        results = getattr(self._pool, "_result_queue", None)
        processes = list((getattr(self._pool, "_processes", None) or {}).values())
        terminate = getattr(self._pool, "terminate_workers", None)  # Python 3.14
        if terminate is not None:
            terminate()
        else:
            calls = getattr(self._pool, "_call_queue", None)
            if calls is not None:  # its feeder may be blocked on a pipe no worker reads: never wait for it
                calls.cancel_join_thread()  # (CPython gh-94777: the pool's exit joined it and hung)
            for process in processes:
                process.terminate()
        _end_half_sent_results(processes, results)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._pool.shutdown(wait=wait, cancel_futures=cancel_futures)


def _end_half_sent_results(processes, results, grace: float = 5.0) -> None:
    """Once the stopped workers are gone, close this process's end of their result pipe.

    A worker stopped while sending its result leaves half a message in the pipe; the pool's manager
    thread, reading it, would wait for the rest for ever (and the interpreter's exit joins that
    thread: the CLI hung after "stopped by signal 15"). With no writer left the read ends (EOF)
    and the manager marks the pool broken and exits."""
    import time

    deadline = time.monotonic() + grace
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.exitcode is None:
            process.kill()
            process.join(1.0)
    writer = getattr(results, "_writer", None)
    if writer is not None and all(p.exitcode is not None for p in processes):
        writer.close()


class DaskExecutor(Executor):
    """A ``dask.distributed.Client`` for ``address`` (``local``: a LocalCluster of ``workers`` processes).

    Local workers are started as non-daemon processes with one thread each and without Dask's
    statistical profiler (it samples the trial's thread every 10 ms, under the GIL: pure-Python
    trials ran slower). Workers started elsewhere need ``DASK_DISTRIBUTED__WORKER__DAEMON=False`` for
    trials that start subprocesses (and are faster with ``DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False``).
    Workers report progress as Dask events on a topic of their own (they may run on other machines).
    """

    def __init__(self, address: str, workers: int | None = None):
        try:
            import dask
            from dask.distributed import Client, LocalCluster
        except ImportError:
            from ..errors import UsageError

            raise UsageError("--scheduler needs Dask: pip install 'agentos-core[dask]'") from None
        self.cluster = None
        with dask.config.set({"distributed.worker.daemon": False, "distributed.worker.profile.enabled": False}):
            if address == "local":
                self.cluster = LocalCluster(n_workers=workers or default_workers(), threads_per_worker=1,
                                            processes=True, dashboard_address=None, host="127.0.0.1")
                self.client = Client(self.cluster)
            else:
                self.client = Client(address, timeout="20s")
        self._attach()

    def _attach(self) -> None:
        """Progress events and an executor on ``self.client`` (a subclass may make the client itself)."""
        import uuid

        from ._progress import DaskChannel, LiveTrials

        self.executor = self.client.get_executor(pure=False)
        self.live, self.topic = LiveTrials(), f"agentos-experiment-{uuid.uuid4().hex}"
        self.client.subscribe_topic(self.topic, self.live.on_dask_event)
        self.channel = DaskChannel(self.topic)

    def slots(self) -> int:
        """How many trials run at once (the cluster's worker threads)."""
        return max(1, sum(self.client.nthreads().values()))

    def submit(self, fn, /, *args, **kwargs):
        return self.executor.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        try:
            self.client.unsubscribe_topic(self.topic)
        except Exception:  # the scheduler is gone already
            pass
        if self.cluster is not None:  # ours: a heartbeat that meets the closing scheduler is no error
            try:
                self.client.run(_quiet_worker_logs)
            except Exception:  # a worker gone already
                pass
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def _quiet_worker_logs() -> None:
    """In a local worker about to be closed: its heartbeat's traceback when the scheduler went first."""
    import logging

    logging.getLogger("distributed.worker").setLevel(logging.CRITICAL)

"""Where trials run: a process pool (default) or a Dask distributed cluster; any Executor works."""

from __future__ import annotations

import os


def default_workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def process_pool(workers: int):
    """Worker processes started by ``forkserver`` (``spawn`` where there is none), one math thread each.

    Their workers are not daemons, so a trial may start subprocesses (vectorised environments).
    """
    import multiprocessing
    import sys
    from concurrent.futures import ProcessPoolExecutor

    from ._trial import init_worker

    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    if main and not os.path.isfile(main) and "fork" in multiprocessing.get_all_start_methods():
        method = "fork"  # a script read from stdin cannot be re-imported by new workers
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(method),
                               initializer=init_worker)


class DaskExecutor:
    """A ``dask.distributed.Client`` for ``address`` (``local``: a LocalCluster of ``workers`` processes).

    Local workers are started as non-daemon processes with one thread each; workers started
    elsewhere need ``DASK_DISTRIBUTED__WORKER__DAEMON=False`` for trials that start subprocesses.
    """

    def __init__(self, address: str, workers: int):
        try:
            import dask
            from dask.distributed import Client, LocalCluster
        except ImportError:
            from ..errors import UsageError

            raise UsageError("--scheduler needs Dask: pip install 'agentos-core[dask]'") from None
        self.cluster = None
        with dask.config.set({"distributed.worker.daemon": False}):
            if address == "local":
                self.cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                            dashboard_address=None, host="127.0.0.1")
                self.client = Client(self.cluster)
            else:
                self.client = Client(address, timeout="20s")
        self.executor = self.client.get_executor(pure=False)

    def slots(self) -> int:
        return max(1, sum(self.client.nthreads().values()))

    def submit(self, fn, *args):
        return self.executor.submit(fn, *args)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def stop_workers(executor) -> None:
    """Stop a process pool's workers now (Ctrl-C): running trials are abandoned, not awaited."""
    terminate = getattr(executor, "terminate_workers", None)  # Python 3.14
    if terminate is not None:
        terminate()
        return
    for process in list((getattr(executor, "_processes", None) or {}).values()):
        process.terminate()

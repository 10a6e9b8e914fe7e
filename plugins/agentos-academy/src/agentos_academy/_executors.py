"""Where agents run: this event loop, a process or thread pool, or a Dask cluster."""

from __future__ import annotations

from concurrent.futures import Executor

from ._errors import AgentStartError


class DaskPool(Executor):
    """A Dask cluster as the ``concurrent.futures.Executor`` that Academy's ``Manager`` launches on.

    Built on the experiments' ``DaskExecutor`` (``local``: a LocalCluster of ``workers`` non-daemon
    processes, one thread each; else the scheduler at ``address``). Each agent holds one worker
    thread while it runs; ``shutdown`` (the manager calls it last) closes the client and cluster.
    """

    def __init__(self, address: str, workers: int):
        from agentos.experiments._executors import DaskExecutor

        self.address = address
        try:
            self.dask = DaskExecutor(address, workers)
        except (OSError, TimeoutError) as exc:  # Dask's own TimeoutError is an OSError
            text = str(exc).strip().splitlines()
            raise AgentStartError(f"cannot reach the Dask scheduler at {address}: "
                                  f"{type(exc).__name__}: {text[0] if text else ''}") from None

    def slots(self) -> int:
        return self.dask.slots()

    def submit(self, fn, /, *args, **kwargs):
        return self.dask.executor.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self.dask.shutdown(wait, cancel_futures=cancel_futures)


def make_executor(exchange: str, executor: str | None, agents: int, scheduler: str | None = None):
    """The executor for ``agents`` agents (``None``: this event loop)."""
    local = exchange.strip() == "local"
    if scheduler is not None:
        if executor not in (None, "dask"):
            raise AgentStartError(f"executor {executor!r} and a Dask scheduler: give one of them")
        if local:
            raise AgentStartError("Dask workers cannot reach the local exchange: use redis:// or http://")
        pool = DaskPool(scheduler.strip(), agents)
        if pool.slots() < agents:
            found = pool.slots()
            pool.shutdown()
            raise AgentStartError(f"the Dask cluster at {scheduler} has {found} worker threads for {agents} "
                                  "agents (each agent holds one while it runs)")
        return pool
    if executor is None:
        executor = "event_loop" if local else "process"
    if executor == "event_loop":
        return None
    if local:
        raise AgentStartError("the local exchange lives in this process: use executor='event_loop'")
    if executor == "process":  # the experiments' pool: Ctrl-C is the caller's, one math thread per agent
        from agentos.experiments._executors import process_pool

        return process_pool(agents)
    if executor == "thread":
        from concurrent.futures import ThreadPoolExecutor

        return ThreadPoolExecutor(max_workers=agents)
    raise AgentStartError(f"unknown executor {executor!r}: use event_loop, process or thread (or a scheduler)")

"""Where agents run: this event loop, a process or thread pool, or a Dask cluster."""

from __future__ import annotations

from ._errors import AgentStartError


def _dask_executor(address: str, workers: int):
    """The experiments' ``DaskExecutor`` (an ``Executor`` Academy's ``Manager`` can launch on and shut
    down; ``local``: a LocalCluster of ``workers`` non-daemon processes, one thread each), or one
    :class:`AgentStartError` line when the scheduler cannot be reached."""
    from agentos.experiments import DaskExecutor

    try:
        return DaskExecutor(address, workers)
    except (OSError, TimeoutError) as exc:  # Dask's own TimeoutError is an OSError
        text = str(exc).strip().splitlines()
        raise AgentStartError(f"cannot reach the Dask scheduler at {address}: "
                              f"{type(exc).__name__}: {text[0] if text else ''}") from None


def make_executor(exchange: str, executor: str | None, agents: int, scheduler: str | None = None):
    """The executor for ``agents`` agents (``None``: this event loop)."""
    local = exchange.strip() == "local"
    if scheduler is not None:
        if executor not in (None, "dask"):
            raise AgentStartError(f"executor {executor!r} and a Dask scheduler: give one of them")
        if local:
            raise AgentStartError("Dask workers cannot reach the local exchange: use redis:// or http://")
        pool = _dask_executor(scheduler.strip(), agents)  # each agent holds one worker thread while it runs
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
        from agentos.experiments import process_pool

        return process_pool(agents)
    if executor == "thread":
        from concurrent.futures import ThreadPoolExecutor

        return ThreadPoolExecutor(max_workers=agents)
    raise AgentStartError(f"unknown executor {executor!r}: use event_loop, process or thread (or a scheduler)")

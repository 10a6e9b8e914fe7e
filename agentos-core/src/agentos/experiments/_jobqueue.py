"""Trials on a batch cluster: Dask workers submitted as Slurm, PBS, SGE or LSF jobs by dask-jobqueue.

The client starts a Dask scheduler (TLS with temporary certificates: only the jobs it submits can
join) and submits one job per worker, ``min(jobs for the trials, max-jobs)`` of them; each job runs
one Dask worker with ``cores`` threads (trials at once). A job that ends early (cancelled, its
allocation over) is submitted again while trials remain; the scheduler moves its trial to another
worker. ``shutdown`` cancels every job (Ctrl-C and SIGTERM included); workers whose client vanished
without a word (``SIGKILL``) exit after ``DEATH_TIMEOUT`` seconds, which ends their jobs.
"""

from __future__ import annotations

import math
import os
import sys

from ._cluster_options import SYSTEMS, check, walltime_seconds
from ._executors import DaskExecutor

CLASSES = {"slurm": "SLURMCluster", "pbs": "PBSCluster", "sge": "SGECluster", "lsf": "LSFCluster"}
DEFAULTS = {"cores": 1, "memory": "2GB", "walltime": "01:00:00", "max-jobs": 100}
#: Seconds a worker waits for a scheduler that went away before it exits (and its job ends).
DEATH_TIMEOUT = 30
#: In every job script: workers may start processes (vectorised environments); no profiler sampling.
WORKER_ENVIRONMENT = ["export DASK_DISTRIBUTED__WORKER__DAEMON=False",
                      "export DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False"]


def _joined_plugin(names: set):
    """A scheduler plugin that records the name of every worker that joins into ``names``: a job cancelled
    a second after its worker joined was missed by a poll every two seconds, and never replaced."""
    from distributed.diagnostics.plugin import SchedulerPlugin

    class Joined(SchedulerPlugin):
        def add_worker(self, scheduler, worker: str) -> None:
            state = scheduler.workers.get(worker)
            if state is not None:
                names.add(state.name)

    return Joined()


def _cluster_class(system: str):
    from ..errors import UsageError

    if system not in SYSTEMS:
        raise UsageError(f"--cluster must be one of {', '.join(SYSTEMS)}, not {system!r}")
    import signal
    import threading

    main = threading.current_thread() is threading.main_thread()
    handler = signal.getsignal(signal.SIGINT) if main else None
    try:
        import dask_jobqueue
    except ImportError:
        raise UsageError("--cluster needs dask-jobqueue: pip install 'agentos-core[cluster]'") from None
    finally:
        if main and handler is not None:  # its runner module makes Ctrl-C exit at once: Ctrl-C stays ours
            signal.signal(signal.SIGINT, handler)
    return getattr(dask_jobqueue, CLASSES[system])


def _walltime(system: str, text: str) -> str:
    minutes = math.ceil(walltime_seconds(text) / 60)
    if system == "lsf":  # bsub -W takes [HH:]MM
        return f"{minutes // 60:02d}:{minutes % 60:02d}"
    seconds = walltime_seconds(text)
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def cluster_arguments(system: str, options: dict, *, folder: str, setup=()) -> dict:
    """The keyword arguments of dask-jobqueue's cluster class for ``system`` from checked ``options``.
    ``folder`` holds the job logs and the workers' temporary TLS certificates (a shared disk)."""
    options = DEFAULTS | check(options) | {"setup": [*_as_list(options.get("setup")), *setup]}
    check({"setup": options["setup"]}, own=True)
    python = options.get("python") or (os.path.join(options["venv"], "bin", "python") if options.get("venv")
                                       else sys.executable)
    kwargs = {
        "cores": options["cores"], "processes": 1, "memory": options["memory"],
        "walltime": _walltime(system, options["walltime"]), "job_name": "agentos",
        "job_extra_directives": _as_list(options.get("directives")),
        "job_script_prologue": [*WORKER_ENVIRONMENT, *options["setup"]],
        "python": python, "death_timeout": DEATH_TIMEOUT, "log_directory": os.path.join(folder, "logs"),
        "shared_temp_directory": folder, "security": True,
        "scheduler_options": {"dashboard": False, **({"interface": options["interface"]}
                                                     if options.get("interface") else {})},
    }
    if options.get("interface"):
        kwargs["interface"] = options["interface"]
    if options.get("partition"):
        kwargs["queue"] = options["partition"]
    if options.get("account"):
        kwargs["account" if system in ("slurm", "pbs") else "project"] = options["account"]
    return kwargs


def _as_list(value) -> list:
    return [value] if isinstance(value, str) else list(value or [])


def job_script(system: str, options: dict | None = None, *, folder: str = ".", setup=()) -> str:
    """The job script ``--cluster system`` would submit for ``options`` (a ``[cluster]`` section's
    keys); starts and stops a scheduler on this machine to write it."""
    import dask

    cls = _cluster_class(system)
    with dask.config.set({"distributed.comm.timeouts.connect": "20s"}):
        cluster = cls(**cluster_arguments(system, options or {}, folder=_jobs_folder(folder), setup=setup))
    try:
        return cluster.job_script()
    finally:
        cluster.close()


def _jobs_folder(folder: str) -> str:
    path = os.path.join(os.path.abspath(folder), ".jobs")
    os.makedirs(os.path.join(path, "logs"), mode=0o700, exist_ok=True)
    return path


class JobQueueExecutor(DaskExecutor):
    """Dask workers as batch jobs of ``system`` (``slurm``, ``pbs``, ``sge``, ``lsf``) for ``trials`` trials.

    ``options`` are a ``[cluster]`` section's keys (``partition``, ``cores``, ``memory``...), ``folder``
    a folder on a disk the jobs share (job logs, TLS certificates: ``folder/.jobs``), ``setup`` the
    user's own lines run before each worker starts.
    """

    def __init__(self, system: str, options: dict | None = None, *, trials: int | None = None,
                 folder: str = ".", setup=()):
        from dask.distributed import Client

        cls = _cluster_class(system)
        kwargs = cluster_arguments(system, options or {}, folder=_jobs_folder(folder), setup=setup)
        limit = (DEFAULTS | check(options or {}))["max-jobs"]
        self.system, self.cores = system, kwargs["cores"]
        self.jobs = max(1, min(math.ceil((trials or limit * self.cores) / self.cores), limit))
        self.replaced, self.max_replaced, self._seen, self._closing = 0, 3 * self.jobs + 3, set(), False
        self.cluster = cls(**kwargs)
        try:
            self.cluster.scale(jobs=self.jobs)
            self.client = Client(self.cluster)
            self._attach()
            self._start_tending()
        except BaseException:
            self.cluster.close()
            raise

    def slots(self) -> int:
        """Trials at once once every job runs (jobs × cores), whether or not they have started yet."""
        return self.jobs * self.cores

    def job_ids(self) -> list[str]:
        """The batch system's ids of the jobs submitted and not yet ended."""
        return [job.job_id for job in self.cluster.workers.values() if getattr(job, "job_id", None)]

    def _start_tending(self) -> None:
        from tornado.ioloop import PeriodicCallback

        scheduler = getattr(self.cluster, "scheduler", None)
        if hasattr(scheduler, "add_plugin"):  # every worker that joins, however soon its job ends
            self.cluster.loop.add_callback(scheduler.add_plugin, _joined_plugin(self._seen), name="agentos-joined")
        self._tender = PeriodicCallback(self._replace_lost_jobs, 2000)
        self.cluster.loop.add_callback(self._tender.start)

    def _present(self) -> set:
        scheduler = getattr(self.cluster, "scheduler", None)
        if hasattr(scheduler, "workers"):  # the scheduler's own state (it runs in this process)
            return {worker.name for worker in list(scheduler.workers.values())}
        return {info.get("name") for info in self.cluster.scheduler_info.get("workers", {}).values()}

    def _replace_lost_jobs(self) -> None:
        """Submit again the jobs that ended (cancelled, out of time) while trials may still need them."""
        present = self._present()
        self._seen |= present  # a job's worker that joined and left is lost (a pending job never joined)
        lost = [name for name in self.cluster.worker_spec if name in self._seen and name not in present]
        if not lost or self._closing or self.replaced >= self.max_replaced:
            return
        for name in lost:  # forgotten, not closed: cancelling a job that has ended is an error
            del self.cluster.worker_spec[name]
            self.cluster.workers.pop(name, None)
        self.replaced += len(lost)
        self.cluster._i = max(self.cluster._i, self.jobs + self.replaced)  # new names: a late "worker left"
        self.cluster.scale(jobs=self.jobs)  # for the old name must not close the new job

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Cancel every job (``scancel``, ``qdel``, ``bkill``) and stop the scheduler."""
        self._closing = True  # the workers leaving now are not to be replaced
        tender = getattr(self, "_tender", None)
        if tender is not None:
            self.cluster.loop.add_callback(tender.stop)
        super().shutdown(wait, cancel_futures=cancel_futures)
        for key in ("ca_file", "cert", "key"):  # the workers' TLS files go now, not when collected
            handle = getattr(self.cluster, f"_job_{key}", None)
            if handle is not None:
                try:
                    handle.close()
                except FileNotFoundError:
                    pass

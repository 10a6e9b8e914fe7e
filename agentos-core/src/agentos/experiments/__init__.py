"""Experiments: agents × environments × seeds × settings, on a process pool or a Dask cluster.

Public API (stable, for scripts and plugins): :func:`run_experiment`, :func:`read_experiment`,
:func:`plan` and :class:`Trial`; what the experiment hooks see, :class:`ExperimentInfo`; the results,
:class:`ExperimentResult`; the executors trials run on,
:class:`ProcessPool`, :class:`DaskExecutor`, :class:`JobQueueExecutor` (batch jobs: Slurm, PBS, SGE,
LSF; :func:`job_script` shows what it submits) and :func:`process_pool` (any ``concurrent.futures.Executor``
works too); presets, :class:`Preset`, :func:`load_preset` and :func:`agent_ini_text`.
"""

from ..core._presets import Preset, agent_ini_text, load_preset
from ._executors import DaskExecutor, ProcessPool, process_pool
from ._experiment import ExperimentInfo, run_experiment
from ._jobqueue import JobQueueExecutor, job_script
from ._plan import Trial, plan, read_experiment
from ._summary import ExperimentResult

__all__ = ["DaskExecutor", "ExperimentInfo", "ExperimentResult", "JobQueueExecutor", "Preset", "ProcessPool", "Trial",
           "agent_ini_text", "job_script", "load_preset", "plan", "process_pool", "read_experiment", "run_experiment"]

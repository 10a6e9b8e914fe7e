"""Experiments: agents × environments × seeds × settings, on a process pool or a Dask cluster."""

from ._executors import DaskExecutor, ProcessPool
from ._experiment import run_experiment
from ._plan import Trial, plan, read_experiment
from ._presets import Preset, load_preset
from ._summary import ExperimentResult

__all__ = ["DaskExecutor", "ExperimentResult", "Preset", "ProcessPool", "Trial", "load_preset", "plan",
           "read_experiment", "run_experiment"]

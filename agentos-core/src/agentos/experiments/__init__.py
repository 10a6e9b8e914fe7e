"""Experiments: agents × environments × seeds × settings, on a process pool or a Dask cluster."""

from ._experiment import run_experiment
from ._plan import Trial, plan, read_experiment
from ._presets import Preset, load_preset
from ._summary import ExperimentResult

__all__ = ["ExperimentResult", "Preset", "Trial", "load_preset", "plan", "read_experiment", "run_experiment"]

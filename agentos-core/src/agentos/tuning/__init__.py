"""Hyperparameter search over an experiment file's ``[search]`` space with Optuna (``agentos tune``).

Public API: :func:`tune` (run or resume a study), :func:`read_search` (the space, checked),
:func:`best_trials`, :func:`plot_study` and :func:`export_agent_ini` (what ``tune show``/``export`` do).
Optuna is imported only when one of them runs (``pip install 'agentos-core[tune]'``).
"""

from ._report import best_trials, export_agent_ini, plot_study
from ._space import Param, SearchSpace, read_search
from ._study import tune

__all__ = ["Param", "SearchSpace", "best_trials", "export_agent_ini", "plot_study", "read_search", "tune"]

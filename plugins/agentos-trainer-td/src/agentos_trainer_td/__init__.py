"""TD(0) afterstate learning for the ``ntuple`` 2048 policy, whole games per compiled call."""

from agentos_trainer_td._trainer import TDTrainer

__all__ = ["TDTrainer"]
__version__ = "1.5.3"

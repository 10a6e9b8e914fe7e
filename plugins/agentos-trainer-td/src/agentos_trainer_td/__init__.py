"""TD(0) afterstate learning for the ``ntuple`` 2048 policy, whole games per compiled call."""

from agentos_trainer_td._trainer import TDTrainer

__all__ = ["TDTrainer"]


def __getattr__(name: str):
    if name == "__version__":  # the installed distribution's (a constant here went stale)
        from importlib.metadata import version

        return version("agentos-trainer-td")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

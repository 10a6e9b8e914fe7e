"""A tune as the experiment hooks see it: the study, then each Optuna trial nested in it, whose seeds run
with the trial's context (so a tracker nests them: study > trial > seed runs; see ``hookspecs``)."""

from __future__ import annotations

from dataclasses import dataclass, field

STATUS = {"COMPLETE": "finished", "PRUNED": "pruned", "FAIL": "failed", "RUNNING": "interrupted"}


@dataclass
class TuneResult:
    """What ``agentos_experiment_end`` gets for a study or a tune-trial."""

    trials: list[dict] = field(default_factory=list)
    value: float | None = None
    state: str | None = None


def _hook():
    from ..plugins import get_plugin_manager

    return get_plugin_manager().hook


def study_started(name: str, folder: str):
    from ..experiments import ExperimentInfo

    info = ExperimentInfo(name, folder, [], [], kind="study")
    _hook().agentos_experiment_start(experiment=info)
    return info


def study_ended(info, study) -> None:
    trials = [{"number": t.number, "status": STATUS.get(t.state.name, "failed")}
              for t in study.get_trials(deepcopy=False)]
    _hook().agentos_experiment_end(experiment=info, result=TuneResult(trials))


def trial_started(study_info, number: int, params: dict):
    from ..experiments import ExperimentInfo

    info = ExperimentInfo(f"trial {number}", f"{study_info.folder}#trial-{number}", [], [], kind="tune-trial",
                          parent=study_info.context, params=params)
    _hook().agentos_experiment_start(experiment=info)
    return info


def trial_ended(info, state: str, value: float | None, records: list[dict]) -> None:
    _hook().agentos_experiment_end(experiment=info, result=TuneResult(records, value, state))

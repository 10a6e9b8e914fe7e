"""What a tune found: the best trials (IQM of their seeds and its interval), importances, plots, agent.ini."""

from __future__ import annotations

import os

from ..errors import UsageError
from ._storage import _optuna, open_study, read_record


def _finished(study) -> list:
    optuna = _optuna()
    return study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))


def best_trials(folder: str, storage: str | None = None, *, top: int = 5) -> dict:
    """``{direction, counts, best: [{number, value, iqm, interval, seeds, params}], importances}``."""
    from .. import stats

    study = open_study(folder, storage)
    finished = _finished(study)
    reverse = study.direction.name == "MAXIMIZE"
    ranked = sorted(finished, key=lambda t: t.value, reverse=reverse)[:top]
    best = []
    for trial in ranked:
        scores = [float(s) for s in trial.user_attrs.get("scores") or [] if isinstance(s, (int, float))]
        summary = stats.summarize(scores) if scores else {"iqm": None, "interval": None, "n": 0}
        best.append({"number": trial.number, "value": trial.value, "iqm": summary["iqm"],
                     "interval": summary["interval"], "seeds": summary["n"], "params": dict(trial.params),
                     "folder": str(trial.user_attrs.get("folder", ""))})
    counts: dict = {}
    for trial in study.get_trials(deepcopy=False):
        counts[trial.state.name.lower()] = counts.get(trial.state.name.lower(), 0) + 1
    return {"direction": study.direction.name.lower(), "counts": counts, "best": best,
            "importances": importances(study) if len(finished) >= 2 else {}}


def importances(study) -> dict:
    """Each searched setting's importance (Optuna's default evaluator), {} when undefined."""
    import warnings

    optuna = _optuna()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "few trials in a regime": the numbers are shown as they are
            return {k: float(v) for k, v in optuna.importance.get_param_importances(study).items()}
    except (ValueError, RuntimeError):  # e.g. one setting varied, or every trial scored the same
        return {}


def plot_study(folder: str, storage: str | None = None) -> list[str]:
    """``tune-history.png`` (optimization history) and ``tune-importances.png`` in ``folder``; their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import optuna.visualization.matplotlib as plots

    study = open_study(folder, storage)
    written = []
    jobs = [("tune-history.png", plots.plot_optimization_history)]
    if len(_finished(study)) >= 2 and importances(study):
        jobs.append(("tune-importances.png", plots.plot_param_importances))
    for name, plot in jobs:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Optuna marks its matplotlib plots experimental
            axes = plot(study)
        path = os.path.join(folder, name)
        axes.figure.savefig(path, dpi=100, bbox_inches="tight")
        plt.close(axes.figure)
        written.append(path)
    return written


def export_agent_ini(folder: str, out: str, storage: str | None = None) -> dict:
    """Write the best trial's settings (with the file's fixed ones) as an agent.ini at ``out``."""
    from ..config import atomic_write
    from ..experiments._plan import _agent_source

    record = read_record(folder)
    study = open_study(folder, storage)
    if not _finished(study):
        raise UsageError(f"{folder}: no finished trial yet")
    settings = dict(record["settings"]) | dict(study.best_trial.params)
    text = _agent_source(record["agent"], str(record["environments"][0]), settings)[0]
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    atomic_write(out, text)
    return settings

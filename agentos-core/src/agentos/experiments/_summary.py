"""The summary of an experiment: per trial and per agent × environment (mean ± std over seeds, and the
IQM of the test returns with its 95% stratified-bootstrap interval, see :mod:`agentos.stats`)."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import statistics

from ..config import atomic_write
from ._records import load_trials
from ._trial_data import agent_label, agent_labels, environment_label, shown_settings, training_returns

TABLE_COLUMNS = ("agent", "environment", "settings", "seeds", "failed", "train_return_mean", "train_return_std",
                 "test_return_mean", "test_return_std", "test_return_iqm", "test_return_ci_low", "test_return_ci_high",
                 "steps_per_second", "wall_seconds")
TOO_FEW = "too few seeds"
"""What a table says in place of an interval when the seeds are fewer than ``agentos.stats.MIN_FOR_INTERVAL``."""
CONFIDENCE = 0.95
TRIAL_COLUMNS = ("id", "agent", "environment", "seed", "settings", "status", "error", "attempts",
                 "train_return_last100", "test_return", "steps", "steps_per_second", "seconds", "run_dir",
                 "win_rate", "elo")


def _last100(trial: dict) -> float | None:
    """The mean of the last 100 training returns: from the worker's summary (older trials: returns.csv)."""
    last100 = (trial.get("train") or {}).get("last100_mean")
    if isinstance(last100, (int, float)) and not math.isnan(last100):
        return float(last100)
    returns = training_returns(trial)
    return statistics.fmean(returns[-100:]) if returns else None


def trial_metrics(trial: dict) -> dict:
    """The environment's episode metrics of a trial: of its test episodes, else of its training."""
    for phase in ("test", "train"):
        metrics = (trial.get(phase) or {}).get("metrics")
        if isinstance(metrics, dict) and metrics:
            return {str(name): entry for name, entry in metrics.items() if isinstance(entry, dict)}
    return {}


def _trial_row(trial: dict) -> dict:
    train, test = trial.get("train") or {}, trial.get("test") or {}
    steps = (train.get("steps") or 0) + (test.get("steps") or 0)
    busy = (train.get("seconds") or 0) + (test.get("seconds") or 0)
    return {
        "id": trial["id"], "agent": agent_label(trial["agent"]), "environment": environment_label(trial),
        "seed": trial["seed"],
        "settings": json.dumps(shown_settings(trial), sort_keys=True), "status": trial["status"],
        "error": trial.get("error", ""), "attempts": trial.get("attempts", 1),
        "train_return_last100": _last100(trial),
        "test_return": test.get("mean_return"), "steps": steps,
        "steps_per_second": steps / busy if busy else None, "seconds": trial.get("seconds"),
        "run_dir": trial.get("run_dir", ""), "metrics": trial_metrics(trial),
        "win_rate": (trial.get("arena") or {}).get("win_rate"), "elo": (trial.get("arena") or {}).get("elo"),
    }


def _mean_std(values) -> tuple[float | None, float | None]:
    values = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not values:
        return None, None
    return statistics.fmean(values), statistics.pstdev(values) if len(values) > 1 else 0.0


def _aggregate_metrics(rows: list[dict]) -> dict:
    """name -> {kind, mean, std} over the rows (seeds) of the per-trial metric means."""
    out: dict = {}
    for row in rows:
        for name, entry in (row.get("metrics") or {}).items():
            out.setdefault(name, {"kind": entry.get("kind"), "values": []})["values"].append(entry.get("mean"))
    for entry in out.values():
        entry["mean"], entry["std"] = _mean_std(entry.pop("values"))
    return out


def metric_columns(table: list[dict]) -> list[str]:
    """The CSV columns of the episode metrics in ``table`` (``<name>_mean``, ``<name>_std``), in first-seen order."""
    names = dict.fromkeys(name for row in table for name in (row.get("metrics") or {}))
    return [f"{name}_{stat}" for name in names for stat in ("mean", "std")]


def test_statistics(rows: list[dict]) -> dict:
    """The IQM of the test returns over seeds and its interval (``test_return_ci_low``/``_high``: numbers,
    :data:`TOO_FEW` when the seeds are too few, ``None`` when there are no test returns)."""
    from ..stats import summarize  # numpy: only when a table is made

    values = [r["test_return"] for r in rows if isinstance(r["test_return"], (int, float))
              and math.isfinite(r["test_return"])]
    summary = summarize(values, confidence=CONFIDENCE)
    low, high = summary["interval"] or ((TOO_FEW, TOO_FEW) if values else (None, None))
    return {"test_return_iqm": summary["iqm"], "test_return_ci_low": low, "test_return_ci_high": high,
            "test_return_interval": summary["interval"], "confidence": CONFIDENCE}


def aggregate(rows: list[dict]) -> list[dict]:
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault((row["agent"], row["environment"], row["settings"]), []).append(row)
    labels = agent_labels(row["agent"] for row in rows)
    table = []
    for (agent, env, settings), members in groups.items():
        ok = [r for r in members if r["status"] == "finished"]
        train = _mean_std(r["train_return_last100"] for r in ok)
        test = _mean_std(r["test_return"] for r in ok)
        metrics = _aggregate_metrics(ok)
        table.append({"agent": labels[agent], "environment": env, "settings": settings, "seeds": len(ok),
                      "metrics": metrics,
                      **{f"{name}_{stat}": entry[stat] for name, entry in metrics.items() for stat in ("mean", "std")},
                      "failed": len(members) - len(ok), "train_return_mean": train[0], "train_return_std": train[1],
                      "test_return_mean": test[0], "test_return_std": test[1], **test_statistics(ok),
                      "steps_per_second": _mean_std(r["steps_per_second"] for r in ok)[0],
                      "wall_seconds": sum(r["seconds"] or 0 for r in ok)})
        if any(r.get("elo") is not None for r in ok):  # multi-agent trials against a panel (``_panel``)
            win_rate, elo = _mean_std(r.get("win_rate") for r in ok), _mean_std(r.get("elo") for r in ok)
            table[-1].update(win_rate_mean=win_rate[0], win_rate_std=win_rate[1], elo_mean=elo[0], elo_std=elo[1])
    return table


#: The table's columns of multi-agent trials (win rate against the panel, Elo on the panel's scale).
ARENA_COLUMNS = ("win_rate_mean", "win_rate_std", "elo_mean", "elo_std")


def arena_columns(table: list[dict]) -> list[str]:
    """:data:`ARENA_COLUMNS` when a row of ``table`` has them, else none."""
    return list(ARENA_COLUMNS) if any("elo_mean" in row for row in table) else []


def _csv(rows: list[dict], columns) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


class ExperimentResult:
    """What an experiment produced: ``trials`` (one dict each) and ``table()`` (per agent × environment)."""

    def __init__(self, folder: str, trials: list[dict], seconds: float = 0.0):
        self.folder, self.trials, self.seconds = folder, trials, seconds

    def table(self) -> list[dict]:
        return aggregate([_trial_row(t) for t in self.trials if "status" in t])

    def compare(self, a: str, b: str) -> dict:
        """The probability of improvement of agent ``a`` over agent ``b`` (their labels in :meth:`table`) on
        test returns over seeds, per environment and overall, with 95% intervals (``experiment compare``)."""
        from ._scores import compare

        return compare(self.trials, a, b)

    def failed(self) -> list[dict]:
        return [t for t in self.trials if t.get("status") == "failed"]

    def plot(self, path: str | None = None, *, x: str = "episodes") -> str:
        from ._plot import plot_experiment

        return plot_experiment(self.trials, path or os.path.join(self.folder, "returns100.png"), x=x)

    @classmethod
    def load(cls, folder: str) -> ExperimentResult:
        """The well-formed trial records of an experiment folder (finished or failed), in the order of
        the experiment's plan (``experiment.json``), as ``run`` lists them; a malformed record is left
        out with one warning line naming its file (:func:`load_experiment` also says how many)."""
        return load_experiment(folder)[0]


def load_experiment(folder: str) -> tuple[ExperimentResult, int]:
    """(``ExperimentResult`` of the well-formed records in ``folder``, in the plan's order; how many
    records were left out)."""
    from ..errors import UsageError

    folder = os.path.abspath(folder)
    trials_dir = os.path.join(folder, "trials")
    if not os.path.isdir(trials_dir) or os.path.islink(trials_dir):
        raise UsageError(f"no experiment in {folder} (agentos experiment run FILE creates one)")
    trials, skipped = load_trials(folder)
    order = _planned_order(folder)
    trials.sort(key=lambda t: (order.get(t.get("id"), len(order)), str(t.get("id"))))
    return ExperimentResult(folder, trials), skipped


def _planned_order(folder: str) -> dict[str, int]:
    """trial id -> its place in the plan that ``experiment.json`` lists (empty when unreadable)."""
    try:
        with open(os.path.join(folder, "experiment.json"), encoding="utf-8") as f:
            planned = json.load(f).get("trials")
        return {str(t["id"]): i for i, t in enumerate(planned) if isinstance(t, dict) and "id" in t}
    except (OSError, ValueError, AttributeError, TypeError):
        return {}


def write_summary(folder: str, trials, outcomes: dict, seconds: float) -> ExperimentResult:
    """summary.csv (per agent × environment), trials.csv and summary.json in ``folder``."""
    done = [outcomes[t.id] for t in trials if t.id in outcomes]
    result = ExperimentResult(folder, done, seconds)
    rows = [_trial_row(t) for t in done]
    table = aggregate(rows)
    columns = TABLE_COLUMNS + tuple(arena_columns(table)) + tuple(metric_columns(table))
    atomic_write(os.path.join(folder, "summary.csv"), _csv(table, columns))
    atomic_write(os.path.join(folder, "trials.csv"), _csv(rows, TRIAL_COLUMNS))
    atomic_write(os.path.join(folder, "summary.json"), json.dumps(
        {"total": len(trials), "done": len(done), "seconds": seconds, "table": table, "trials": rows},
        indent=1, default=str))
    return result


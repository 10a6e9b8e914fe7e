"""Pruning during training: the worker that trains a trial reports to the study and asks its pruner.

``run_experiment(..., watch=IntermediateReports(...))`` sends this object to the worker, which calls it
with the trial; at ``reports`` evenly spaced points of the training budget (episodes, or steps) the
worker reports the mean return of its last 100 episodes to the study (Optuna's documented way of
distributed pruning: each worker opens the study's storage) and stops training when the pruner says so.

The steps of a trial are numbered across its seeds: seed ``i``'s checkpoints are
``i * (reports + 1) + k`` (k < reports) and its final score, reported by the driver, ``i * (reports + 1) +
reports``. With ``median-time`` the steps are tenths of a second of the trial's training (across its
seeds), a report about every second and, by the driver, each seed's last-100 training mean at its end
(the same measure: a test score is not), and the pruner compares trials at equal time. A worker
that cannot reach the storage (a journal file on another machine's disk) trains on unwatched: the driver
still prunes between seeds.
"""

from __future__ import annotations

import collections
import math
import os
import statistics
import time

TICKS = 10  #: ``median-time``'s steps a second


class IntermediateReports:
    """Picklable: the study's storage (a journal path or a database URL), the trial, the checkpoints."""

    def __init__(self, storage: str, study: str, trial: int, *, step0: int, reports: int,
                 episodes: int | None, steps: int | None, pruner: str = "median"):
        self.storage, self.study, self.trial, self.step0 = storage, study, trial, step0
        self.reports, self.episodes, self.steps, self.pruner = reports, episodes, steps, pruner

    def __call__(self, trial: dict):
        if self.reports < 1:
            return None
        try:
            handle = _open_trial(self.storage, self.study, self.trial, self.pruner)
        except Exception:  # the storage is not reachable from this worker: no pruning during training
            return None
        return _TimeChecker(handle, self) if self.pruner == "median-time" else _Checker(handle, self)


def make_pruner(optuna, name: str):
    """The study's pruner by its ``[tune] pruner`` name (the driver's and, in their study, the workers')."""
    if name == "median":  # step = seeds done; compare from the first seed on, once 2 trials finished
        return optuna.pruners.MedianPruner(n_startup_trials=2, n_warmup_steps=0)
    if name == "median-time":
        return _time_median(optuna)
    if name == "hyperband":
        return optuna.pruners.HyperbandPruner(min_resource=1)
    if name == "successive-halving":
        return optuna.pruners.SuccessiveHalvingPruner(min_resource=1)
    return optuna.pruners.NopPruner()


def _open_trial(storage: str, study_name: str, number: int, pruner: str):
    import optuna  # (the driver that sent this checked it is installed)

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if "://" not in storage:
        if not os.path.isfile(storage):  # another machine's disk: JournalFileBackend would make a new file
            raise FileNotFoundError(storage)
        from optuna.storages.journal import JournalFileBackend, JournalStorage

        storage = JournalStorage(JournalFileBackend(storage))
    study = optuna.load_study(study_name=study_name, storage=storage, pruner=make_pruner(optuna, pruner))
    frozen = next(t for t in study.get_trials(deepcopy=False) if t.number == number)
    return optuna.trial.Trial(study, frozen._trial_id)


class _Checker:
    def __init__(self, handle, spec: IntermediateReports):
        self.handle, self.spec = handle, spec
        self.returns: collections.deque = collections.deque(maxlen=100)
        self.episodes = self.steps = 0
        self.done = 0  # checkpoints reported
        budget = spec.episodes if spec.episodes is not None else spec.steps
        self.marks = [budget * (k + 1) // (spec.reports + 1) for k in range(spec.reports)]

    def __call__(self, run, result) -> str | None:
        self.episodes += 1
        self.steps += int(result.length)
        self.returns.append(float(result.episode_return))
        used = self.episodes if self.spec.episodes is not None else self.steps
        word = None
        while self.done < len(self.marks) and used >= self.marks[self.done] and word is None:
            try:
                word = _report(self.handle, self.returns, self.spec.step0 + self.done)
            except Exception:  # the storage went away: training goes on, the driver decides between seeds
                self.done = len(self.marks)
                return None
            self.done += 1
        return word


def _report(handle, returns, step: int) -> str | None:
    """Report the mean of ``returns`` at ``step`` and ask the pruner: "pruned" or None (raises when the
    storage went away)."""
    value = sum(returns) / len(returns)
    handle.report(value if math.isfinite(value) else float("nan"), step)
    return "pruned" if handle.should_prune() else None


class _TimeChecker:
    """``median-time``'s worker side: the running mean return about every second, at its tenth of a second."""

    def __init__(self, handle, spec: IntermediateReports):
        self.handle, self.spec = handle, spec
        self.returns: collections.deque = collections.deque(maxlen=100)
        self.started = self.last = time.monotonic()

    def __call__(self, run, result) -> str | None:
        self.returns.append(float(result.episode_return))
        now = time.monotonic()
        if now - self.last < 1.0:
            return None
        self.last = now
        try:
            return _report(self.handle, self.returns, self.spec.step0 + int((now - self.started) * TICKS))
        except Exception:  # the storage went away: training goes on, the driver decides between seeds
            self.last = math.inf
            return None


def value_by(values: dict, step: int) -> float | None:
    """What a trial had reached by ``step``: its report at the latest step not after it (None: none yet)."""
    reached = [s for s in values if s <= step]
    return values[max(reached)] if reached else None


def _time_median(optuna):
    class TimeMedianPruner(optuna.pruners.BasePruner):
        """The median rule at equal training time (steps: tenths of a second of a trial's training).

        A trial is pruned when its latest report is worse than the median of what the finished trials
        had reached by the same time (one that finished sooner counts with its last report), once 2
        trials finished and it trained a third of their median time. So a setting that learns slowly
        per second is stopped even when it would end well: cheap trials are preferred, as with time
        as Hyperband's resource.
        """

        def prune(self, study, trial) -> bool:
            return _time_median_prunes(optuna, study, trial)

    return TimeMedianPruner()


def _time_median_prunes(optuna, study, trial) -> bool:
    step = trial.last_step
    if step is None:
        return False
    value = trial.intermediate_values[step]
    if math.isnan(value):
        return True
    finished = [t for t in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
                if t.intermediate_values]
    if len(finished) < 2 or step < statistics.median(max(t.intermediate_values) for t in finished) / 3:
        return False  # warming up: a third of a finished trial's time (rl-zoo: a third of its evaluations)
    reached = [v for v in (value_by(t.intermediate_values, step) for t in finished) if v is not None]
    reached = [v for v in reached if not math.isnan(v)]
    if not reached:
        return False
    median = statistics.median(reached)
    maximize = study.direction == optuna.study.StudyDirection.MAXIMIZE
    return value < median if maximize else value > median

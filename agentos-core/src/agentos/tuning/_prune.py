"""Pruning during training: the worker that trains a trial reports to the study and asks its pruner.

``run_experiment(..., watch=IntermediateReports(...))`` sends this object to the worker, which calls it
with the trial; at ``reports`` evenly spaced points of the training budget (episodes, or steps) the
worker reports the mean return of its last 100 episodes to the study (Optuna's documented way of
distributed pruning: each worker opens the study's storage) and stops training when the pruner says so.

The steps of a trial are numbered across its seeds: seed ``i``'s checkpoints are
``i * (reports + 1) + k`` (k < reports) and its final score, reported by the driver, ``i * (reports + 1) +
reports``. A worker that cannot reach the storage (a journal file on another machine's disk) trains on
unwatched: the driver still prunes between seeds.
"""

from __future__ import annotations

import collections
import math
import os


class IntermediateReports:
    """Picklable: the study's storage (a journal path or a database URL), the trial, the checkpoints."""

    def __init__(self, storage: str, study: str, trial: int, *, step0: int, reports: int,
                 episodes: int | None, steps: int | None):
        self.storage, self.study, self.trial, self.step0 = storage, study, trial, step0
        self.reports, self.episodes, self.steps = reports, episodes, steps

    def __call__(self, trial: dict):
        if self.reports < 1:
            return None
        try:
            handle = _open_trial(self.storage, self.study, self.trial)
        except Exception:  # the storage is not reachable from this worker: no pruning during training
            return None
        return _Checker(handle, self)


def _open_trial(storage: str, study_name: str, number: int):
    import optuna  # (the driver that sent this checked it is installed)

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if "://" not in storage:
        if not os.path.isfile(storage):  # another machine's disk: JournalFileBackend would make a new file
            raise FileNotFoundError(storage)
        from optuna.storages.journal import JournalFileBackend, JournalStorage

        storage = JournalStorage(JournalFileBackend(storage))
    study = optuna.load_study(study_name=study_name, storage=storage)
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
            value = sum(self.returns) / len(self.returns)
            try:
                self.handle.report(value if math.isfinite(value) else float("nan"), self.spec.step0 + self.done)
                word = "pruned" if self.handle.should_prune() else None
            except Exception:  # the storage went away: training goes on, the driver decides between seeds
                self.done = len(self.marks)
                return None
            self.done += 1
        return word
